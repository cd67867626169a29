import Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ReadStore } from '../projections/read-store.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { adminAuth } from './middleware/admin-auth.ts';
import { dispatchByPrefix, type RouterFamily } from './dispatch.ts';
import type { PrincipalCache } from './middleware/api-key-auth.ts';
import { handleErrors } from './middleware/handle-errors.ts';
import { isClientDisconnect } from './client-disconnect.ts';
import { jsonBody } from './middleware/json-body.ts';
import { jsonOutput } from './middleware/json-output.ts';
import { logRequests } from './middleware/log-requests.ts';
import { requestId } from './middleware/request-id.ts';
import { unmatched } from './middleware/unmatched.ts';
import { adminProjectionRoutes } from './routes/admin-projections.ts';
import { healthRoutes, type HealthDeps } from './routes/health.ts';
import { requestMetrics } from './middleware/metrics.ts';
import { metricsRoutes, type HttpMetrics } from './routes/metrics.ts';
import type { AppState } from './state.ts';
import type { CommandDeps } from '../commands/context.ts';
import type { EventDecoder } from '../events/decode.ts';
import type { ObjectQueryCaches, ObjectQueryDeps } from '../queries/object-api.ts';
import type { Schema } from '../domain/schema.ts';
import { adminObjectRoutes } from './routes/admin-objects.ts';
import { adminUserRoutes } from './routes/admin-users.ts';
import { objectApiRoutes } from './routes/object-api.ts';
import type { FailureThrottle } from './throttle.ts';
import { clientAddress } from './client-address.ts';
import type { Models } from '../domain/model.ts';
import { controlValidator } from '../commands/push-data/control-validator.ts';
import { adminModelRoutes } from './routes/admin-models.ts';
import { adminRestApiRoutes } from './routes/admin-rest-apis.ts';
import { pushDataRoutes } from './routes/push-data.ts';
import type { PushCaches } from '../commands/push-data/push-data.ts';
import { reportingRoutes } from './routes/reporting.ts';
import type { ReportingDeps } from '../queries/reporting-api.ts';
import { adminUiRoutes } from './admin-ui/routes.ts';
import type { SessionStore } from './admin-ui/sessions.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import type { DownloadSigner } from '../blobs/signed-urls.ts';
import type { PdfReadLimiter } from '../blobs/pdf-read-limiter.ts';
import { adminFileRoutes } from './routes/admin-files.ts';
import { fileApiRoutes } from './routes/file-api.ts';
import { openApiRoutes } from './routes/openapi.ts';

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly runner: ProjectionRunner;
  readonly schema: Schema;
  readonly decode: EventDecoder;
  readonly adminToken: string;
  /** Failed authentications per client address: API keys, and the admin token (sign-in form and Bearer). */
  readonly throttles: { readonly apiKeys: FailureThrottle; readonly admin: FailureThrottle };
  readonly models: Models;
  /** What push-data requests keep between them (made at start-up). */
  readonly push: PushCaches;
  /** What Object API answers keep between requests (made at start-up). */
  readonly objectCaches: ObjectQueryCaches;
  /** API keys' principals, shared by the routers that take API keys (made at start-up). */
  readonly principals: PrincipalCache;
  /** Sessions of the admin interface, which the admin API's authentication also accepts (made at start-up). */
  readonly sessions: SessionStore;
  readonly reporting: ReportingDeps;
  readonly blobs: BlobStore;
  readonly signer: DownloadSigner;
  /** How many uploaded PDFs are read at once (made at start-up). */
  readonly pdfReads: PdfReadLimiter;
  /** The service's registry (served at /metrics, behind `token` when set) and its request histogram. */
  readonly metrics: HttpMetrics;
  /** What /readyz checks. */
  readonly readiness: HealthDeps['readiness'];
}

// Case-insensitive, as @koa/router matches routes: `/API/ADMIN/...` reaches the admin routers too,
// so it must pass the admin authentication as well.
const ADMIN_PATH = /^\/api\/admin(?:\/|$)/i;
const isAdminPath = (path: string) => ADMIN_PATH.test(path);
/** Admin routes that stream the raw request body themselves (never through the JSON body parser). */
const isRawBodyPath = (path: string) => /^\/api\/admin\/files$/i.test(path);

