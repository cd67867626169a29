import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import type { Projector, RebuildTarget } from './projector.ts';
import type { ReadStore } from './read-store.ts';

export const REBUILD_SUFFIX = '__rebuild';
export const rebuildCheckpoint = (projection: string) => `rebuild:${projection}`;

export interface RebuildProgress {
  /** The projection rebuilt, or the names of all of them joined by ", ". */
  readonly projection: string;
  /** Events read from the log by this run. */
  readonly processed: number;
  readonly position: number;
  readonly head: number;
  readonly eventsPerSecond: number;
  /** Seconds left at the current rate; null until it can be estimated. */
  readonly etaSeconds: number | null;
  readonly phase: 'building' | 'switching' | 'done' | 'interrupted';
}

export interface RebuildOptions {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly projectors: readonly Projector[];
  /** Events read from the log per page. */
  readonly batchSize?: number;
  readonly onProgress?: (progress: RebuildProgress) => void;
  /** Stops after the page in progress (and commits it); the next run resumes from there. */
  readonly signal?: AbortSignal;
  /** Longest time folded documents stay uncommitted (what an interruption without a signal can lose). */
  readonly commitEveryMs?: number;
}

/** Documents held in memory by a rebuild before it commits them and goes on reading from the store. */
const MAX_CACHED_DOCS = 2_000_000;
const MAX_PENDING_DOCS = 300_000;

const target: RebuildTarget = { physical: (c) => `${c}${REBUILD_SUFFIX}` };

interface Build {
  readonly projector: Projector;
  readonly checkpoint: string;
  /** The rebuild checkpoint as stored. */
  stored: number;
  docs: BatchDocs;
}

/**
 * Blue/green rebuild of one or more projections in one pass over the log: each is folded into
 * fresh copies of its collections (with its own checkpoint, so an interrupted run resumes) while
 * the live ones keep serving, then switched in atomically. A rebuild from the start keeps its
 * documents in memory and writes each once per commit, however many events touched it. The live
 * projection, wherever it runs, finds its checkpoint moved and carries on from the rebuilt
 * position: nothing is missed, nothing applied twice.
 */
export const rebuildProjections = async (options: RebuildOptions): Promise<RebuildProgress> => {
  const { events, reads, projectors } = options;
  const batchSize = options.batchSize ?? 2000;
  const commitEveryMs = options.commitEveryMs ?? 60_000;
  const builds: Build[] = [];
  for (const projector of projectors) {
    const checkpoint = rebuildCheckpoint(projector.name);
    const stored = (await reads.getCheckpoint(checkpoint))?.position ?? 0;
    for (const spec of projector.collections) {
      // A rebuild without a checkpoint starts from nothing, whatever an earlier attempt left.
      if (stored === 0) await reads.dropCollection(target.physical(spec.name));
      await reads.ensureCollection({ ...spec, name: target.physical(spec.name) });
    }
    builds.push({ projector, checkpoint, stored, docs: new BatchDocs(reads, target.physical, stored === 0) });
  }
  // Only events some projector folds are read (every projector ignores the others).
  const types = projectors.every((p) => p.handles) ? [...new Set(projectors.flatMap((p) => p.handles!))] : undefined;
  const started = Date.now();
  let position = Math.min(...builds.map((b) => b.stored));
  let processed = 0;
  let head = await events.headPosition();
  const name = projectors.map((p) => p.name).join(', ');
  const progress = (phase: RebuildProgress['phase']): RebuildProgress => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? processed / seconds : 0;
    // Positions approximate events on the embedded store; on EventStoreDB they are bytes, so the ETA is rougher.
    const remaining = Math.max(0, head - position);
    const p = { projection: name, processed, position, head, eventsPerSecond: Math.round(rate), etaSeconds: rate > 0 ? Math.ceil(remaining / rate) : null, phase };
    options.onProgress?.(p);
    return p;
  };

  const commit = async (b: Build, at: number) => {
    if (b.docs.pending === 0 && b.stored === at) return;
    await reads.commitBatch(b.checkpoint, b.docs.ops(), b.stored === 0 ? null : { position: b.stored }, { position: at });
    b.docs.written();
    b.stored = at;
    // Past this size the cache stops being the whole state: later misses read the committed documents.
    if (b.docs.size > MAX_CACHED_DOCS) b.docs = new BatchDocs(reads, target.physical, false);
  };
  let committedAt = Date.now();
  const commitAll = async (at: number) => {
    for (const b of builds) await commit(b, at);
    committedAt = Date.now();
  };

  for (;;) {
    if (options.signal?.aborted) {
      await commitAll(position);
      return progress('interrupted');
    }
    const headBefore = await events.headPosition();
    const batch: RecordedEvent[] = [];
    for await (const e of events.readAll({ after: position, maxCount: batchSize, ...(types ? { types } : {}) })) batch.push(e);
    if (batch.length === 0) {
      // Nothing any projector folds lies between `position` and the head read before the page.
      position = Math.max(position, headBefore);
      break;
    }
    for (const event of batch) {
      for (const b of builds) {
        if (event.position > b.stored && (b.projector.handles === undefined || b.projector.handles.includes(event.type))) await b.projector.apply(event, b.docs);
      }
    }
    const last = batch[batch.length - 1]!;
    position = last.position;
    processed += batch.length;
    for (const b of builds) {
      if (!b.projector.afterBatch) {
        b.docs.takeChanges();
        continue;
      }
      await b.projector.afterBatch({
        reads,
        last,
        changes: b.docs.takeChanges(),
        rebuild: target,
        state: async (collection) => {
          if (b.docs.complete) return b.docs.documents(collection);
          await commit(b, position);
          return reads.find(target.physical(collection));
        },
      });
    }
    if (Date.now() - committedAt > commitEveryMs || builds.some((b) => b.docs.pending > MAX_PENDING_DOCS)) await commitAll(position);
    if (last.position > head) head = await events.headPosition();
    progress('building');
  }
  await commitAll(position);
  progress('switching');
  for (const b of builds) {
    await reads.swapIn(
      b.projector.collections.map((c) => [target.physical(c.name), c.name] as const),
      b.projector.name,
      { position },
      b.checkpoint,
    );
    await b.projector.afterRebuild?.(reads);
  }
  return progress('done');
};

/** Rebuilds one projection (see rebuildProjections). */
export const rebuildProjection = (options: Omit<RebuildOptions, 'projectors'> & { readonly projector: Projector }): Promise<RebuildProgress> =>
  rebuildProjections({ ...options, projectors: [options.projector] });
