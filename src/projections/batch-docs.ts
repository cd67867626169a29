import type { DocAccess } from './projector.ts';
import type { Doc, ReadStore, WriteOp } from './read-store.ts';

const key = (collection: string, id: string) => `${collection}\u0000${id}`;

/**
 * Documents seen through one batch: reads fall through to the store once, writes stay in memory
 * and become one list of operations committed with the checkpoint.
 */
export class BatchDocs implements DocAccess {
  private readonly cache = new Map<string, { collection: string; id: string; doc: Doc | null; dirty: boolean }>();

  constructor(
    private readonly store: ReadStore,
    /** Maps a projector's collection name to the physical one (rebuilds write into fresh copies). */
    private readonly physical: (collection: string) => string = (c) => c,
  ) {}

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const k = key(collection, id);
    const hit = this.cache.get(k);
    if (hit) return hit.doc as T | null;
    const doc = await this.store.get<T>(this.physical(collection), id);
    this.cache.set(k, { collection, id, doc, dirty: false });
    return doc;
  }

  put(collection: string, doc: Doc): void {
    this.cache.set(key(collection, doc.id), { collection, id: doc.id, doc, dirty: true });
  }

  delete(collection: string, id: string): void {
    this.cache.set(key(collection, id), { collection, id, doc: null, dirty: true });
  }

  ops(): WriteOp[] {
    const ops: WriteOp[] = [];
    for (const { collection, id, doc, dirty } of this.cache.values()) {
      if (!dirty) continue;
      const physical = this.physical(collection);
      ops.push(doc === null ? { kind: 'delete', collection: physical, id } : { kind: 'put', collection: physical, doc });
    }
    return ops;
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
}
