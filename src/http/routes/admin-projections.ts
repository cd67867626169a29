import Router from '@koa/router';
import { RebuildInProgressError, type ProjectionRunner } from '../../projections/runner.ts';
import { HttpError, notFound } from '../errors.ts';
import type { AppState } from '../state.ts';

/** Projections: their state and lag, and blue/green rebuilds (`/api/admin/projections`). */
export const adminProjectionRoutes = (runner: ProjectionRunner) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });
  router.get('/projections', async (ctx) => {
    ctx.body = { projections: await runner.status() };
  });
  router.post('/projections/:name/rebuild', async (ctx) => {
    const name = ctx.params.name!;
    if (!(await runner.status()).some((p) => p.name === name)) throw notFound(`Unknown projection: ${name}`, 'svc:projection:no-such-projection');
    try {
      ctx.body = { projection: name, rebuild: runner.rebuild(name), status: `/api/admin/projections` };
      ctx.status = 202;
    } catch (e) {
      if (e instanceof RebuildInProgressError) throw new HttpError(409, 'svc:projection:rebuild-in-progress', e.message);
      throw e;
    }
  });
  return router;
};
