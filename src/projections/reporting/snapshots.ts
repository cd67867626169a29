import { MemoryDocs } from '../batch-docs.ts';
import { noPause, type BatchContext, type Pages, type Pause, type Projector } from '../projector.ts';
import { isDocText, writeOpBytes, type ReadStore, type WriteOp } from '../read-store.ts';
import { chunkText, COMPRESSED_SHARE, deflateOnPool, encodeChunk, encodeEntry, entryBytes, readChunk, type Deflate, type EncodedEntry, type Entry, type Inflate, type NewEntry, type RawRun, type StoredChunk } from './snapshot-chunks.ts';
import { copyState, lazyCollection, viewState } from './lazy-docs.ts';

/** Snapshots of collection folds: where an answer "as at" a past instant starts its replay. */
export const SNAPSHOTS = 'rc_snapshots';
/** Most entries in one chunk document. */
const CHUNK = 2000;
/** Most bytes of JSON in one chunk document (documents can be large): well under MongoDB's 16 MB per document. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * Links of a chain (its full snapshot and deltas) past which the next snapshot is a full copy as
 * soon as the deltas add up to half as many documents as that copy: every link is a read when a
 * chain is loaded. Not at once: a state copied whole every 64 links whatever its size took, as it
 * grew with the log, copies that grew with it (in a 2M-event history, 180,000 documents every
 * 128,000 events, more than all the deltas), and what snapshots took grew with the log times the
 * state. Waiting for half bounds the copies by twice the deltas, which grow with the log alone,
 * while a chain loads at most about one and a half times the state. Waiting for all of it (at most
 * as much as the deltas) made the copies of that 2M-event history 8.5% smaller for answers `at`
 * instants about its middle a sixth slower (chains of up to 90 links where there had been 64); with
 * half, that history's snapshots are as before (64 deltas add up to more than half its state).
 */
const MAX_CHAIN = 64;
/** Longest chain of all: deltas of a few documents each (a log of mostly other events) would otherwise make thousands of links. */
const MAX_LINKS = 512;
/**
 * How many times its full snapshot's documents the deltas on it may add up to before the next
 * snapshot is a full copy: live, once (loading a snapshot reads at most about twice the state);
 * during a rebuild from the start, where the state grows and full copies were more than half of
 * what snapshots wrote (a full copy each time the deltas caught up with a state half the size), three
 * times: a rebuild writes about a third fewer snapshot entries, and an `at` answer within the rebuilt
 * history loads up to four times the state instead of two (its parsed chain start is kept and shared
 * by nearby instants).
 */
const CHAIN_RATIO = 1;
const REBUILD_CHAIN_RATIO = 3;

export type SnapshotMeta = {
  readonly id: string;
  readonly collection: string;
  readonly position: number;
  /** When the last event folded into the snapshot was recorded. */
  readonly recordedAt: string;
  readonly chunks: number;
  /**
   * Ids of the snapshots to load, oldest first, ending with this one: a full snapshot, then the
   * deltas (documents changed or removed since the previous one) on top of it.
   */
  readonly chain: readonly string[];
  /** The generation of the projection whose state it holds (see BatchContext.generation); none in snapshots written before. */
  readonly generation?: number;
};

export const snapshotSpec = { name: SNAPSHOTS, indexes: ['collection', 'recordedAt', 'position'], compoundIndexes: [['collection', 'recordedAt', 'position']] };

/** The newest snapshot stored under `key` taken at or before `at` (or the newest of all), whatever its generation. */
const newestUnder = async (reads: ReadStore, key: string, at?: Date): Promise<SnapshotMeta | undefined> => {
  const [meta] = await reads.find<SnapshotMeta>(SNAPSHOTS, {
    where: { collection: key, ...(at ? { recordedAt: { $lte: at.toISOString() } } : {}) },
    sort: [['recordedAt', 'desc'], ['position', 'desc']],
    limit: 1,
  });
  return meta;
};

