import type { DocAccess } from './projector.ts';
import { writeOpBytes, type Doc, type ReadStore, type WriteOp } from './read-store.ts';

const key = (collection: string, id: string) => `${collection}\u0000${id}`;

interface Entry {
  readonly collection: string;
  readonly id: string;
  readonly doc: Doc | null;
  /** Estimated bytes of the document's JSON (see BatchDocs.cachedBytes). */
  readonly bytes: number;
}

/**
 * What a kept miss (or deletion) counts for: its Map entry, key and Entry hold memory too, and
 * counting them as nothing would let misses pile up under any bound in bytes.
 */
const NULL_BYTES = 64;

/** One document in this many has its JSON measured; the others count as their collection's mean so far. */
const SAMPLE_EVERY = 64;

/**
 * Documents seen while folding: reads fall through to the store once, writes stay in memory
 * until they are committed (with the checkpoint) as one list of operations. The runner uses one
 * per batch; a rebuild keeps one across many batches, so each document is written once per
 * commit however often it changed, and when it starts from nothing (`complete`) it never reads
 * the store at all.
 */
export class BatchDocs implements DocAccess {
  private readonly cache = new Map<string, Entry>();
  private unwritten = new Map<string, Entry>();
  private recent = new Map<string, Entry>();
  /** Bytes of the unwritten puts (as writeOpBytes counts them), kept only when `measure` is set. */
  private unwrittenBytes = 0;
  private readonly sizes = new Map<string, number>();
  private cached = 0;
  /** Per collection: documents measured, and their mean JSON bytes. */
  private readonly means = new Map<string, { measured: number; seen: number; mean: number }>();
  private whole: boolean;

  constructor(
    private readonly store: ReadStore,
    /** Maps a projector's collection name to the physical one (rebuilds write into fresh copies). */
    private readonly physical: (collection: string) => string = (c) => c,
    /** True when every document folded so far is in this cache (a rebuild from the start). */
    complete = false,
    /** Keep count of the unwritten bytes (for stores that bound a transaction's bytes); costs a JSON encoding per write. */
    private readonly measure = false,
  ) {
    this.whole = complete;
  }

  /** True while every document folded so far is in this cache: a miss is a document that does not exist. */
  get complete(): boolean {
    return this.whole;
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const k = key(collection, id);
    const hit = this.cache.get(k);
    if (hit) return hit.doc as T | null;
    if (this.whole) return null;
    const doc = await this.store.get<T>(this.physical(collection), id);
    // Another get of the same document may have come first while this one waited.
    if (!this.cache.has(k)) this.remember(k, { collection, id, doc, bytes: this.estimate(collection, doc) });
    return (this.cache.get(k)!.doc as T | null) ?? null;
  }

  put(collection: string, doc: Doc): void {
    this.set(collection, doc.id, doc);
  }

  delete(collection: string, id: string): void {
    this.set(collection, id, null);
  }

  /**
   * JSON bytes of a document, measured for one in SAMPLE_EVERY (and the first few) of each
   * collection: measuring every write would cost a second JSON encoding of everything folded.
   */
  private estimate(collection: string, doc: Doc | null, exact?: number): number {
    if (doc === null) return NULL_BYTES;
    let m = this.means.get(collection);
    if (!m) this.means.set(collection, (m = { measured: 0, seen: 0, mean: 0 }));
    m.seen++;
    if (exact === undefined && m.measured >= 8 && m.seen % SAMPLE_EVERY !== 0) return m.mean;
    const bytes = exact ?? Buffer.byteLength(JSON.stringify(doc));
    m.measured++;
    m.mean += (bytes - m.mean) / Math.min(m.measured, 1024);
    return bytes;
  }

  /** Written entries go to the end of the cache, so eviction drops the documents least recently written. */
  private remember(k: string, entry: Entry): void {
    const old = this.cache.get(k);
    if (old) {
      this.cached -= old.bytes;
      this.cache.delete(k);
    }
    this.cache.set(k, entry);
    this.cached += entry.bytes;
  }

  private set(collection: string, id: string, doc: Doc | null): void {
    const k = key(collection, id);
    const exact = this.measure && doc !== null ? writeOpBytes({ kind: 'put', collection, doc }) : undefined;
    const entry: Entry = { collection, id, doc, bytes: this.estimate(collection, doc, exact) };
    this.remember(k, entry);
    this.unwritten.set(k, entry);
    this.recent.set(k, entry);
    if (this.measure) {
      this.unwrittenBytes += entry.bytes - (this.sizes.get(k) ?? 0);
      this.sizes.set(k, entry.bytes);
    }
  }

  get size(): number {
    return this.cache.size;
  }

  /** Estimated JSON bytes of the cached documents (sampled: see `estimate`). */
  get cachedBytes(): number {
    return this.cached;
  }

  /**
   * Drops the documents least recently written until the cache holds at most `bytes`; from then on
   * the cache is no longer the whole state, and misses read the store. Only written documents can
   * go: call it after a commit.
   */
  evict(bytes: number): void {
    if (this.unwritten.size > 0) throw new Error('Evicting documents that are not written yet');
    if (this.cached <= bytes) return;
    this.whole = false;
    for (const [k, entry] of this.cache) {
      if (this.cached <= bytes) break;
      this.cache.delete(k);
      this.cached -= entry.bytes;
    }
  }

  get pending(): number {
    return this.unwritten.size;
  }

  /** Bytes of the writes not yet committed (0 unless measured). */
  get pendingBytes(): number {
    return this.unwrittenBytes;
  }

  /** The writes not yet committed, under physical collection names. */
  ops(): WriteOp[] {
    return [...this.unwritten.values()].map(({ collection, id, doc }) => {
      const physical = this.physical(collection);
      return doc === null ? ({ kind: 'delete', collection: physical, id } as const) : ({ kind: 'put', collection: physical, doc } as const);
    });
  }

  /** After `ops()` have been committed. */
  written(): void {
    this.unwritten = new Map();
    this.sizes.clear();
    this.unwrittenBytes = 0;
  }

  /** The writes since the last call, under the projector's own collection names. */
  takeChanges(): WriteOp[] {
    const out = [...this.recent.values()].map(({ collection, id, doc }) =>
      doc === null ? ({ kind: 'delete', collection, id } as const) : ({ kind: 'put', collection, doc } as const),
    );
    this.recent = new Map();
    return out;
  }

  /** Every document of a collection; only a complete cache can answer. */
  documents(collection: string): Doc[] {
    if (!this.whole) throw new Error('Only a complete cache lists documents');
    const out: Doc[] = [];
    for (const e of this.cache.values()) if (e.collection === collection && e.doc) out.push(e.doc);
    return out;
  }
}

/** Documents held entirely in memory: for replaying the log to a past instant and for tests. */
export class MemoryDocs implements DocAccess {
  readonly collections = new Map<string, Map<string, Doc>>();

  private of(collection: string): Map<string, Doc> {
    let c = this.collections.get(collection);
    if (!c) this.collections.set(collection, (c = new Map()));
    return c;
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    return (this.of(collection).get(id) as T | undefined) ?? null;
  }

  put(collection: string, doc: Doc): void {
    this.of(collection).set(doc.id, doc);
  }

  delete(collection: string, id: string): void {
    this.of(collection).delete(id);
  }

  /** A copy to replay further events onto; documents are never changed in place, so they are shared. */
  clone(): MemoryDocs {
    const copy = new MemoryDocs();
    for (const [name, docs] of this.collections) copy.collections.set(name, new Map(docs));
    return copy;
  }
}
