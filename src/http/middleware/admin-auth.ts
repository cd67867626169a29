import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { unauthorised } from '../errors.ts';
import type { AppState } from '../state.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** `Authorization: Bearer <admin token>`, compared in constant time. */
export const adminAuth = (token: string): Middleware<AppState> => {
  const expected = digest(token);
  const challenge = 'Bearer realm="svc-admin"';
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw unauthorised('Admin API requires Authorization: Bearer <admin token>', challenge, 'svc:api:admin:unauthorised');
    if (!timingSafeEqual(digest(match[1]!), expected)) {
      throw unauthorised('Admin token is not valid', `${challenge}, error="invalid_token"`, 'svc:api:admin:unauthorised');
    }
    ctx.state.actor = 'admin';
    await next();
  };
};
