import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../state.ts';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (the caller's `X-Request-Id` when sane); it becomes the correlation id of its events. */
export const requestId = (logger: Logger): Middleware<AppState> => async (ctx, next) => {
  const given = ctx.get('X-Request-Id');
  ctx.state.requestId = ACCEPTABLE.test(given) ? given : randomUUID();
  ctx.state.log = logger.child({ requestId: ctx.state.requestId });
  ctx.set('X-Request-Id', ctx.state.requestId);
  await next();
};
