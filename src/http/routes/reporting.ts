import Router from '@koa/router';
import type { ReadStore } from '../../projections/read-store.ts';
import { collectionData, collectionDetail, listCollections, type ReportingDeps } from '../../queries/reporting-api.ts';
import { badRequest } from '../errors.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import type { FailureThrottle } from '../throttle.ts';

const AT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?Z?$/;

/** `at` as the contract gives it (UTC, `YYYY-MM-DDThh:mm:ss`), optionally with milliseconds and `Z`. */
export const parseAt = (value: string | string[] | undefined): Date | undefined => {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value[0] ?? '' : value;
  const m = AT.exec(text);
  const bad = () => badRequest('at must be a UTC date and time of the form YYYY-MM-DDThh:mm:ss, optionally with milliseconds and Z (e.g. 2024-03-12T10:30:00 or 2024-03-12T10:30:00.250Z)', 'svc:api:reporting:bad-at');
  if (!m) throw bad();
  const [, y, mo, d, h, mi, s, ms] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms ? Math.round(Number(ms) * 1000) : 0));
  if (date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || date.getUTCHours() !== Number(h) || date.getUTCMinutes() !== Number(mi) || date.getUTCSeconds() !== Number(s)) {
    throw bad();
  }
  return date;
};

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
    ctx.body = await collectionData(deps, ctx.params.name!, at, ctx.state.principal.access);
  });
  return router;
};
