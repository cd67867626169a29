import Router from '@koa/router';
import type { ReadStore } from '../../projections/read-store.ts';
import { queryParams, refParam } from '../params.ts';
import { getLinked, getObject, getObjectJson } from '../../queries/object-api.ts';
import { sendJsonText, wantsPretty } from '../middleware/json-output.ts';
import { getObjectAt, getObjectHistory, type ObjectHistoryDeps } from '../../queries/object-history.ts';
import { parseAt } from '../../queries/parse-at.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import type { FailureThrottle } from '../throttle.ts';

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * Object API v0: `GET /api/v0-object/ref/<ref>` (now, or `at` a past time), `GET /api/v0-object/linked/<ref>`
 * and `GET /api/v0-object/history/<ref>`.
 */
export const objectApiRoutes = (deps: ObjectHistoryDeps, reads: ReadStore, throttle: FailureThrottle, principals?: PrincipalCache) => {
  const router = new Router<KeyedState>({ prefix: '/api/v0-object' });
  // Under every path of the prefix, matched case-insensitively like the routes: a bare
  // router.use(fn) layer matches case-sensitively, which let `/API/...` reach the routes unauthenticated.
  router.use('', apiKeyAuth(reads, throttle, principals));
  router.get('/ref/:ref', async (ctx) => {
    const ref = refParam(ctx.params.ref);
    const query = queryParams(ctx.querystring);
    const sources = query.get('sources');
    const at = parseAt(query.get('at'));
    const access = ctx.state.principal.access;
    if (!at && !wantsPretty(ctx)) {
      // The object's JSON is kept encoded between requests: the answer is built around it as text.
      sendJsonText(ctx, `{"success":true,"kind":"svc:api-v0:object:serialised","object":${await getObjectJson(deps, ref, sources, access)}}`);
      return;
    }
    const object = at ? await getObjectAt(deps, ref, sources, at, access) : await getObject(deps, ref, sources, access);
    ctx.body = { success: true, kind: 'svc:api-v0:object:serialised', object };
  });
  router.get('/linked/:ref', async (ctx) => {
    const q = ctx.query;
    const query = Object.fromEntries(
      (['type', 'attribute', 'qualifier', 'results', 'sources', 'start'] as const).flatMap((k) => (single(q[k]) === undefined ? [] : [[k, single(q[k])]])),
    );
    ctx.body = { success: true, ...(await getLinked(deps, refParam(ctx.params.ref), query, ctx.state.principal.access)) };
  });
  router.get('/history/:ref', async (ctx) => {
    ctx.body = { success: true, ...(await getObjectHistory(deps, refParam(ctx.params.ref), ctx.state.principal.access)) };
  });
  return router;
};
