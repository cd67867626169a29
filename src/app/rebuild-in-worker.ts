import { Worker } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { combinedProgress, keepRebuildLeases, rebuildGroups, rebuildLeaseTtl, rebuildMemory, RebuildInProgressError, type RebuildProgress } from '../projections/rebuild.ts';
import type { LeaseStore } from '../projections/read-store.ts';
import type { RebuildLauncher } from '../projections/runner.ts';
import type { RebuildWorkerInput, RebuildWorkerMessage } from './rebuild-worker.ts';

// Run from the TypeScript sources (tsx) or from compiled JavaScript: the worker is the sibling file.
const fromSources = import.meta.url.endsWith('.ts');
const workerFile = new URL(fromSources ? './rebuild-worker.ts' : './rebuild-worker.js', import.meta.url).href;
// A worker thread does not inherit the TypeScript loader of the thread that starts it: from the
// sources it registers tsx first (as bin/svc.mjs does), then loads the worker module.
const bootstrap = fromSources
  ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerFile)}); });`
  : `import(${JSON.stringify(workerFile)});`;

type Options = Pick<RebuildWorkerInput, 'batchSize' | 'resumeAfterStop'> & {
  readonly onProgress?: (p: RebuildProgress) => void;
  /** Worker threads to spread the projections over; SVC_REBUILD_WORKERS by default. */
  readonly workers?: number;
  /** Where this thread renews the workers' rebuild leases while they run (see keepRebuildLeases). */
  readonly leases?: LeaseStore;
};

/** One worker thread rebuilding `names` in one pass over the log, its memory bounded by its config's cache. */
const runWorker = (config: Config, names: readonly string[], owner: string, options: Options, signal: AbortSignal): Promise<RebuildProgress> =>
  new Promise<RebuildProgress>((resolve, reject) => {
    const { onProgress, workers: _, leases, ...rest } = options;
    const input: RebuildWorkerInput = { config, projections: names, owner, ...rest, progress: onProgress !== undefined };
    const worker = new Worker(bootstrap, { eval: true, workerData: input, resourceLimits: { maxOldGenerationSizeMb: rebuildMemory(config.rebuildCacheBytes).maxOldGenerationSizeMb } });
    const stopRenewing = leases ? keepRebuildLeases(leases, names, owner, rebuildLeaseTtl(config.leases.ttlMs), config.leases.renewMs) : () => undefined;
    let settled = false;
    const stop = () => worker.postMessage('stop');
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    worker.on('message', (message: RebuildWorkerMessage) => {
      if (message.kind === 'progress') return onProgress?.(message.progress);
      settled = true;
      // Its engines are closed before it answers: nothing is left for it to do.
      void worker.terminate();
      if (message.kind === 'done') resolve(message.progress);
      else reject(message.inProgress ? new RebuildInProgressError(names.join(', ')) : new Error(message.message));
    });
    worker.on('error', (e) => {
      if (!settled) reject(e);
      settled = true;
    });
    worker.on('exit', (code) => {
      stopRenewing();
      signal.removeEventListener('abort', stop);
      if (!settled) reject(new Error(`The rebuild worker exited (code ${code}) before it finished`));
      settled = true;
    });
  });

/**
 * Rebuilds in worker threads of their own: the projections are shared out among up to
 * SVC_REBUILD_WORKERS threads (balanced by cost, each reading the log itself, each given its share of
 * SVC_REBUILD_CACHE by the documents its projections keep, so the memory bound holds in total), whose progress is reported as one. A stop
 * asks every worker to finish the page in progress (the rebuild is then resumed by the next holder
 * of the projections; each has its own checkpoint); a failure of one stops the others the same way.
 */
export const rebuildInWorker =
  (config: Config, more: Options = {}): RebuildLauncher =>
  async (projectors, { owner, signal }) => {
    const groups = rebuildGroups(projectors, more.workers ?? config.rebuildWorkers);
    const total = groups.reduce((n, g) => n + g.state, 0);
    const stopAll = new AbortController();
    const stop = () => stopAll.abort();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    const latest: (RebuildProgress | undefined)[] = groups.map(() => undefined);
    const report = more.onProgress;
    try {
      const settled = await Promise.allSettled(
        groups.map((g, i) => {
          // Shared by the documents each group keeps, not by its CPU cost: the objects projection costs
          // much CPU but, folded stream by stream, holds few documents at a time.
          const share = groups.length === 1 ? config.rebuildCacheBytes : Math.floor((config.rebuildCacheBytes * g.state) / total);
          const onProgress =
            report &&
            ((p: RebuildProgress) => {
              latest[i] = p;
              if (latest.every((l) => l !== undefined)) report(combinedProgress(latest as RebuildProgress[]));
            });
          const names = g.projectors.map((p) => p.name);
          return runWorker({ ...config, rebuildCacheBytes: share }, names, owner, { ...more, ...(onProgress ? { onProgress } : {}) }, stopAll.signal).catch((e: unknown) => {
            stop();
            throw e;
          });
        }),
      );
      const failure = settled.find((s) => s.status === 'rejected');
      if (failure) throw failure.reason;
      return combinedProgress(settled.map((s) => (s as PromiseFulfilledResult<RebuildProgress>).value));
    } finally {
      signal.removeEventListener('abort', stop);
    }
  };
