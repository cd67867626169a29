import type { DocAccess } from './projector.ts';
import { writeOpBytes, type Doc, type ReadStore, type WriteOp } from './read-store.ts';
import { EvictedIds } from './evicted-ids.ts';

interface Entry {
  readonly id: string;
  readonly of: Collection;
  doc: Doc | null;
  /** Estimated bytes of the document's JSON (see BatchDocs.cachedBytes). */
  bytes: number;
  /** When it was last written (or read from the store): eviction drops the lowest first. */
  seq: number;
  /** Written since the last commit (listed in `unwritten`). */
  unwritten: boolean;
  /** Written since the last takeChanges (listed in `recent`). */
  changed: boolean;
  /** Bytes counted for it in the unwritten bytes (only when measured). */
  pendingBytes: number;
}

/** One collection's cached documents, in the order they were last written (Map order: re-set on each write). */
interface Collection {
  readonly name: string;
  /** Its place among the cache's collections (ids of different collections are told apart by it in `dropped`). */
  readonly index: number;
  readonly physical: string;
  readonly docs: Map<string, Entry>;
  /** Documents measured, seen, and their mean JSON bytes. */
  measured: number;
  seen: number;
  mean: number;
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
 *
 * Every event of a rebuild passes through here several times, so the bookkeeping is kept to
 * plain field updates: one map per collection keyed by the document's own id (a joined key would
 * be a new string to hash on every access), one mutable entry per document, and the writes since
 * the last commit and since the last takeChanges listed once each, flagged on the entry.
 */
