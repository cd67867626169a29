/**
 * A worker thread that performs one rebuild (started by rebuild-in-worker.ts): it opens its own
 * connections to the configured engines, so the thread that serves requests and folds live
 * batches is never held up by the rebuild's long stretches of synchronous work.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { helpRebuild, rebuildMemory, rebuildProjections, RebuildInProgressError, type GroupShare, type RebuildProgress } from '../projections/rebuild.ts';
import { type HelperShare, type OwnerShare, type SharedParts, type StreamOffer, type StreamPart } from '../projections/stream-share.ts';
import { loadAppModel } from './app-model.ts';
import { openEngines } from './engines.ts';
import { deflateHere } from '../projections/reporting/snapshot-chunks.ts';

export interface RebuildWorkerInput {
  readonly config: Config;
  readonly projections: readonly string[];
  readonly owner: string;
  readonly batchSize?: number;
  /** Post each progress report (the CLI draws its progress bar from them). */
  readonly progress?: boolean;
  /** false: a stop is the operator's, recorded as interrupted (the CLI's Ctrl-C); true by default. */
  readonly resumeAfterStop?: boolean;
  /** Its part in sharing a projection's streams with the other workers (rebuildGroups). */
  readonly share?: GroupShare;
}

/** Messages about shared streams, relayed between workers by the thread that started them. */
export type ShareMessage =
  | { readonly kind: 'share-offer'; readonly offer: StreamOffer | null }
  | { readonly kind: 'share-take' }
  | { readonly kind: 'share-folded' }
  | { readonly kind: 'share-part'; readonly part: StreamPart | null }
  | { readonly kind: 'share-helped' };

export type RebuildWorkerMessage =
  | { readonly kind: 'done'; readonly progress: import('../projections/rebuild.ts').RebuildProgress }
  | { readonly kind: 'progress'; readonly progress: import('../projections/rebuild.ts').RebuildProgress }
  /** A worker that only helped with another's streams: done, with no projection of its own. */
  | { readonly kind: 'helped' }
  | { readonly kind: 'failed'; readonly message: string; readonly stack?: string; readonly inProgress: boolean }
  | ShareMessage;

const input = workerData as RebuildWorkerInput;
const port = parentPort!;
const controller = new AbortController();
const REBUILD_BUSY_TIMEOUT_MS = 10 * 60_000;
let helped!: () => void;
const helpedNow = new Promise<void>((resolve) => (helped = resolve));
// A worker asks for one part at a time: answers come in the order asked.
const asking: ((part: StreamPart | null) => void)[] = [];
port.on('message', (message: 'stop' | ShareMessage) => {
  if (message === 'stop') controller.abort();
  else if (message.kind === 'share-helped') helped();
  else if (message.kind === 'share-part') asking.shift()?.(message.part);
});
const post = (message: RebuildWorkerMessage) => port.postMessage(message);

/** The share as this worker's side of it: the queue of parts is the starting thread's, asked by message. */
const shareOf = (share: GroupShare): OwnerShare | HelperShare => {
  const parts: SharedParts = {
    projection: share.projection,
    take: () => {
      post({ kind: 'share-take' });
      return new Promise((resolve) => asking.push(resolve));
    },
    folded: () => post({ kind: 'share-folded' }),
    // A failure stops every worker (the starting thread's doing): the owner then sees its stop.
    failed: () => undefined,
  };
  if (share.role === 'helper') return { ...parts, role: 'helper' };
  return {
    ...parts,
    role: 'owner',
    workers: share.workers,
    // Only the first counts: the queue in the starting thread ignores the rest.
    offer: (offer) => post({ kind: 'share-offer', offer }),
    helped: () => helpedNow,
  };
};

const run = async (): Promise<RebuildWorkerMessage> => {
  // This thread's loop serves no request: snapshot chunks are compressed on it, not handed to the pool and waited for.
  const model = loadAppModel(input.config, { snapshotDeflate: deflateHere });
  // A rebuild runs in the background: it waits for the other workers' and the service's large commits
  // (seconds each at a million events) rather than failing after the interactive 5 s.
  const engines = await openEngines(input.config, { readStorePageCacheBytes: rebuildMemory(input.config.rebuildCacheBytes).pageCacheBytes, readStoreBusyTimeoutMs: REBUILD_BUSY_TIMEOUT_MS });
  try {
    const projectors = model.projectors.filter((p) => input.projections.includes(p.name));
    const share = input.share && shareOf(input.share);
    const helper = share?.role === 'helper' ? share : undefined;
    const help = (parts: HelperShare) =>
      helpRebuild({ events: engines.events, reads: engines.reads, projector: model.projectors.find((p) => p.name === parts.projection)!, share: parts, owner: input.owner, signal: controller.signal, ...(input.batchSize ? { batchSize: input.batchSize } : {}) });
    if (helper && projectors.length === 0) {
      await help(helper);
      return { kind: 'helped' };
    }
    const progress = await rebuildProjections({
      events: engines.events,
      reads: engines.reads,
      projectors,
      owner: input.owner,
      signal: controller.signal,
      resumeAfterStop: input.resumeAfterStop ?? true,
      ...(input.batchSize ? { batchSize: input.batchSize } : {}),
      ...(input.progress ? { onProgress: (progress: RebuildProgress) => post({ kind: 'progress', progress }) } : {}),
      leaseTtlMs: input.config.leases.ttlMs,
      leaseRenewMs: input.config.leases.renewMs,
      cacheBytes: input.config.rebuildCacheBytes,
      ...(share?.role === 'owner' ? { share } : {}),
    });
    // Its own projections done (or stopped: then it takes no part), parts of the shared streams.
    if (helper) await help(helper);
    return { kind: 'done', progress };
  } finally {
    await engines.close();
  }
};

run()
  .then(
    (message) => post(message),
    (e: Error) => post({ kind: 'failed', message: e.message, ...(e.stack ? { stack: e.stack } : {}), inProgress: e instanceof RebuildInProgressError }),
  )
  // Listening for "stop" must not keep the thread alive once the rebuild has ended.
  .finally(() => port.unref());
