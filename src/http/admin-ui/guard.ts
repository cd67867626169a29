/** The session and CSRF guard in front of every admin page but sign-in and the assets. */
import { forbiddenPage } from './pages/general.ts';
import { readForm } from './forms.ts';
import { redirect, renderProblem, send, type Ctx, type SignedIn } from './respond.ts';
import { readCookie, sameSecret, type CookieNames, type SessionStore } from './sessions.ts';

export type PageHandler = (ctx: Ctx, s: SignedIn) => Promise<void> | void;
export type PageGuard = (handler: PageHandler) => (ctx: Ctx) => Promise<void>;

export interface GuardDeps {
  readonly sessions: SessionStore;
  readonly cookies: CookieNames;
  /** Largest form accepted, in bytes. */
  readonly limit: number;
}

export const sessionCookie = (ctx: Ctx, cookies: CookieNames) => readCookie(ctx.get('Cookie'), cookies.session);

/**
 * Wraps a page handler: GETs without a session go to sign-in; POSTs must carry the session's CSRF
 * token; what the handler throws is shown as a problem page.
 */
export const pageGuard =
  ({ sessions, cookies, limit }: GuardDeps): PageGuard =>
  (handler) =>
  async (ctx) => {
    const id = sessionCookie(ctx, cookies);
    const session = await sessions.get(id);
    if (!id || !session) {
      const to = ctx.method === 'GET' || ctx.method === 'HEAD' ? `/admin/sign-in?next=${encodeURIComponent(ctx.originalUrl)}` : '/admin/sign-in?expired=1';
      return redirect(ctx, to);
    }
    ctx.state.actor = 'admin';
    const flash = session.flash;
    const base: SignedIn = { session, csrf: session.csrf, form: new URLSearchParams() };
    let s = base;
    try {
      if (ctx.method === 'POST') {
        const form = await readForm(ctx, limit);
        if (!sameSecret(form.get('csrf') ?? '', session.csrf)) {
          return send(ctx, 403, {
            title: 'Forbidden',
            csrf: session.csrf,
            body: forbiddenPage('This form was refused: its security token is missing or wrong. It may come from an old page, or from another site.'),
          });
        }
        s = { ...base, form };
      }
      await handler(ctx, s);
    } catch (e) {
      renderProblem(ctx, s, e);
    }
    // The next page may be served by another process: a flash set (redirect) or shown (render) is stored.
    if (session.flash !== flash) await sessions.save(id, session);
  };