export class BatchDocs implements DocAccess {
  private readonly collections = new Map<string, Collection>();
  private unwritten: Entry[] = [];
  private recent: Entry[] = [];
  /** An entry dropped while listed in `recent`: its document may be listed twice there. */
  private droppedChanged = false;
  /** Bytes of the unwritten puts (as writeOpBytes counts them), kept only when `measure` is set. */
  private unwrittenBytes = 0;
  private cached = 0;
  private count = 0;
  private seq = 0;
  private whole: boolean;
  /**
   * The documents dropped from a cache that began with the whole state (see evict): a miss on any
   * other id is a document that does not exist.
   */
  private dropped: EvictedIds | undefined;
  private readonly began: boolean;

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
    this.began = complete;
  }

  /** True while every document folded so far is in this cache: a miss is a document that does not exist. */
  get complete(): boolean {
    return this.whole;
  }

  private of(collection: string): Collection {
    let c = this.collections.get(collection);
    if (!c) this.collections.set(collection, (c = { name: collection, index: this.collections.size, physical: this.physical(collection), docs: new Map(), measured: 0, seen: 0, mean: 0 }));
    return c;
  }

  /**
   * The document when this cache can answer without the store (null: there is none), undefined
   * when only the store can: folds use it to skip a promise per read on the common path.
   */
  peek<T extends Doc = Doc>(collection: string, id: string): T | null | undefined {
    const c = this.collections.get(collection);
    const hit = c?.docs.get(id);
    if (hit) return hit.doc as T | null;
    return this.none(c, id) ? null : undefined;
  }

  /** Whether a document not in the cache is known not to exist. */
  private none(c: Collection | undefined, id: string): boolean {
    return this.whole || (this.dropped !== undefined && !(c && this.dropped.mayHold(c.index, id)));
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const c = this.of(collection);
    const hit = c.docs.get(id);
    if (hit) return hit.doc as T | null;
    if (this.none(c, id)) return null;
    const doc = await this.store.get<T>(c.physical, id);
    // Another get of the same document may have come first while this one waited.
    const first = c.docs.get(id);
    if (first) return first.doc as T | null;
    this.remember(c, id, doc, this.estimate(c, doc));
    return doc;
  }

  put(collection: string, doc: Doc): void {
    this.set(this.of(collection), doc.id, doc);
  }

  delete(collection: string, id: string): void {
    this.set(this.of(collection), id, null);
  }

  /**
   * JSON bytes of a document, measured for one in SAMPLE_EVERY (and the first few) of each
   * collection: measuring every write would cost a second JSON encoding of everything folded.
   */
  private estimate(c: Collection, doc: Doc | null, exact?: number): number {
    if (doc === null) return NULL_BYTES;
    c.seen++;
    if (exact === undefined && c.measured >= 8 && c.seen % SAMPLE_EVERY !== 0) return c.mean;
    const bytes = exact ?? Buffer.byteLength(JSON.stringify(doc));
    c.measured++;
    c.mean += (bytes - c.mean) / Math.min(c.measured, 1024);
    return bytes;
  }

  /** Written entries go to the end of their collection, so eviction drops the documents least recently written. */
  private remember(c: Collection, id: string, doc: Doc | null, bytes: number): Entry {
    let entry = c.docs.get(id);
    if (entry) {
      this.cached -= entry.bytes;
      c.docs.delete(id);
      entry.doc = doc;
      entry.bytes = bytes;
      entry.seq = this.seq++;
    } else {
      entry = { id, of: c, doc, bytes, seq: this.seq++, unwritten: false, changed: false, pendingBytes: 0 };
      this.count++;
    }
    c.docs.set(id, entry);
    this.cached += bytes;
    return entry;
  }

  private set(c: Collection, id: string, doc: Doc | null): void {
    const exact = this.measure && doc !== null ? writeOpBytes({ kind: 'put', collection: c.name, doc }) : undefined;
    const entry = this.remember(c, id, doc, this.estimate(c, doc, exact));
    if (!entry.unwritten) {
      entry.unwritten = true;
      this.unwritten.push(entry);
    }
    if (!entry.changed) {
      entry.changed = true;
      this.recent.push(entry);
    }
    if (this.measure) {
      this.unwrittenBytes += entry.bytes - entry.pendingBytes;
      entry.pendingBytes = entry.bytes;
    }
  }

  get size(): number {
    return this.count;
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
    if (this.unwritten.length > 0) throw new Error('Evicting documents that are not written yet');
    if (this.cached <= bytes) return;
    this.whole = false;
    // Sized by the cache (1/32 of its bytes, a bound set by the operator): documents of a few hundred bytes get tens of bits each.
    if (this.began) this.dropped ??= new EvictedIds(Math.max(bytes, this.cached) / 32);
    // The collections' orders merged by write time: the oldest head goes first.
    const heads = [...this.collections.values()].map((c) => ({ c, it: c.docs.values(), next: undefined as Entry | undefined }));
    for (const h of heads) h.next = h.it.next().value;
    while (this.cached > bytes) {
      let oldest: (typeof heads)[number] | undefined;
      for (const h of heads) if (h.next && (!oldest || h.next.seq < oldest.next!.seq)) oldest = h;
      if (!oldest) break;
      const entry = oldest.next!;
      oldest.next = oldest.it.next().value;
      oldest.c.docs.delete(entry.id);
      if (entry.doc !== null) this.dropped?.add(oldest.c.index, entry.id);
      this.cached -= entry.bytes;
      this.count--;
      if (entry.changed) this.droppedChanged = true;
    }
  }

  get pending(): number {
    return this.unwritten.length;
  }

  /** Bytes of the writes not yet committed (0 unless measured). */
  get pendingBytes(): number {
    return this.unwrittenBytes;
  }

  /** The writes not yet committed, under physical collection names. */
  ops(): WriteOp[] {
    return this.unwritten.map(({ of, id, doc }) => (doc === null ? ({ kind: 'delete', collection: of.physical, id } as const) : ({ kind: 'put', collection: of.physical, doc } as const)));
  }

  /** After `ops()` have been committed. */
  written(): void {
    for (const e of this.unwritten) {
      e.unwritten = false;
      e.pendingBytes = 0;
    }
    this.unwritten = [];
    this.unwrittenBytes = 0;
  }

  /** The writes since the last call, under the projector's own collection names. */
  takeChanges(): WriteOp[] {
    let entries = this.recent;
    const dropped = this.droppedChanged;
    this.dropChanges();
    if (dropped) {
      // A document dropped and read back is a second entry: each document once, where it first changed, as it is now.
      const latest = new Map<string, Entry>();
      for (const e of entries) latest.set(`${e.of.name}\u0000${e.id}`, e);
      entries = [...latest.values()];
    }
    return entries.map(({ of, id, doc }) => (doc === null ? ({ kind: 'delete', collection: of.name, id } as const) : ({ kind: 'put', collection: of.name, doc } as const)));
  }

  /**
   * Forgets the writes since the last takeChanges, for an owner with no use for them. It must be
   * called as often as takeChanges would be: the list holds every document it names, evicted or not.
   */
  dropChanges(): void {
    for (const e of this.recent) e.changed = false;
    this.recent = [];
    this.droppedChanged = false;
  }

  /** Every document of a collection; only a complete cache can answer. */
  documents(collection: string): Doc[] {
    if (!this.whole) throw new Error('Only a complete cache lists documents');
    const out: Doc[] = [];
    for (const e of this.collections.get(collection)?.docs.values() ?? []) if (e.doc) out.push(e.doc);
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

  peek<T extends Doc = Doc>(collection: string, id: string): T | null {
    return (this.collections.get(collection)?.get(id) as T | undefined) ?? null;
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
