import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import type { Projector, RebuildTarget } from './projector.ts';
import type { ReadStore } from './read-store.ts';

export const REBUILD_SUFFIX = '__rebuild';
export const rebuildCheckpoint = (projection: string) => `rebuild:${projection}`;

export interface RebuildProgress {
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
  readonly projector: Projector;
  readonly batchSize?: number;
  readonly onProgress?: (progress: RebuildProgress) => void;
  /** Stops after the batch in progress; the next run resumes from there. */
  readonly signal?: AbortSignal;
}

/**
 * Blue/green rebuild: folds the whole log into fresh copies of the projector's collections (with
 * their own checkpoint, so an interrupted run resumes) while the live ones keep serving, then
 * switches them in atomically. The live projection, wherever it runs, finds its checkpoint moved
 * and carries on from the rebuilt position: nothing is missed, nothing applied twice.
 */
export const rebuildProjection = async (options: RebuildOptions): Promise<RebuildProgress> => {
  const { events, reads, projector } = options;
  const batchSize = options.batchSize ?? 2000;
  const target: RebuildTarget = { physical: (c) => `${c}${REBUILD_SUFFIX}` };
  const checkpointName = rebuildCheckpoint(projector.name);
  let position = (await reads.getCheckpoint(checkpointName))?.position ?? 0;
  for (const spec of projector.collections) {
    // A rebuild without a checkpoint starts from nothing, whatever an earlier attempt left.
    if (position === 0) await reads.dropCollection(target.physical(spec.name));
    await reads.ensureCollection({ ...spec, name: target.physical(spec.name) });
  }
  const started = Date.now();
  let processed = 0;
  let head = await events.headPosition();
  const progress = (phase: RebuildProgress['phase']): RebuildProgress => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? processed / seconds : 0;
    // Positions approximate events on the embedded store; on EventStoreDB they are bytes, so the ETA is rougher.
    const remaining = Math.max(0, head - position);
    const p = { projection: projector.name, processed, position, head, eventsPerSecond: Math.round(rate), etaSeconds: rate > 0 ? Math.ceil(remaining / rate) : null, phase };
    options.onProgress?.(p);
    return p;
  };
  for (;;) {
    if (options.signal?.aborted) return progress('interrupted');
    const batch: RecordedEvent[] = [];
    for await (const e of events.readAll({ after: position, maxCount: batchSize })) batch.push(e);
    if (batch.length === 0) break;
    const docs = new BatchDocs(reads, target.physical);
    for (const event of batch) {
      if (projector.handles === undefined || projector.handles.includes(event.type)) await projector.apply(event, docs);
    }
    const last = batch[batch.length - 1]!;
    await reads.commitBatch(checkpointName, docs.ops(), position === 0 ? null : { position }, { position: last.position });
    position = last.position;
    processed += batch.length;
    await projector.afterCommit?.(reads, last, target);
    if (last.position > head) head = await events.headPosition();
    progress('building');
  }
  progress('switching');
  await reads.swapIn(
    projector.collections.map((c) => [target.physical(c.name), c.name] as const),
    projector.name,
    { position },
    checkpointName,
  );
  await projector.afterRebuild?.(reads);
  return progress('done');
};
