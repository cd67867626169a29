/**
 * How every admin page answers: security headers, a rendered page (with the session's flash
 * message), a redirect that may leave a flash for the next page, and the problem page.
 */
import type { RouterContext } from '@koa/router';
import type { Fragment } from './html.ts';
import { layout, type PageOptions, type Problem, type Section } from './layout.ts';
import { problemPage } from './pages/general.ts';
import { problemOf } from './problems.ts';
import type { Flash, Session } from './sessions.ts';
import type { AppState } from '../state.ts';

export type Ctx = RouterContext<AppState>;

/** A request that passed the session guard (see guard.ts). */
export interface SignedIn {
  readonly session: Session;
  readonly csrf: string;
  /** The posted form (empty for GET). */
  readonly form: URLSearchParams;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const securityHeaders = (ctx: Ctx) => {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
};

/** Where to go after signing in (or a form): only a path of the admin interface (never another site). */
export const safeNext = (next: string | undefined, fallback = '/admin/rest-apis'): string =>
  next && /^\/admin(?:[/?#]|$)/.test(next) && !/[\\\s\x00-\x1f]/.test(next) && !next.startsWith('/admin/sign-') ? next : fallback;

export const send = (ctx: Ctx, status: number, options: PageOptions) => {
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = layout(options);
};

const takeFlash = (session: Session): Flash | undefined => {
  const flash = session.flash;
  delete session.flash;
  return flash;
};

export const render = (ctx: Ctx, s: SignedIn, status: number, title: string, section: Section, body: Fragment, extra: Partial<PageOptions> = {}) => {
  const flash = takeFlash(s.session);
  send(ctx, status, { title, section, body, csrf: s.csrf, ...(flash ? { flash } : {}), ...extra });
};

export const redirect = (ctx: Ctx, to: string, session?: Session, flash?: Flash) => {
  if (session && flash) session.flash = flash;
  securityHeaders(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.redirect(to);
};

export const renderProblem = (ctx: Ctx, s: SignedIn | undefined, e: unknown, back?: { href: string; label: string }) => {
  let problem = problemOf(e);
  if (!problem) {
    ctx.state.log.error({ err: e }, 'admin interface: unexpected error');
    problem = {
      status: 500,
      kind: 'svc:api:internal-error',
      message: `Internal error; quote request id ${ctx.state.requestId} when reporting it`,
      errors: [],
    };
  }
  const body = problemPage(problem, back);
  if (s) render(ctx, s, problem.status, problem.status === 404 ? 'Not found' : 'Error', 'none', body);
  else send(ctx, problem.status, { title: 'Error', body });
};

/** A command's refusal as a Problem to show with the form (unexpected errors go on up). */
export const refusal = (e: unknown): Problem => {
  const problem = problemOf(e);
  if (!problem) throw e;
  return problem;
};
