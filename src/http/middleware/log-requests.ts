import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';

/** One structured line per request, written when the response has been produced. */
export const logRequests = (): Middleware<AppState> => async (ctx, next) => {
  const started = process.hrtime.bigint();
  try {
    await next();
  } finally {
    ctx.state.log.info(
      { method: ctx.method, path: ctx.path, status: ctx.status, ms: Number(process.hrtime.bigint() - started) / 1e6, actor: ctx.state.actor },
      'request',
    );
  }
};
