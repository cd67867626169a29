import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { serviceLogger } from './log-destination.ts';
import { resolveAdminToken } from './admin-token.ts';
import type { Config } from '../config/config.ts';
import { openEngines, SERVING_CHECKPOINT_MS, type Engines } from './engines.ts';
import { createApp } from '../http/koa-app.ts';
import { startHttpServer } from './http-server.ts';
import { ensurePrivateDirectory } from '../drivers/private-files.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import { loadAppModel } from './app-model.ts';
import { snapshotSpec } from '../projections/reporting/snapshots.ts';
import { openBlobStore } from './open-blob-store.ts';
import { DownloadSigner, resolveDownloadSecret } from '../blobs/signed-urls.ts';
import { PdfReadLimiter } from '../blobs/pdf-read-limiter.ts';
import { runnerStatus } from '../queries/reporting-api.ts';
import { AnswerCache } from '../queries/answer-cache.ts';
import { LiveInfos } from '../queries/live-infos.ts';
import { LiveRows } from '../queries/live-rows.ts';
import { LiveMembers } from '../queries/live-members.ts';
import { ChangedObjects } from '../queries/changed-objects.ts';
import { InflateThread } from '../projections/reporting/inflate-thread.ts';
import { ReplayLimiter } from '../queries/replay-limit.ts';
import { countedCaches, createCaches } from './caches.ts';
import { ServiceMetrics } from './metrics.ts';
import { httpMetricsOf, readinessOf } from './observability.ts';
import { startProjector } from './projector.ts';
import { runnerOptions } from './runner-options.ts';

export interface Service {
  readonly server: Server;
  readonly url: string;
  readonly engines: Engines;
  readonly runner: ProjectionRunner;
  readonly adminToken: string;
  /** Stops taking connections, lets in-flight requests finish, flushes projections, closes engines. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  readonly logger?: Logger;
  readonly clock?: () => number;
}

export const startService = async (config: Config, options: ServiceOptions = {}): Promise<Service> => {
  const logger = options.logger ?? serviceLogger(config.logLevel);
  // Everything under the data directory is the service's alone (databases, secrets, files).
  ensurePrivateDirectory(config.dataDir);
  if (config.role === 'projector') return startProjector(config, logger, options);
  const admin = resolveAdminToken(config.adminToken, config.dataDir);
  // Only the path is logged: standard output lands in log collectors, the token stays in its 0600 file.
  if (admin.generated) logger.warn({ file: admin.file }, 'admin token generated: it is in this file only (mode 0600)');
  const model = loadAppModel(config);
  const engines = await openEngines(config, { readStorePageCacheBytes: config.readStoreCacheBytes, readStoreCheckpointEveryMs: SERVING_CHECKPOINT_MS, ...(options.clock ? { clock: options.clock } : {}) });
  const metrics = new ServiceMetrics(config.role);
  const runner = new ProjectionRunner({ ...runnerOptions(config, engines, model.projectors, logger), onBatch: metrics.onBatch });
  // What commands append is counted by type; the runner and queries only read.
  const events = metrics.countAppends(engines.events);
  const caches = createCaches({ events, runner, decode: model.decode, reads: engines.reads, snapshotCacheBytes: config.snapshotCacheBytes, objectCacheBytes: config.objectCacheBytes, commandCacheBytes: config.commandCacheBytes, ...(options.clock ? { clock: options.clock } : {}) });
  metrics.watchProjections(() => runner.status());
  metrics.watchCaches(countedCaches(caches));
  metrics.watchThrottles({ 'api-key': caches.throttles.apiKeys, admin: caches.throttles.admin });
  await engines.reads.ensureCollection(snapshotSpec);
  await runner.start();
  const blobs = await openBlobStore(config, engines);
  const secret = resolveDownloadSecret(config.files.downloadSecret, config.dataDir);
  if (secret.generated) logger.info({ file: secret.file }, 'download URL secret generated (mode 0600)');
  const signer = new DownloadSigner({
    secret: secret.secret,
    baseUrl: config.baseUrl,
    validSeconds: config.files.downloadValidSeconds,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  // Shared by the live rows and descriptions: both follow the same stretches of the log.
  const changes = new ChangedObjects(engines.events);
  const inflater = new InflateThread();
  const app = createApp({
    config,
    logger,
    events,
    reads: engines.reads,
    runner,
    schema: model.schema,
    decode: model.decode,
    adminToken: admin.token,
    throttles: caches.throttles,
    models: model.models,
    push: caches.push,
    objectCaches: caches.objects,
    principals: caches.principals,
    sessions: caches.sessions,
    blobs,
    signer,
    pdfReads: new PdfReadLimiter(config.files.pdfReads),
    metrics: httpMetricsOf(config, metrics),
    readiness: readinessOf(config, engines, logger),
    reporting: {
      reads: engines.reads,
      events: engines.events,
      statusOf: runnerStatus(runner),
      schema: model.schema,
      collections: model.collections,
      folds: model.folds,
      parsedSnapshots: caches.parsedSnapshots,
      inflate: inflater.inflate,
      clock: options.clock ?? Date.now,
      versionOf: (projection) => runner.version(projection),
      answers: new AnswerCache(config.reporting.cacheBytes),
      replays: new ReplayLimiter(config.reporting.atConcurrency, config.reporting.atQueue),
      liveInfos: new LiveInfos(engines.reads, changes, config.reporting.objectsCacheBytes),
      liveRows: new LiveRows(engines.reads, changes, config.reporting.objectsCacheBytes),
      liveMembers: new LiveMembers(config.reporting.objectsCacheBytes),
    },
  });
  const http = await startHttpServer(app.callback(), config, logger);
  const { server, port } = http;
  logger.info({ port, host: config.host, baseUrl: config.baseUrl, ...engines.describe }, 'service started');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await http.stop(config.shutdownTimeoutMs);
      await runner.stop();
      await engines.close();
      await blobs.close();
      await inflater.close();
      logger.info('service stopped');
    })());
  return { server, url: `http://127.0.0.1:${port}`, engines, runner, adminToken: admin.token, close };
};