/**
 * The newest snapshot of a fold's projection as it is now (its checkpoint's generation) taken at
 * or before `at` (or the newest of all). A switch moves the generation in the same transaction as
 * the checkpoint, while the rebuilt snapshots are handed over to the projection's name after it
 * (afterRebuild): until then, and for good if the process died in between, those of the replaced
 * state are passed over and the rebuilt ones are found under the rebuild's key. A snapshot written
 * before snapshots named their generation is taken as the projection's.
 */
export const latestSnapshot = async (reads: ReadStore, fold: string, at?: Date): Promise<SnapshotMeta | null> => {
  const generation = (await reads.getCheckpoint(fold))?.generation ?? 0;
  const live = await newestUnder(reads, fold, at);
  // One of this generation is the projection's state: handed over, or written since the switch (only a
  // hand-over cut short leaves one nearer `at` under the rebuild's key, which costs a longer replay).
  // No second query on the common path.
  if (live?.generation === generation) return live;
  const own = live && live.generation === undefined ? live : undefined;
  const handed = await newestUnder(reads, rebuildKey(fold), at);
  const rebuilt = handed?.generation === generation ? handed : undefined;
  if (own && rebuilt) return rebuilt.position > own.position ? rebuilt : own;
  return own ?? rebuilt ?? null;
};

/** Snapshots taken while a fold is rebuilt are kept under this key until the rebuild is switched in. */
const rebuildKey = (fold: string) => `rebuild:${fold}`;

const chunkIds = (id: string, chunks: number) => Array.from({ length: chunks }, (_, i) => `${id}#${i}`);

/**
 * Fold states parsed recently from the snapshots of one read store, by snapshot id, least recently
 * used first. Snapshots never change once written, and answers for nearby instants share the start
 * of their chains: a snapshot is loaded from the newest parsed state of its chain, so usually only
 * its last deltas are read and parsed. Made at start-up, one per read store.
 */
export type ParsedSnapshots = Map<string, MemoryDocs>;
const KEEP_PARSED = 4;
/** Chunks asked of `inflate` ahead of the one being applied, so that it works while this thread applies. */
const INFLATE_AHEAD = 3;

/**
 * A fold's state from a snapshot (its full base and deltas), in memory, ready to replay further
 * events onto; `recent` holds what was loaded before from `reads`, and keeps this one. Documents
 * are parsed when first read (see LazyDocMap).
 */
export const loadSnapshot = async (
  reads: ReadStore,
  recent: ParsedSnapshots,
  meta: SnapshotMeta,
  derived?: Projector['derived'],
  pause: Pause = noPause,
  inflate?: Inflate,
): Promise<MemoryDocs> => {
  const { chain } = meta;
  let from = chain.length - 1;
  while (from >= 0 && !recent.has(chain[from]!)) from--;
  const start = from >= 0 ? recent.get(chain[from]!)! : undefined;
  let state: MemoryDocs;
  if (from === chain.length - 1) {
    state = start!;
    recent.delete(meta.id);
  } else {
    state = start ? await copyState(start, pause) : new MemoryDocs();
    await applyChain(reads, meta.id, chain.slice(from + 1), state, new Set(derived?.collections), pause, inflate);
    await derived?.derive(state, pause);
  }
  recent.set(meta.id, state);
  for (const id of recent.keys()) if (recent.size > KEEP_PARSED) recent.delete(id);
  // Kept states are never changed once kept (a longer chain starts from a copy), so a view will do.
  return viewState(state);
};

/**
 * Applies the links of a chain onto `docs`, newest first: an entry whose document a later link
 * already set (or removed) is skipped, so only the newest version of each is kept, unparsed.
 */
