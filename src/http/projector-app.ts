import Koa from 'koa';
import type { Logger } from 'pino';
import type { ProjectionRunner } from '../projections/runner.ts';
import { handleErrors } from './middleware/handle-errors.ts';
import { jsonOutput } from './middleware/json-output.ts';
import { logRequests } from './middleware/log-requests.ts';
import { requestId } from './middleware/request-id.ts';
import { unmatched } from './middleware/unmatched.ts';
import { healthRoutes, projectorStatusRoutes } from './routes/health.ts';
import type { AppState } from './state.ts';

/** The projector role's HTTP face: /healthz and /status, nothing else (no commands, no queries, no admin). */
export const createProjectorApp = (deps: { readonly runner: ProjectionRunner; readonly logger: Logger }): Koa<AppState> => {
  const app = new Koa<AppState>();
  app.proxy = false;
  app.silent = true;
  app.use(requestId(deps.logger));
  app.use(logRequests());
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(unmatched());
  for (const router of [healthRoutes(deps.runner), projectorStatusRoutes(deps.runner, 'projector')]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
};
