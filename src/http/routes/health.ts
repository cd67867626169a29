import Router from '@koa/router';
import type { ProjectionRunner } from '../../projections/runner.ts';
import { checkReadiness, type ReadinessDeps } from '../readiness.ts';
import type { AppState } from '../state.ts';

export interface HealthDeps {
  readonly runner: Pick<ProjectionRunner, 'status'>;
  /** What /readyz checks (engines, projections' lag), and how long /healthz waits for the projections' status. */
  readonly readiness: Omit<ReadinessDeps, 'status'>;
}

const NO_STORE = 'no-store';

/**
 * GET /healthz (liveness): 200 whenever the process answers at all, so an orchestrator restarts
 * only a process that hangs. The projections are listed as before, but only when their status
 * comes within the readiness timeout; an engine being down is readiness's business, not a reason
 * to restart. GET /readyz (readiness): 200 when the engines answer and every projection is live
 * within the configured lag, else 503 naming the checks that failed; for load balancers.
 */
export const healthRoutes = ({ runner, readiness }: HealthDeps) => {
  const router = new Router<AppState>();
  router.get('/healthz', async (ctx) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, readiness.timeoutMs, undefined);
    });
    const projections = await Promise.race([runner.status().catch(() => undefined), late]);
    clearTimeout(timer);
    ctx.set('Cache-Control', NO_STORE);
    ctx.body = {
      status: 'ok',
      projections: projections?.map(({ name, state, lag }) => ({ name, state, lag })) ?? [],
      ...(projections ? {} : { projectionsUnknown: true }),
    };
  });
  router.get('/readyz', async (ctx) => {
    const result = await checkReadiness({ ...readiness, status: () => runner.status() });
    ctx.status = result.ready ? 200 : 503;
    ctx.set('Cache-Control', NO_STORE);
    ctx.body = { status: result.ready ? 'ready' : 'not-ready', failed: result.failed, checks: result.checks };
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