/** The koa application: cross-cutting middleware first, then one router per API family. */
export const createApp = (deps: AppDeps): Koa<AppState> => {
  const app = new Koa<AppState>();
  app.proxy = false;
  // Errors are answered by handleErrors. What reaches koa is an error after the answer started (a
  // failing body stream): logged once here, except a client closing the connection, which the
  // request log reports as a disconnect. (koa's own handler would print stacks to stderr.)
  app.on('error', (err: unknown, ctx?: { req: IncomingMessage; state?: AppState }) => {
    if (ctx && isClientDisconnect(err, ctx.req)) return;
    (ctx?.state?.log ?? deps.logger).error({ err }, 'error while answering');
  });

  const admin = adminAuth(deps.adminToken, { sessions: deps.sessions, throttle: deps.throttles.admin });
  const adminBody = jsonBody(deps.config.bodyLimitBytes);

  // First: it times the whole answer and sees the status handleErrors gave it.
  app.use(requestMetrics(deps.metrics.requests));
  app.use(clientAddress(deps.config.trustProxy));
  app.use(requestId(deps.logger));
  app.use(logRequests());
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(unmatched());
  app.use((ctx, next) => (isAdminPath(ctx.path) ? admin(ctx, () => (isRawBodyPath(ctx.path) ? next() : adminBody(ctx, next))) : next()));
  app.use(dispatchByPrefix(routerFamilies(deps)));
  return app;
};

/**
 * Every router the app mounts, by API family. Exported so that the OpenAPI test can walk the real
 * routes (a route missing from /openapi.json fails it).
 */
export const routerFamilies = (deps: AppDeps): RouterFamily[] => {
  const throttle = deps.throttles.apiKeys;
  const commands: CommandDeps = {
    events: deps.events,
    reads: deps.reads,
    decode: deps.decode,
    schema: deps.schema,
    runner: deps.runner,
    waitTimeoutMs: deps.config.waitTimeoutMs,
    logger: deps.logger,
    // The push-data commits' locks: an admin change to an object takes its turn with pushes to it.
    locks: deps.push.store.locks,
    objectStates: deps.push.objects,
    idempotencyLeaseMs: deps.config.idempotencyLeaseMs,
  };
  const principals = deps.principals;
  const queries: ObjectQueryDeps = { reads: deps.reads, schema: deps.schema, baseUrl: deps.config.baseUrl, ...deps.objectCaches };
  const families: RouterFamily[] = [
    { prefix: /^\/(?:healthz|readyz)/i, routers: [healthRoutes({ runner: deps.runner, readiness: deps.readiness })] },
    { prefix: /^\/metrics/i, routers: [metricsRoutes(deps.metrics)] },
    { prefix: /^\/openapi\.json/i, routers: [openApiRoutes()] },
    {
      prefix: /^\/api\/admin/i,
      routers: [
        adminProjectionRoutes(deps.runner),
        adminUserRoutes(commands),
        adminObjectRoutes(commands, queries),
        adminRestApiRoutes(commands, controlValidator(deps.models, deps.schema)),
        adminModelRoutes(deps.models),
        adminFileRoutes(commands, { blobs: deps.blobs, fileLimitBytes: deps.config.files.fileLimitBytes, pdfReads: deps.pdfReads }),
      ],
    },
    { prefix: /^\/api\/v0-object/i, routers: [objectApiRoutes({ ...queries, events: deps.events, decode: deps.decode }, deps.reads, throttle, principals)] },
    { prefix: /^\/api\/push-data/i, routers: [pushDataRoutes(commands, deps.push, deps.models, throttle, deps.config.bodyLimitBytes, principals)] },
    { prefix: /^\/api\/reporting\/v0/i, routers: [reportingRoutes(deps.reporting, deps.reads, throttle, principals)] },
    { prefix: /^\/admin/i, routers: [adminUiRoutes({ ...deps, commands, objects: { ...queries, events: deps.events, decode: deps.decode }, signInThrottle: deps.throttles.admin })] },
    {
      prefix: /^\/api\/v0-file/i,
      routers: [
        fileApiRoutes({ commands, reads: deps.reads, throttle, blobs: deps.blobs, signer: deps.signer, bodyLimitBytes: deps.config.bodyLimitBytes, principals }),
      ],
    },
  ] as unknown as RouterFamily[];
  return families;
};
