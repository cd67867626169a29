/**
 * A minimal browser for HTTP-level tests of the admin interface: keeps cookies, posts forms,
 * does not follow redirects (tests look at them), and reads the CSRF token from pages.
 */
import * as assert from 'uvu/assert';
import type { TestService } from '../../support/service.ts';

export interface Page {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly location: string | null;
}

/** Decodes the five entities the templates write, for comparing page text with values. */
export const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&amp;/g, '&');

export class Client {
  readonly cookies = new Map<string, string>();
  constructor(readonly svc: TestService) {}

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(path: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    if (this.cookies.size && !headers.has('Cookie')) headers.set('Cookie', this.cookieHeader());
    const res = await fetch(`${this.svc.url}${path}`, { ...init, headers, redirect: 'manual' });
    this.remember(res);
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('location') };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.request(path, { headers });
  }

  /** Posts a form; fields given as pairs so a name may repeat (checkbox groups). */
  post(path: string, fields: Record<string, string> | [string, string][], headers: Record<string, string> = {}): Promise<Page> {
    return this.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields as Record<string, string>).toString(),
    });
  }

  /** Signs in through the form; returns the session's CSRF token. */
  async signIn(token = this.svc.adminToken, next = '/admin/rest-apis'): Promise<string> {
    const form = await this.get('/admin/sign-in');
    const reply = await this.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token, next });
    assert.is(reply.status, 303, `sign-in: ${reply.status} ${reply.text.slice(0, 300)}`);
    return this.csrf();
  }

  /** The session's CSRF token, as every signed-in page carries it. */
  async csrf(): Promise<string> {
    const page = await this.get('/admin/rest-apis');
    assert.is(page.status, 200, `csrf: ${page.status}`);
    return metaCsrf(page.text);
  }
}

export const hiddenField = (html: string, name: string): string => {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  assert.ok(m, `no hidden field ${name}`);
  return unescape(m![1]!);
};

export const metaCsrf = (html: string): string => {
  const m = /<meta name="csrf-token" content="([^"]+)">/.exec(html);
  assert.ok(m, 'no csrf meta');
  return m![1]!;
};

/** The text content of the first <h1>, tags removed. */
export const h1 = (html: string): string => unescape(/<h1>([\s\S]*?)<\/h1>/.exec(html)?.[1]?.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim() ?? '');

/** The value of the element with this id (input value or textarea content). */
export const valueOf = (html: string, id: string): string => {
  const input = new RegExp(`<input[^>]* id="${id}"[^>]* value="([^"]*)"`).exec(html);
  if (input) return unescape(input[1]!);
  const area = new RegExp(`<textarea[^>]* id="${id}"[^>]*>([\\s\\S]*?)</textarea>`).exec(html);
  assert.ok(area, `no field #${id}`);
  return unescape(area![1]!);
};

/** The field's error messages (the list tied to it by aria-describedby). */
export const fieldErrors = (html: string, id: string): string[] => {
  const list = new RegExp(`<ul class="field-errors" id="${id}-errors">([\\s\\S]*?)</ul>`).exec(html);
  if (!list) return [];
  return [...list[1]!.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => unescape(m[1]!));
};