const applyChain = async (reads: ReadStore, snapshot: string, chain: readonly string[], docs: MemoryDocs, omitted: ReadonlySet<string>, pause: Pause, inflate?: Inflate): Promise<void> => {
  const metas = await reads.getMany<SnapshotMeta>(SNAPSHOTS, chain);
  const stored: StoredChunk[][] = [];
  for (const id of chain) {
    const link = metas.get(id);
    if (!link) throw new Error(`Snapshot ${snapshot} is missing ${id}`);
    const ids = chunkIds(id, link.chunks);
    const chunks = await reads.getMany<StoredChunk>(SNAPSHOTS, ids);
    stored.push(
      ids.map((chunkId) => {
        const chunk = chunks.get(chunkId);
        if (!chunk) throw new Error(`Snapshot ${snapshot} is missing chunk ${chunkId}`);
        return chunk;
      }),
    );
  }
  // Links newest first; a link's chunks in order (each document is in one of them), so a state
  // loaded from one link keeps the order it was written in.
  const order = [...stored].reverse().flat();
  const seen = new Map<string, Set<string>>();
  // The oldest link's chunks come last, and no link lists a document twice: what they set is
  // looked for among what newer links set, never kept for a later one (most of a chain's entries
  // are its full snapshot's, and keeping them cost more than applying them).
  const oldest = order.length - stored[0]!.length;
  let applied = 0;
  const asked: Promise<RawRun[]>[] = [];
  const ask = (i: number) => {
    if (i < order.length && !asked[i]) {
      asked[i] = readChunk(order[i]!, inflate);
      // A failure is thrown where it is awaited (unobserved, a later one would end the process).
      asked[i]!.catch(() => undefined);
    }
  };
  for (let i = 0; i < order.length; i++) {
    for (let ahead = i; ahead <= i + INFLATE_AHEAD; ahead++) ask(ahead);
    const runs = await asked[i]!;
    delete asked[i];
    for (const run of runs) {
      // Made again after loading (snapshots written before they were left out hold them).
      if (omitted.has(run.collection)) continue;
      let done = seen.get(run.collection);
      if (!done) seen.set(run.collection, (done = new Set()));
      const target = lazyCollection(docs, run.collection);
      // Entries of a run of text kept as text, copied together once the run is read (see TextBlock).
      const kept: number[] = [];
      for (let k = 0; k < run.ids.length; k++) {
        const id = run.ids[k]!;
        if (i >= oldest) {
          if (done.has(id)) continue;
        } else {
          const before = done.size;
          done.add(id);
          if (done.size === before) continue;
        }
        if (run.removed) {
          if (run.removed(k)) target.delete(id);
          else kept.push(k);
        } else {
          const json = run.json(k);
          if (json !== undefined) {
            if (json === '') target.delete(id);
            else target.setRaw(id, json, run.idless);
          } else {
            const doc = run.docs?.[k];
            if (doc) target.set(id, doc);
            else target.delete(id);
          }
        }
        if (++applied % APPLY_SLICE === 0) await pause();
      }
      if (kept.length > 0) {
        const block = run.cut!(kept);
        for (let j = 0; j < kept.length; j++) target.setText(run.ids[kept[j]!]!, block, j, run.idless);
      }
    }
  }
};

/** Chunk entries applied between two pauses (each is a few map operations). */
const APPLY_SLICE = 1024;

const snapshotsOf = (reads: ReadStore, key: string) => reads.find<SnapshotMeta>(SNAPSHOTS, { where: { collection: key } });

/** A write and the bytes it counts for against the store's bound of a transaction. */
type Sized = { readonly op: WriteOp; readonly bytes: number };

const sized = (op: WriteOp): Sized => ({ op, bytes: writeOpBytes(op) });

/**
 * Most bytes one transaction of snapshot writes carries even where the store has no bound: the
 * chunks of a part are held as JSON until it is written, so this bounds the memory a full
 * snapshot of a large fold takes.
 */
const PART_BYTES = 16 * 1024 * 1024;

/**
 * Writes `writes` in order, in as few transactions as the store's bound allows. Not atomic: callers
 * order them so that a crash between two leaves nothing a reader can find half-written.
 */
const writeInParts = async (reads: ReadStore, writes: Iterable<Sized> | AsyncIterable<Sized>): Promise<void> => {
  const limit = reads.maxBatch;
  const maxBytes = Math.min(limit.bytes, PART_BYTES);
  let part: WriteOp[] = [];
  let bytes = 0;
  for await (const { op, bytes: size } of writes) {
    if (part.length > 0 && (part.length + 1 > limit.ops || bytes + size > maxBytes)) {
      await reads.bulkWrite(part);
      part = [];
      bytes = 0;
    }
    part.push(op);
    bytes += size;
  }
  if (part.length > 0) await reads.bulkWrite(part);
};

