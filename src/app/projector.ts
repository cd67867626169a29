import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { createProjectorApp } from '../http/projector-app.ts';
import { snapshotSpec } from '../projections/reporting/snapshots.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import { loadAppModel } from './app-model.ts';
import { openEngines, SERVING_CHECKPOINT_MS } from './engines.ts';
import { startHttpServer } from './http-server.ts';
import { runnerOptions } from './runner-options.ts';
import type { Service, ServiceOptions } from './service.ts';
import { ServiceMetrics } from './metrics.ts';
import { httpMetricsOf, readinessOf } from './observability.ts';

/**
 * The projector role: runs the projections whose leases it gets (standing by for the others) and
 * serves only /healthz, /readyz, /metrics and /status. No admin token: it answers no command and no query.
 */
export const startProjector = async (config: Config, logger: Logger, options: ServiceOptions = {}): Promise<Service> => {
  const model = loadAppModel(config);
  const engines = await openEngines(config, { readStorePageCacheBytes: config.readStoreCacheBytes, readStoreCheckpointEveryMs: SERVING_CHECKPOINT_MS, ...(options.clock ? { clock: options.clock } : {}) });
  const metrics = new ServiceMetrics(config.role);
  const runner = new ProjectionRunner({ ...runnerOptions(config, engines, model.projectors, logger), onBatch: metrics.onBatch });
  metrics.watchProjections(() => runner.status());
  await engines.reads.ensureCollection(snapshotSpec);
  await runner.start();
  const app = createProjectorApp({
    runner,
    logger,
    metrics: httpMetricsOf(config, metrics),
    readiness: readinessOf(config, engines, logger),
  });
  const http = await startHttpServer(app.callback(), config, logger);
  logger.info({ role: 'projector', owner: runner.owner, port: http.port, host: config.host, ...engines.describe }, 'projector started');
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await http.stop(config.shutdownTimeoutMs);
      await runner.stop();
      await engines.close();
      logger.info('projector stopped');
    })());
  return { server: http.server, url: `http://127.0.0.1:${http.port}`, engines, runner, adminToken: '', close };
};
