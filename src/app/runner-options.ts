import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { Projector } from '../projections/projector.ts';
import type { RunnerOptions } from '../projections/runner.ts';
import type { Engines } from './engines.ts';
import { rebuildInWorker } from './rebuild-in-worker.ts';

/**
 * The projection runner as the role asks: `api` only follows the checkpoints other processes
 * store; `all` and `projector` take projection leases and fold, running rebuilds in a worker thread.
 */
export const runnerOptions = (config: Config, engines: Engines, projectors: readonly Projector[], logger: Logger): RunnerOptions => ({
  events: engines.events,
  reads: engines.reads,
  projectors,
  logger,
  fold: config.role !== 'api',
  leaseTtlMs: config.leases.ttlMs,
  leaseRenewMs: config.leases.renewMs,
  followMs: config.checkpointPollMs,
  launchRebuild: rebuildInWorker(config, { leases: engines.reads }),
  cacheBytes: config.projectionCacheBytes,
});
