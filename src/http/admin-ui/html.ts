/**
 * HTML from template literals with escaping by default: every interpolated value is escaped
 * unless it is itself `Html` (made by `html` or, for trusted constant markup only, `raw`).
 */

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** A value that may be interpolated: text is escaped, Html is kept, nothing renders as nothing. */
export type Fragment = Html | string | number | boolean | null | undefined | readonly Fragment[];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for element content and double- or single-quoted attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);

const render = (value: Fragment): string => {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return (value as readonly Fragment[]).map(render).join('');
  return escapeHtml(String(value));
};

export const html = (strings: TemplateStringsArray, ...values: Fragment[]): Html => {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
};

/** Markup that is trusted as it is. Never pass it anything that came from a request or the store. */
export const raw = (markup: string): Html => new Html(markup);

/** Joins fragments into one Html. */
export const join = (parts: readonly Fragment[]): Html => new Html(render(parts));

/** A path segment, percent-encoded (model names hold colons, API keys ids are refs). */
export const seg = (s: string): string => encodeURIComponent(s);
