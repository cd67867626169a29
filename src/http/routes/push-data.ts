import Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandDeps } from '../../commands/context.ts';
import { IDEMPOTENCY_KEY, onceByKey, type StoredResponse } from '../../commands/idempotency.ts';
import { pushData, restApiByUrl, type PushCaches } from '../../commands/push-data/push-data.ts';
import { PUSH_DATA_GROUP } from '../../commands/rest-apis.ts';
import type { Models } from '../../domain/model.ts';
import type { RestApiDoc } from '../../projections/read-models.ts';
import { badRequest } from '../errors.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import { pushStatus, renderPushResult, type PushResult } from '../push-response.ts';
import { readRawBody } from '../read-body.ts';
import type { FailureThrottle } from '../throttle.ts';
import { metadataOf } from '../validate.ts';

const empty = { applied: 0, failures: 0, actions: [] } as const;

const send = (ctx: Context, response: StoredResponse) => {
  ctx.status = response.status;
  ctx.type = response.contentType;
  ctx.body = response.body;
};

const answer = (result: PushResult, format: RestApiDoc['response'] = 'JSON'): StoredResponse => ({ status: pushStatus(result.result), ...renderPushResult(result, format) });

/** `POST /api/push-data/<url>`: a push-data API run through its control file (haplo-behaviour.md §2.2). */
export const pushDataRoutes = (deps: CommandDeps, caches: PushCaches, models: Models, throttle: FailureThrottle, bodyLimit: number, principals?: PrincipalCache) => {
  const router = new Router<KeyedState>();
  router.all(
    '/api/push-data/:url',
    async (ctx, next) => {
      if (ctx.method === 'POST') return next();
      const body = { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: ['Only POST requests supported for push data REST APIs.'] };
      send(ctx, { status: 400, contentType: 'application/json; charset=utf-8', body: `${JSON.stringify(body, null, 4)}\n` });
    },
    apiKeyAuth(deps.reads, throttle, principals),
    async (ctx) => {
      const url = ctx.params.url!;
      const api = await restApiByUrl(deps, caches, url);
      if (!api) return send(ctx, answer({ result: 'error', ...empty, errorCount: 1, errors: [`API not defined: ${url}`] }));
      if (!ctx.state.principal.groups.includes(PUSH_DATA_GROUP)) return send(ctx, answer({ result: 'not authorised', ...empty, errorCount: 1, errors: [] }));
      if (!api.enabled) return send(ctx, answer({ result: 'error', ...empty, errorCount: 1, errors: [`API is disabled: ${url}`] }, api.response));
      const body = await readRawBody(ctx, bodyLimit);
      const metadata = metadataOf(ctx);
      const key = ctx.get('Idempotency-Key');
      if (!key) return send(ctx, answer(await pushData(deps, caches, models, metadata, api.control, body), api.response));
      if (!IDEMPOTENCY_KEY.test(key)) throw badRequest('Idempotency-Key must be 1-255 printable ASCII characters', 'svc:api:bad-idempotency-key');
      const response = await onceByKey(deps, metadata, `push-data:${url}`, key, body, async () => answer(await pushData(deps, caches, models, metadata, api.control, body), api.response));
      if (response.replayed) ctx.set('Idempotent-Replayed', 'true');
      send(ctx, response);
    },
  );
  return router;
};
