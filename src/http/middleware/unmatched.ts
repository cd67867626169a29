import type { Middleware } from 'koa';
import { HttpError, methodNotAllowed, notFound } from '../errors.ts';
import type { AppState } from '../state.ts';

/** Runs after every router: turns "no route answered" into JSON 404, 405 (with Allow) or 501. */
export const unmatched = (): Middleware<AppState> => async (ctx, next) => {
  await next();
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405) throw methodNotAllowed(ctx.method, ctx.response.get('Allow') as string);
  if (ctx.status === 501) throw new HttpError(501, 'svc:api:not-implemented', `Method ${ctx.method} is not supported`);
  if (ctx.status === 404) throw notFound(`No such endpoint: ${ctx.method} ${ctx.path}`);
};
