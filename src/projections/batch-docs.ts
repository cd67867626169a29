import type { DocAccess } from './projector.ts';
import { writeOpBytes, type Doc, type ReadStore, type WriteOp } from './read-store.ts';

const key = (collection: string, id: string) => `${collection}\u0000${id}`;

interface Entry {
  readonly collection: string;
  readonly id: string;
  readonly doc: Doc | null;
}

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

  constructor(
    private readonly store: ReadStore,
    /** Maps a projector's collection name to the physical one (rebuilds write into fresh copies). */
    private readonly physical: (collection: string) => string = (c) => c,
    /** True when every document folded so far is in this cache (a rebuild from the start). */
    readonly complete = false,
    /** Keep count of the unwritten bytes (for stores that bound a transaction's bytes); costs a JSON encoding per write. */
    private readonly measure = false,
  ) {}

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const hit = this.cache.get(key(collection, id));
    if (hit) return hit.doc as T | null;
    if (this.complete) return null;
    const doc = await this.store.get<T>(this.physical(collection), id);
    this.cache.set(key(collection, id), { collection, id, doc });
    return doc;
  }

  put(collection: string, doc: Doc): void {
    this.set({ collection, id: doc.id, doc });
  }

  delete(collection: string, id: string): void {
    this.set({ collection, id, doc: null });
  }

  private set(entry: Entry): void {
    const k = key(entry.collection, entry.id);
    this.cache.set(k, entry);
    this.unwritten.set(k, entry);
    this.recent.set(k, entry);
    if (this.measure) {
      const bytes = entry.doc === null ? 0 : writeOpBytes({ kind: 'put', collection: entry.collection, doc: entry.doc });
      this.unwrittenBytes += bytes - (this.sizes.get(k) ?? 0);
      this.sizes.set(k, bytes);
    }
  }

  get size(): number {
    return this.cache.size;
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
    if (!this.complete) throw new Error('Only a complete cache lists documents');
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
