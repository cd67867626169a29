import type { Middleware } from 'koa';
import type { Histogram } from 'prom-client';
import type { AppState } from '../state.ts';

export type RequestLabels = 'method' | 'route' | 'status';

/** The route label of requests no route answered (404, 405, refused before routing): one series, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

// A client may send any token as a method: only these get their own series.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Observes every request's duration by route template (what @koa/router matched, never the raw
 * path: refs and ids would make a series each), method and final status. Mounted first, so the
 * status is the one handleErrors chose. The time is to the answer's headers and body being set; a
 * streamed body's transfer is not included.
 */
export const requestMetrics = (histogram: Histogram<RequestLabels>): Middleware<AppState> => async (ctx, next) => {
  const started = performance.now();
  try {
    await next();
  } finally {
    const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    histogram.observe(
      {
        method: METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        route: route === undefined ? UNMATCHED_ROUTE : String(route),
        status: ctx.status,
      },
      (performance.now() - started) / 1000,
    );
  }
};
