/**
 * A worker thread that performs one rebuild (started by rebuild-in-worker.ts): it opens its own
 * connections to the configured engines, so the thread that serves requests and folds live
 * batches is never held up by the rebuild's long stretches of synchronous work.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { rebuildMemory, rebuildProjections, RebuildInProgressError, type RebuildProgress } from '../projections/rebuild.ts';
import { loadAppModel } from './app-model.ts';
import { openEngines } from './engines.ts';

export interface RebuildWorkerInput {
  readonly config: Config;
  readonly projections: readonly string[];
  readonly owner: string;
  readonly batchSize?: number;
  /** Post each progress report (the CLI draws its progress bar from them). */
  readonly progress?: boolean;
  /** false: a stop is the operator's, recorded as interrupted (the CLI's Ctrl-C); true by default. */
  readonly resumeAfterStop?: boolean;
}

export type RebuildWorkerMessage =
  | { readonly kind: 'done'; readonly progress: import('../projections/rebuild.ts').RebuildProgress }
  | { readonly kind: 'progress'; readonly progress: import('../projections/rebuild.ts').RebuildProgress }
  | { readonly kind: 'failed'; readonly message: string; readonly inProgress: boolean };

const input = workerData as RebuildWorkerInput;
const port = parentPort!;
const controller = new AbortController();
const REBUILD_BUSY_TIMEOUT_MS = 10 * 60_000;
port.on('message', (message) => {
  if (message === 'stop') controller.abort();
});

const run = async (): Promise<RebuildWorkerMessage> => {
  const model = loadAppModel(input.config);
  // A rebuild runs in the background: it waits for the other workers' and the service's large commits
  // (seconds each at a million events) rather than failing after the interactive 5 s.
  const engines = await openEngines(input.config, { readStorePageCacheBytes: rebuildMemory(input.config.rebuildCacheBytes).pageCacheBytes, readStoreBusyTimeoutMs: REBUILD_BUSY_TIMEOUT_MS });
  try {
    const projectors = model.projectors.filter((p) => input.projections.includes(p.name));
    const progress = await rebuildProjections({
      events: engines.events,
      reads: engines.reads,
      projectors,
      owner: input.owner,
      signal: controller.signal,
      resumeAfterStop: input.resumeAfterStop ?? true,
      ...(input.batchSize ? { batchSize: input.batchSize } : {}),
      ...(input.progress ? { onProgress: (progress: RebuildProgress) => port.postMessage({ kind: 'progress', progress } satisfies RebuildWorkerMessage) } : {}),
      leaseTtlMs: input.config.leases.ttlMs,
      leaseRenewMs: input.config.leases.renewMs,
      cacheBytes: input.config.rebuildCacheBytes,
    });
    return { kind: 'done', progress };
  } finally {
    await engines.close();
  }
};

run()
  .then(
    (message) => port.postMessage(message),
    (e: Error) => port.postMessage({ kind: 'failed', message: e.message, inProgress: e instanceof RebuildInProgressError } satisfies RebuildWorkerMessage),
  )
  // Listening for "stop" must not keep the thread alive once the rebuild has ended.
  .finally(() => port.unref());
