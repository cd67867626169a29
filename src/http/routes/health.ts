import Router from '@koa/router';
import type { ProjectionRunner } from '../../projections/runner.ts';
import type { AppState } from '../state.ts';

/** GET /healthz: 200 while every projection runs, 503 when one has failed. */
export const healthRoutes = (runner: ProjectionRunner) => {
  const router = new Router<AppState>();
  router.get('/healthz', async (ctx) => {
    const projections = await runner.status();
    const failed = projections.some((p) => p.state === 'failed');
    ctx.status = failed ? 503 : 200;
    ctx.body = {
      status: failed ? 'degraded' : 'ok',
      projections: projections.map(({ name, state, lag }) => ({ name, state, lag })),
    };
  });
  return router;
};

/**
 * GET /status (the projector role's only other endpoint): every projection with its checkpoint,
 * lag, lease holder (`here`: this process folds it) and last rebuild, for monitoring.
 */
export const projectorStatusRoutes = (runner: ProjectionRunner, role: string) => {
  const router = new Router<AppState>();
  router.get('/status', async (ctx) => {
    const projections = await runner.status();
    ctx.body = { role, owner: runner.owner, holding: projections.filter((p) => p.lease?.here).length, projections };
  });
  return router;
};
