import Router from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Histogram, Registry } from 'prom-client';
import { unauthorised } from '../errors.ts';
import type { RequestLabels } from '../middleware/metrics.ts';
import type { AppState } from '../state.ts';

/** What the HTTP apps need of the service's metrics (made in the composition root). */
export interface HttpMetrics {
  readonly registry: Registry;
  /** Observed by the request middleware. */
  readonly requests: Histogram<RequestLabels>;
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  readonly token: string | undefined;
}

// Both sides hashed first: equal lengths for timingSafeEqual, and the token's length is not timed either.
const digest = (s: string) => createHash('sha256').update(s).digest();
const BEARER = /^Bearer\s+(\S+)\s*$/i;
const CHALLENGE = 'Bearer realm="svc metrics"';

/**
 * GET /metrics: the registry in Prometheus's text format. With a token, only a scraper sending
 * `Authorization: Bearer <token>` is answered (401 JSON otherwise). Not throttled: a token of 16+
 * random characters is out of reach of guessing, and a throttle keyed by address could lock out a
 * scraper that shares its address with whoever guesses.
 */
export const metricsRoutes = ({ registry, token }: Pick<HttpMetrics, 'registry' | 'token'>) => {
  const expected = token === undefined ? undefined : digest(token);
  const router = new Router<AppState>();
  router.get('/metrics', async (ctx) => {
    if (expected) {
      const match = BEARER.exec(ctx.get('Authorization'));
      if (!match) throw unauthorised('Metrics need Authorization: Bearer <SVC_METRICS_TOKEN>', CHALLENGE, 'svc:api:metrics:unauthorised');
      if (!timingSafeEqual(digest(match[1]!), expected)) {
        throw unauthorised('Metrics token is not valid', `${CHALLENGE}, error="invalid_token"`, 'svc:api:metrics:unauthorised');
      }
    }
    const text = await registry.metrics();
    ctx.type = registry.contentType;
    ctx.body = text;
  });
  return router;
};
