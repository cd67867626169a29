import Router from '@koa/router';
import type { ProjectionRunner } from '../../projections/runner.ts';
import type { AppState } from '../state.ts';

/** GET /api/admin/projections: checkpoint, head, lag and state of every projection. */
export const adminProjectionRoutes = (runner: ProjectionRunner) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });
  router.get('/projections', async (ctx) => {
    ctx.body = { projections: await runner.status() };
  });
  return router;
};
