import Router from '@koa/router';
import type { Context } from 'koa';
import type { CommandDeps } from '../../commands/context.ts';
import type { StoredResponse } from '../../commands/idempotency.ts';
import type { PushCaches } from '../../commands/push-data/push-data.ts';
import { pushToApi } from '../../commands/push-data/push-to-api.ts';
import type { Models } from '../../domain/model.ts';
import { apiKeyAuth, type KeyedState, type PrincipalCache } from '../middleware/api-key-auth.ts';
import { pushRefusal, pushResponse } from '../push-response.ts';
import { readRawBody } from '../read-body.ts';
import type { FailureThrottle } from '../throttle.ts';
import { metadataOf } from '../validate.ts';

const send = (ctx: Context, response: StoredResponse) => {
  ctx.status = response.status;
  ctx.type = response.contentType;
  ctx.body = response.body;
};

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
      const key = ctx.get('Idempotency-Key');
      const response = await pushToApi(
        deps,
        caches,
        models,
        {
          url: ctx.params.url!,
          principalGroups: ctx.state.principal.groups,
          body: () => readRawBody(ctx, bodyLimit),
          metadata: metadataOf(ctx),
          ...(key ? { idempotencyKey: key } : {}),
        },
        pushResponse,
        pushRefusal,
      );
      if (response.replayed) ctx.set('Idempotent-Replayed', 'true');
      if (response.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(response.retryAfterSeconds));
      send(ctx, response);
    },
  );
  return router;
};
