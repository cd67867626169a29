/** Signing in with the admin token (which starts a session) and signing out. */
import type Router from '@koa/router';
import type { AppState } from '../../state.ts';
import type { FailureThrottle } from '../../throttle.ts';
import { rawField, readForm } from '../forms.ts';
import { sessionCookie, type PageGuard } from '../guard.ts';
import { forbiddenPage, signInPage } from '../pages/general.ts';
import { redirect, renderProblem, safeNext, send } from '../respond.ts';
import { newSecret, readCookie, sameSecret, serialiseCookie, type CookieNames, type SessionStore } from '../sessions.ts';

export interface SessionPagesDeps {
  readonly adminToken: string;
  readonly sessions: SessionStore;
  readonly cookies: CookieNames;
  /** Failed admin-token attempts per client address (shared with the admin API's Bearer tokens). */
  readonly throttle: FailureThrottle;
  /** Largest form accepted, in bytes. */
  readonly limit: number;
}

const SIGN_IN_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const sessionPages = (router: Router<AppState>, page: PageGuard, deps: SessionPagesDeps) => {
  const { sessions, cookies, throttle, limit } = deps;

  router.get('/sign-in', async (ctx) => {
    const next = safeNext(typeof ctx.query.next === 'string' ? ctx.query.next : undefined);
    if (await sessions.get(sessionCookie(ctx, cookies))) return redirect(ctx, next);
    const existing = readCookie(ctx.get('Cookie'), cookies.signIn);
    const token = existing && SIGN_IN_TOKEN.test(existing) ? existing : newSecret();
    ctx.append('Set-Cookie', serialiseCookie(cookies.signIn, token, { maxAge: 3600, secure: cookies.secure }));
    const notice = ctx.query['signed-out'] !== undefined ? 'You have signed out.' : ctx.query.expired !== undefined ? 'Your session has ended. Sign in again.' : undefined;
    send(ctx, 200, { title: 'Sign in', body: signInPage({ csrf: token, next, ...(notice ? { notice } : {}) }) });
  });

  router.post('/sign-in', async (ctx) => {
    let form: URLSearchParams;
    try {
      form = await readForm(ctx, limit);
    } catch (e) {
      return renderProblem(ctx, undefined, e);
    }
    const expected = readCookie(ctx.get('Cookie'), cookies.signIn);
    const next = safeNext(form.get('next') ?? undefined);
    if (!expected || !sameSecret(form.get('csrf') ?? '', expected)) {
      return send(ctx, 403, {
        title: 'Forbidden',
        body: forbiddenPage('The sign-in form was refused: its security token is missing or wrong (or cookies are switched off). Reload the sign-in page and try again.'),
      });
    }
    const again = (status: number, error: string) => send(ctx, status, { title: 'Sign in', body: signInPage({ csrf: expected, next, error }) });
    const tooMany = (blockedMs: number) => {
      ctx.set('Retry-After', String(Math.ceil(blockedMs / 1000)));
      return again(429, 'Too many failed sign-in attempts from your address. Wait a minute, then try again.');
    };
    const blockedMs = throttle.blockedFor(ctx.ip);
    if (blockedMs > 0) return tooMany(blockedMs);
    if (!sameSecret(rawField(form, 'token').trim(), deps.adminToken)) {
      const counted = await throttle.fail(ctx.ip);
      return counted.blockedBefore ? tooMany(counted.blockedMs) : again(401, 'That is not the admin token.');
    }
    await sessions.destroy(sessionCookie(ctx, cookies));
    const { id, session } = await sessions.create();
    ctx.append('Set-Cookie', serialiseCookie(cookies.session, id, { maxAge: sessions.cookieMaxAge(session), secure: cookies.secure }));
    ctx.append('Set-Cookie', serialiseCookie(cookies.signIn, '', { maxAge: 0, secure: cookies.secure }));
    redirect(ctx, next);
  });

  router.post(
    '/sign-out',
    page(async (ctx) => {
      await sessions.destroy(sessionCookie(ctx, cookies));
      ctx.append('Set-Cookie', serialiseCookie(cookies.session, '', { maxAge: 0, secure: cookies.secure }));
      redirect(ctx, '/admin/sign-in?signed-out=1');
    }),
  );
};