const deleteSnapshots = async (reads: ReadStore, metas: readonly SnapshotMeta[]) => {
  // Metas first: a snapshot is gone before any of its chunks is.
  const ops: WriteOp[] = [
    ...metas.map((m) => ({ kind: 'delete', collection: SNAPSHOTS, id: m.id }) as const),
    ...metas.flatMap((m) => chunkIds(m.id, m.chunks).map((id) => ({ kind: 'delete', collection: SNAPSHOTS, id }) as const)),
  ];
  await writeInParts(reads, ops.map((op) => ({ op, bytes: 0 })));
};

/**
 * Chunk documents of snapshot `id`: at most CHUNK entries each, and entries' text of at most a
 * share of `maxBytes` that stays within it once compressed (an entry larger than that alone makes
 * a chunk of its own; a run header per collection fits in what that share leaves). Each entry is
 * encoded once: its text sizes the chunk and is what is compressed. The entries come a page at a
 * time: a promise per entry was over a quarter of what a rebuild's snapshots allocated.
 */
async function* toChunks(id: string, pages: Pages<NewEntry>, maxBytes: number, deflate: Deflate): AsyncGenerator<Sized> {
  // What the rest of a chunk document takes (the longest id a snapshot's chunk can have, the keys), so the whole stays within maxBytes.
  const budget = Math.floor((maxBytes - Buffer.byteLength(JSON.stringify({ id: `${id}#${Number.MAX_SAFE_INTEGER}`, f: 4, z: null }))) * COMPRESSED_SHARE);
  let count = 0;
  let encoded: EncodedEntry[] = [];
  let bytes = 0;
  const flush = async (): Promise<Sized> => {
    const doc = await encodeChunk(`${id}#${count++}`, chunkText(encoded), deflate);
    encoded = [];
    bytes = 0;
    return sized({ kind: 'put', collection: SNAPSHOTS, doc });
  };
  for await (const page of pages) {
    for (const entry of page) {
      const e = encodeEntry(entry);
      const size = entryBytes(e);
      if (encoded.length > 0 && (encoded.length >= CHUNK || bytes + size > budget)) yield await flush();
      bytes += size;
      encoded.push(e);
    }
  }
  if (encoded.length > 0) yield await flush();
}

/** What this process knows of a fold's newest snapshot, and the changes made since it. */
interface Tracker {
  /** The generation of the state its snapshots hold. */
  readonly generation: number;
  last: SnapshotMeta | null;
  /** Documents in the chain's full snapshot, and in its deltas so far. */
  baseDocs: number;
  chainDocs: number;
  /** Changes folded since `last`; unknown (null) until a snapshot is taken by this process. */
  changed: Map<string, Entry> | null;
  /** Position of the last batch this process folded (its changes are in `changed`). */
  upTo?: number;
}

const writeSnapshot = async (reads: ReadStore, key: string, pages: Pages<NewEntry>, position: number, recordedAt: Date, chain: readonly string[], generation: number, deflate: Deflate) => {
  const id = `${key}@${position}`;
  let chunks = 0;
  const counted = async function* () {
    for await (const chunk of toChunks(id, pages, Math.min(CHUNK_BYTES, reads.maxBatch.bytes), deflate)) {
      chunks++;
      yield chunk;
    }
  };
  await writeInParts(reads, counted());
  const meta: SnapshotMeta = { id, collection: key, position, recordedAt: recordedAt.toISOString(), chunks, chain: [...chain, id], generation };
  // The meta last: a snapshot is found only once all its chunks are written.
  await writeInParts(reads, [sized({ kind: 'put', collection: SNAPSHOTS, doc: meta })]);
  return meta;
};

/**
 * Adds snapshots every `interval` positions of the log to a fold, live and during rebuilds; a
 * rebuild's snapshots replace the old ones when it is switched in. A snapshot holds only the
 * documents changed since the previous one; a full copy of the fold's state is written when
 * this process has no record of the changes, or when the deltas on the last full copy add up to
 * more documents than it holds (during a rebuild, three times more: see REBUILD_CHAIN_RATIO).
 * Chunks are compressed by `deflate`: on the thread pool, unless no event loop is to be kept free.
 */
