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
  // Accepted, not performed here: the holder of the projection's lease rebuilds it in a worker
  // thread (this process, or a projector), and GET /projections shows its progress.
  router.post('/projections/:name/rebuild', async (ctx) => {
    const name = ctx.params.name!;
    if (!runner.projectors.some((p) => p.name === name)) throw notFound(`Unknown projection: ${name}`, 'svc:projection:no-such-projection');
    try {
      ctx.body = { projection: name, rebuild: await runner.rebuild(name), status: `/api/admin/projections` };
      ctx.status = 202;
    } catch (e) {
      if (e instanceof RebuildInProgressError) throw new HttpError(409, 'svc:projection:rebuild-in-progress', e.message);
      throw e;
    }
  });
  return router;
};
