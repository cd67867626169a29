import { MemoryDocs } from '../projections/batch-docs.ts';
import type { Projector, RebuildTarget } from '../projections/projector.ts';
import type { Doc, ReadStore, WriteOp } from '../projections/read-store.ts';

/** Snapshots of collection folds: where an answer "as at" a past instant starts its replay. */
export const SNAPSHOTS = 'rc_snapshots';
const CHUNK = 2000;

type SnapshotMeta = {
  readonly id: string;
  readonly collection: string;
  readonly position: number;
  /** When the last event folded into the snapshot was recorded. */
  readonly recordedAt: string;
  readonly chunks: number;
};
type SnapshotChunk = { readonly id: string; readonly entries: readonly (readonly [string, Doc])[] };

export const snapshotSpec = { name: SNAPSHOTS, indexes: ['collection', 'recordedAt', 'position'] };

/** The newest snapshot of a fold taken at or before `at` (or the newest of all). */
export const latestSnapshot = async (reads: ReadStore, fold: string, at?: Date): Promise<SnapshotMeta | null> => {
  const [meta] = await reads.find<SnapshotMeta>(SNAPSHOTS, {
    where: { collection: fold, ...(at ? { recordedAt: { $lte: at.toISOString() } } : {}) },
    sort: [['recordedAt', 'desc'], ['position', 'desc']],
    limit: 1,
  });
  return meta ?? null;
};

/** Snapshots taken while a fold is rebuilt are kept under this key until the rebuild is switched in. */
const rebuildKey = (fold: string) => `rebuild:${fold}`;

/** Copies the fold's read-model collections into a snapshot (in chunks, to stay under document size limits). */
export const takeSnapshot = async (reads: ReadStore, fold: Projector, position: number, recordedAt: Date, rebuild?: RebuildTarget): Promise<void> => {
  const entries: (readonly [string, Doc])[] = [];
  for (const spec of fold.collections) for (const doc of await reads.find(rebuild ? rebuild.physical(spec.name) : spec.name)) entries.push([spec.name, doc]);
  const key = rebuild ? rebuildKey(fold.name) : fold.name;
  const id = `${key}@${position}`;
  const chunks: WriteOp[] = [];
  for (let i = 0; i * CHUNK < entries.length; i++) {
    chunks.push({ kind: 'put', collection: SNAPSHOTS, doc: { id: `${id}#${i}`, entries: entries.slice(i * CHUNK, (i + 1) * CHUNK) } as SnapshotChunk });
  }
  const meta: SnapshotMeta = { id, collection: key, position, recordedAt: recordedAt.toISOString(), chunks: chunks.length };
  await reads.bulkWrite([...chunks, { kind: 'put', collection: SNAPSHOTS, doc: meta }]);
};

/** A fold's state from a snapshot, in memory, ready to replay further events onto. */
export const loadSnapshot = async (reads: ReadStore, meta: SnapshotMeta): Promise<MemoryDocs> => {
  const docs = new MemoryDocs();
  const ids = Array.from({ length: meta.chunks }, (_, i) => `${meta.id}#${i}`);
  const chunks = await reads.getMany<SnapshotChunk>(SNAPSHOTS, ids);
  for (const id of ids) {
    const chunk = chunks.get(id);
    if (!chunk) throw new Error(`Snapshot ${meta.id} is missing chunk ${id}`);
    for (const [collection, doc] of chunk.entries) docs.put(collection, doc);
  }
  return docs;
};

const snapshotsOf = (reads: ReadStore, key: string) => reads.find<SnapshotMeta>(SNAPSHOTS, { where: { collection: key } });

const deleteSnapshots = async (reads: ReadStore, metas: readonly SnapshotMeta[]) => {
  const ops: WriteOp[] = metas.flatMap((m) => [
    { kind: 'delete', collection: SNAPSHOTS, id: m.id } as const,
    ...Array.from({ length: m.chunks }, (_, i) => ({ kind: 'delete', collection: SNAPSHOTS, id: `${m.id}#${i}` }) as const),
  ]);
  if (ops.length) await reads.bulkWrite(ops);
};

/**
 * Adds snapshots every `interval` positions of the log to a fold, live and during rebuilds; a
 * rebuild's snapshots replace the old ones when it is switched in.
 */
export const withSnapshots = (fold: Projector, interval: number): Projector => {
  const last = new Map<string, number>();
  return {
    ...fold,
    async afterCommit(reads, event, rebuild) {
      const key = rebuild ? rebuildKey(fold.name) : fold.name;
      if (!last.has(key)) last.set(key, (await latestSnapshot(reads, key))?.position ?? 0);
      if (event.position - last.get(key)! < interval) return;
      await takeSnapshot(reads, fold, event.position, event.recordedAt, rebuild);
      last.set(key, event.position);
    },
    async afterRebuild(reads) {
      await deleteSnapshots(reads, await snapshotsOf(reads, fold.name));
      const rebuilt = await snapshotsOf(reads, rebuildKey(fold.name));
      await reads.bulkWrite(rebuilt.map((m) => ({ kind: 'put', collection: SNAPSHOTS, doc: { ...m, collection: fold.name } })));
      last.clear();
    },
  };
};

