import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';
import { RequestState } from './request-id.ts';
import { disconnectFields } from '../client-disconnect.ts';

/**
 * One structured line per request, written when the response has been produced. An answer still
 * being sent then (a streamed download) that the client cuts off gets one more line, at info: the
 * client went away, the service did nothing wrong.
 */
export const logRequests = (): Middleware<AppState> => async (ctx, next) => {
  const started = process.hrtime.bigint();
  try {
    await next();
  } finally {
    const res = ctx.res;
    if (!res.writableFinished && !res.closed) {
      res.once('close', () => {
        if (!res.writableFinished) ctx.state.log.info(disconnectFields(undefined, 'response'), 'client disconnected');
      });
    }
    const fields = { method: ctx.method, path: ctx.path, status: ctx.status, ms: Number(process.hrtime.bigint() - started) / 1e6, actor: ctx.state.actor };
    const state = ctx.state;
    if (state instanceof RequestState) state.logRequest(fields, 'request');
    else state.log.info(fields, 'request');
  }
};
