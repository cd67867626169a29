import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { readCookie, sameSecret, type SessionStore } from '../admin-ui/sessions.ts';
import { HttpError, unauthorised } from '../errors.ts';
import type { FailureThrottle } from '../throttle.ts';
import type { AppState } from '../state.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const throttled = (blockedMs: number) =>
  new HttpError(429, 'svc:api:admin:throttle', 'Too many failed admin authentication attempts from your address; wait until the time in Retry-After has passed', {
    'Retry-After': String(Math.ceil(blockedMs / 1000)),
  });

export interface AdminAuthOptions {
  /** Sessions of the admin interface (the store it was built with); without it only the token is accepted. */
  readonly sessions?: SessionStore;
  /** Session cookie names to accept (both spellings unless told: plain and `__Host-`). */
  readonly cookieNames?: readonly string[];
  /**
   * Wrong Bearer tokens per client address; past its limit every Bearer token of that address is
   * refused (429) until the window ends. Give it the admin interface's sign-in throttle: both guess
   * the same secret.
   */
  readonly throttle?: FailureThrottle;
}

/**
 * The admin API's authentication: `Authorization: Bearer <admin token>` (compared in constant time),
 * or else the session cookie of the admin interface. A request authenticated by its cookie must
 * also send the session's CSRF token as `X-CSRF-Token` unless it is a GET, HEAD or OPTIONS.
 */
export const adminAuth = (token: string, options: AdminAuthOptions = {}): Middleware<AppState> => {
  const expected = digest(token);
  const challenge = 'Bearer realm="svc-admin"';
  const { sessions, throttle } = options;
  const names = options.cookieNames ?? ['svc_admin_session', '__Host-svc_admin_session'];
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header && sessions) {
      const cookies = ctx.get('Cookie');
      let session;
      for (const name of names) if ((session = await sessions.get(readCookie(cookies, name)))) break;
      if (session) {
        if (!SAFE_METHODS.has(ctx.method) && !sameSecret(ctx.get('X-CSRF-Token'), session.csrf)) {
          throw new HttpError(403, 'svc:api:admin:csrf', 'Requests authenticated by the admin session cookie must send the session\'s CSRF token in X-CSRF-Token');
        }
        ctx.state.actor = 'admin';
        return next();
      }
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorised('Admin API requires Authorization: Bearer <admin token> (or a signed-in admin session)', challenge, 'svc:api:admin:unauthorised');
    const blockedMs = throttle?.blockedFor(ctx.ip) ?? 0;
    if (blockedMs > 0) throw throttled(blockedMs);
    if (!timingSafeEqual(digest(match[1]!), expected)) {
      const counted = await throttle?.fail(ctx.ip);
      if (counted?.blockedBefore) throw throttled(counted.blockedMs);
      throw unauthorised('Admin token is not valid', `${challenge}, error="invalid_token"`, 'svc:api:admin:unauthorised');
    }
    ctx.state.actor = 'admin';
    await next();
  };
};
