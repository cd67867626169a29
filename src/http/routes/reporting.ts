import Router from '@koa/router';
import type { ReadStore } from '../../projections/read-store.ts';
import { answerJson, collectionAnswer, collectionDetail, listCollections, type ReportingDeps } from '../../queries/reporting-api.ts';
import { parseAt } from '../../queries/parse-at.ts';
import { sliceBytes } from '../../queries/answer-cache.ts';
import { pacedBody } from '../paced-body.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import type { FailureThrottle } from '../throttle.ts';

/** Reporting API v0: collections, one collection, its data now or at a past time. */
export const reportingRoutes = (deps: ReportingDeps, reads: ReadStore, throttle: FailureThrottle, principals?: PrincipalCache) => {
  const router = new Router<KeyedState>({ prefix: '/api/reporting/v0' });
  // Under every path of the prefix, matched case-insensitively like the routes: a bare
  // router.use(fn) layer matches case-sensitively, which let `/API/...` reach the routes unauthenticated.
  router.use('', apiKeyAuth(reads, throttle, principals));
  router.get('/collections', (ctx) => {
    ctx.body = listCollections(deps);
  });
  router.get('/collection/:name', async (ctx) => {
    ctx.body = await collectionDetail(deps, ctx.params.name!);
  });
  router.get('/collection-data/:name', async (ctx) => {
    const at = parseAt(ctx.query.at);
    const json = answerJson(await collectionAnswer(deps, ctx.params.name!, at, ctx.state.principal.access));
    // Sent as the slices made once per version, a few at a time; only a request for indented output parses them again.
    if (ctx.query.output === 'pretty') ctx.body = JSON.parse(Buffer.concat(json).toString()) as object;
    else {
      ctx.body = pacedBody(json);
      ctx.length = sliceBytes(json);
    }
    ctx.type = 'application/json; charset=utf-8';
  });
  return router;
};
