import { Worker } from 'node:worker_threads';
import { workerBootstrap } from '../drivers/worker-bootstrap.ts';
import type { Config } from '../config/config.ts';
import { combinedProgress, keepRebuildLeases, rebuildGroups, rebuildLeaseTtl, rebuildMemory, REBUILD_OLD_SPACE_FLOOR_MB, RebuildInProgressError, type GroupShare, type RebuildProgress } from '../projections/rebuild.ts';
import type { LeaseStore } from '../projections/read-store.ts';
import type { RebuildLauncher } from '../projections/runner.ts';
import { PartQueue } from '../projections/stream-share.ts';
import { withOldSpaceFloor } from '../drivers/worker-heap.ts';
import type { RebuildWorkerInput, RebuildWorkerMessage, ShareMessage } from './rebuild-worker.ts';

const bootstrap = workerBootstrap(import.meta.url, 'rebuild-worker');

type Options = Pick<RebuildWorkerInput, 'batchSize' | 'resumeAfterStop'> & {
  readonly onProgress?: (p: RebuildProgress) => void;
  /** Worker threads to spread the projections over; SVC_REBUILD_WORKERS by default. */
  readonly workers?: number;
  /** Where this thread renews the workers' rebuild leases while they run (see keepRebuildLeases). */
  readonly leases?: LeaseStore;
};

/** A worker's side of shared streams, as the starting thread relays it (see rebuildInWorker). */
type Relay = { readonly share?: GroupShare; readonly onShare: (message: Extract<ShareMessage, { kind: 'share-offer' | 'share-take' | 'share-folded' }>) => void };

/** A worker's failure as thrown in the worker: its stack names the statement that failed there. */
const failure = (message: { readonly message: string; readonly stack?: string }): Error => {
  const e = new Error(message.message);
  if (message.stack) e.stack = message.stack;
  return e;
};

/**
 * One worker thread rebuilding `names` in one pass over the log (and then folding parts of shared
 * streams), its memory bounded by its config's cache. Resolves to its progress, or undefined for
 * a worker that only helped. `post` sends it a message.
 */
const runWorker = (config: Config, names: readonly string[], owner: string, options: Options, relay: Relay, signal: AbortSignal): { worker: Worker; done: Promise<RebuildProgress | undefined>; post: (m: ShareMessage) => void } => {
  const { onProgress, workers: _, leases, ...rest } = options;
  const input: RebuildWorkerInput = { config, projections: names, owner, ...rest, progress: onProgress !== undefined, ...(relay.share ? { share: relay.share } : {}) };
  const worker = new Worker(bootstrap, { eval: true, workerData: input, resourceLimits: rebuildMemory(config.rebuildCacheBytes).heap });
  const done = new Promise<RebuildProgress | undefined>((resolve, reject) => {
    const stopRenewing = leases ? keepRebuildLeases(leases, names, owner, rebuildLeaseTtl(config.leases.ttlMs), config.leases.renewMs) : () => undefined;
    let settled = false;
    const stop = () => worker.postMessage('stop');
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    worker.on('message', (message: RebuildWorkerMessage) => {
      if (message.kind === 'progress') return onProgress?.(message.progress);
      if (message.kind === 'share-offer' || message.kind === 'share-take' || message.kind === 'share-folded') return relay.onShare(message);
      if (message.kind === 'share-part' || message.kind === 'share-helped') return;
      settled = true;
      // Its engines are closed before it answers: nothing is left for it to do.
      void worker.terminate();
      if (message.kind === 'done') resolve(message.progress);
      else if (message.kind === 'helped') resolve(undefined);
      else reject(message.inProgress ? new RebuildInProgressError(names.join(', ')) : failure(message));
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
  return { worker, done, post: (m) => worker.postMessage(m) };
};

/**
 * Rebuilds in worker threads of their own: the projections are shared out among up to
 * SVC_REBUILD_WORKERS threads (balanced by cost, each reading the log itself, each given its share of
 * SVC_REBUILD_CACHE by the documents its projections keep, so the memory bound holds in total), whose progress is reported as one. The
 * streams of the objects projection are shared by all of them (stream-share.ts): this thread keeps
 * the queue of their parts, which the owner fills and every worker takes from by message. A stop
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
    // The queue of shared streams' parts is kept here: the owner offers them, every worker takes them by message.
    const workers: ReturnType<typeof runWorker>[] = [];
    const shared = groups.find((g) => g.share?.role === 'owner');
    const queue = shared && new PartQueue(shared.share!.projection);
    void queue?.done.then(() => workers[groups.indexOf(shared!)]!.post({ kind: 'share-helped' }), () => undefined);
    const onShare = (i: number): Relay['onShare'] => (message) => {
      if (message.kind === 'share-offer') queue?.offer(message.offer);
      else if (message.kind === 'share-folded') queue?.folded();
      else void queue?.take().then((part) => workers[i]!.post({ kind: 'share-part', part }));
    };
    try {
      // The workers' heaps start with room for the documents their folds promote and replace (see REBUILD_OLD_SPACE_FLOOR_MB).
      withOldSpaceFloor(REBUILD_OLD_SPACE_FLOOR_MB, () =>
        groups.map((g, i) => {
          // Shared by the documents each group keeps, not by its CPU cost: the objects projection costs
          // much CPU but, folded stream by stream, holds few documents at a time.
          const share = groups.length === 1 ? config.rebuildCacheBytes : Math.floor((config.rebuildCacheBytes * g.state) / total);
          const onProgress =
            report &&
            g.projectors.length > 0 &&
            ((p: RebuildProgress) => {
              latest[i] = p;
              if (latest.every((l, k) => l !== undefined || groups[k]!.projectors.length === 0)) report(combinedProgress(latest.filter((l) => l !== undefined)));
            });
          const names = g.projectors.map((p) => p.name);
          const run = runWorker({ ...config, rebuildCacheBytes: share }, names, owner, { ...more, ...(onProgress ? { onProgress } : {}) }, { ...(g.share ? { share: g.share } : {}), onShare: onShare(i) }, stopAll.signal);
          workers.push(run);
          return run.worker;
        }),
      );
      const runs = workers.map((run) =>
        run.done.catch((e: unknown) => {
          stop();
          throw e;
        }),
      );
      const settled = await Promise.allSettled(runs);
      const failure = settled.find((s) => s.status === 'rejected');
      if (failure) throw failure.reason;
      return combinedProgress(settled.flatMap((s) => (s as PromiseFulfilledResult<RebuildProgress | undefined>).value ?? []));
    } finally {
      signal.removeEventListener('abort', stop);
    }
  };
