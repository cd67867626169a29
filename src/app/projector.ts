import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import { createProjectorApp } from '../http/projector-app.ts';
import { snapshotSpec } from '../projections/reporting/snapshots.ts';
import { ProjectionRunner } from '../projections/runner.ts';
import { loadAppModel } from './app-model.ts';
import { openEngines } from './engines.ts';
import { startHttpServer } from './http-server.ts';
import { runnerOptions } from './runner-options.ts';
import type { Service, ServiceOptions } from './service.ts';

/**
 * The projector role: runs the projections whose leases it gets (standing by for the others) and
 * serves only /healthz and /status. No admin token: it answers no command and no query.
 */
export const startProjector = async (config: Config, logger: Logger, options: ServiceOptions = {}): Promise<Service> => {
  const model = loadAppModel(config);
  const engines = await openEngines(config, options.clock ? { clock: options.clock } : {});
  const runner = new ProjectionRunner(runnerOptions(config, engines, model.projectors, logger));
  await engines.reads.ensureCollection(snapshotSpec);
  await runner.start();
  const http = await startHttpServer(createProjectorApp({ runner, logger }).callback(), config, logger);
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
