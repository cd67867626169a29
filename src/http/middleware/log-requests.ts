import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';
import { RequestState } from './request-id.ts';

/** One structured line per request, written when the response has been produced. */
export const logRequests = (): Middleware<AppState> => async (ctx, next) => {
  const started = process.hrtime.bigint();
  try {
    await next();
  } finally {
    const fields = { method: ctx.method, path: ctx.path, status: ctx.status, ms: Number(process.hrtime.bigint() - started) / 1e6, actor: ctx.state.actor };
    const state = ctx.state;
    if (state instanceof RequestState) state.logRequest(fields, 'request');
    else state.log.info(fields, 'request');
  }
};
