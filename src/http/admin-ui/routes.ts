/**
 * The admin interface at `/admin`: server-rendered pages over the same commands and queries as
 * the admin API, behind a session that signing in with the admin token starts. One router, each
 * page family's routes registered by its own module in routes/.
 */
import Router from '@koa/router';
import type { DownloadSigner } from '../../blobs/signed-urls.ts';
import type { CommandDeps } from '../../commands/context.ts';
import { controlValidator } from '../../commands/push-data/control-validator.ts';
import type { Config } from '../../config/config.ts';
import type { Models } from '../../domain/model.ts';
import type { ObjectHistoryDeps } from '../../queries/object-history.ts';
import type { ProjectionRunner } from '../../projections/runner.ts';
import type { AppState } from '../state.ts';
import type { FailureThrottle } from '../throttle.ts';
import { pageGuard } from './guard.ts';
import { apiKeyPages } from './routes/api-keys.ts';
import { eventPages } from './routes/events.ts';
import { filePages } from './routes/files.ts';
import { generalPages, notFoundPages } from './routes/general.ts';
import { modelPages } from './routes/models.ts';
import { objectPages } from './routes/objects.ts';
import { projectionPages } from './routes/projections.ts';
import { restApiPages } from './routes/rest-apis.ts';
import { sessionPages } from './routes/session.ts';
import { groupPages, userPages } from './routes/users.ts';
import { cookieNames, type SessionStore } from './sessions.ts';

export interface AdminUiDeps {
  readonly config: Pick<Config, 'baseUrl' | 'bodyLimitBytes'>;
  readonly adminToken: string;
  /** The same dependencies the admin API's routers get. */
  readonly commands: CommandDeps;
  readonly models: Models;
  readonly runner: ProjectionRunner;
  /** The Object API's reads and the log, for the object page and its history. */
  readonly objects: ObjectHistoryDeps;
  /** Signs the download links of the file pages. */
  readonly signer: DownloadSigner;
  /** The admin sessions; give the admin API's authentication (`adminAuth`) the same store so it accepts them too. */
  readonly sessions: SessionStore;
  /** Failed sign-ins per client address (shared with the admin API's Bearer tokens). */
  readonly signInThrottle: FailureThrottle;
}

export const adminUiRoutes = (deps: AdminUiDeps) => {
  const router = new Router<AppState>({ prefix: '/admin' });
  const { adminToken, commands, models, runner, sessions } = deps;
  const cookies = cookieNames(deps.config.baseUrl);
  const limit = deps.config.bodyLimitBytes;
  const page = pageGuard({ sessions, cookies, limit });

  generalPages(router, page);
  sessionPages(router, page, { adminToken, sessions, cookies, limit, throttle: deps.signInThrottle });
  restApiPages(router, page, { commands, validate: controlValidator(models, commands.schema), baseUrl: deps.config.baseUrl });
  apiKeyPages(router, page, commands);
  modelPages(router, page, models);
  userPages(router, page, commands);
  groupPages(router, page, commands);
  projectionPages(router, page, runner);
  objectPages(router, page, deps.objects);
  filePages(router, page, { reads: commands.reads, signer: deps.signer });
  eventPages(router, page, commands.events);
  notFoundPages(router, page);
  return router;
};
