import Koa from 'koa';
import type { Logger } from 'pino';
import type { ProjectionRunner } from '../projections/runner.ts';
import { handleErrors } from './middleware/handle-errors.ts';
import { jsonOutput } from './middleware/json-output.ts';
import { logRequests } from './middleware/log-requests.ts';
import { requestMetrics } from './middleware/metrics.ts';
import { requestId } from './middleware/request-id.ts';
import { unmatched } from './middleware/unmatched.ts';
import { healthRoutes, projectorStatusRoutes, type HealthDeps } from './routes/health.ts';
import { metricsRoutes, type HttpMetrics } from './routes/metrics.ts';
import type { AppState } from './state.ts';

export interface ProjectorAppDeps {
  readonly runner: ProjectionRunner;
  readonly logger: Logger;
  readonly metrics: HttpMetrics;
  readonly readiness: HealthDeps['readiness'];
}

/** The projector role's HTTP face: /healthz, /readyz, /metrics and /status, nothing else (no commands, no queries, no admin). */
export const createProjectorApp = (deps: ProjectorAppDeps): Koa<AppState> => {
  const app = new Koa<AppState>();
  app.proxy = false;
  app.silent = true;
  app.use(requestMetrics(deps.metrics.requests));
  app.use(requestId(deps.logger));
  app.use(logRequests());
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(unmatched());
  const routers = [
    healthRoutes({ runner: deps.runner, readiness: deps.readiness }),
    projectorStatusRoutes(deps.runner, 'projector'),
    metricsRoutes(deps.metrics),
  ];
  for (const router of routers) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
};