export const withSnapshots = (fold: Projector, interval: number, deflate: Deflate = deflateOnPool): Projector => {
  const trackers = new Map<string, Tracker>();
  const omitted = new Set(fold.derived?.collections);
  const stored = fold.collections.filter((c) => !omitted.has(c.name));
  const logical = new Map(stored.map((c) => [c.name, c.name]));
  return {
    ...fold,
    async afterBatch(ctx: BatchContext) {
      const key = ctx.rebuild ? rebuildKey(fold.name) : fold.name;
      let t = trackers.get(key);
      // A batch that does not follow on from the last one seen here: another process folded the
      // batches in between (it held the projection's lease), so the changes kept here are incomplete.
      if (t && ctx.after !== undefined && t.upTo !== undefined && ctx.after !== t.upTo) t = undefined;
      // A rebuild switched in since (even at the very position folded here): the changes kept are of the replaced state.
      const generation = ctx.generation ?? 0;
      if (t && t.generation !== generation) t = undefined;
      if (!t) trackers.set(key, (t = { generation, last: (await newestUnder(ctx.reads, key)) ?? null, baseDocs: 0, chainDocs: 0, changed: null }));
      t.upTo = ctx.last.position;
      if (t.changed) {
        for (const op of ctx.changes) {
          const collection = logical.get(op.collection);
          if (!collection) continue;
          const id = op.kind === 'put' ? op.doc.id : op.id;
          t.changed.set(`${collection}\u0000${id}`, [collection, id, op.kind === 'put' ? op.doc : null]);
        }
      }
      const last = ctx.last;
      if (last.position - (t.last?.position ?? 0) < interval) return;
      const delta = t.changed ? [...t.changed.values()] : null;
      // A delta needs the snapshot it builds on: a rebuild switched in by another process deletes it.
      const ratio = ctx.rebuild ? REBUILD_CHAIN_RATIO : CHAIN_RATIO;
      const links = t.last?.chain.length ?? 0;
      const short = links < MAX_CHAIN || (links < MAX_LINKS && 2 * t.chainDocs < t.baseDocs);
      const onto = delta && t.last && short && t.chainDocs + delta.length <= t.baseDocs * ratio ? t.last : null;
      if (onto && (await ctx.reads.get(SNAPSHOTS, onto.id))) {
        t.last = await writeSnapshot(ctx.reads, key, [delta!], last.position, last.recordedAt, onto.chain, generation, deflate);
        t.chainDocs += delta!.length;
      } else {
        // Streamed: a fold's whole state need not fit in memory twice (or at all, once a rebuild spills it).
        let count = 0;
        const entries = async function* (): AsyncGenerator<NewEntry[]> {
          for (const spec of stored) {
            for await (const page of await ctx.state(spec.name)) {
              count += page.length;
              // A document read back from the store comes as its text, which is copied on as it is.
              yield page.map((doc): NewEntry => (isDocText(doc) ? [spec.name, doc[0], doc[1]] : [spec.name, doc.id, doc]));
            }
          }
        };
        t.last = await writeSnapshot(ctx.reads, key, entries(), last.position, last.recordedAt, [], generation, deflate);
        t.baseDocs = count;
        t.chainDocs = 0;
      }
      t.changed = new Map();
    },
    // A run that died before its first commit is started over, possibly by another version of the
    // fold: left in place, its snapshots would be handed over with the new run's (which writes
    // none until it passes the last of them).
    async beforeRebuild(reads) {
      await deleteSnapshots(reads, await snapshotsOf(reads, rebuildKey(fold.name)));
      trackers.delete(rebuildKey(fold.name));
    },
    async afterRebuild(reads) {
      await deleteSnapshots(reads, await snapshotsOf(reads, fold.name));
      const rebuilt = await snapshotsOf(reads, rebuildKey(fold.name));
      await writeInParts(reads, rebuilt.map((m) => sized({ kind: 'put', collection: SNAPSHOTS, doc: { ...m, collection: fold.name } })));
      trackers.clear();
    },
  };
};
