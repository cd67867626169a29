import type { MemoryDocs } from '../batch-docs.ts';
import type { Doc } from '../read-store.ts';
import { LazyDocMap } from './lazy-docs.ts';

/** Documents of each collection whose JSON is measured to size a state; the rest count as their mean. */
const SAMPLED = 16;
/** What a document costs besides its JSON: its entry in the state's Map. */
const ENTRY_BYTES = 64;

/**
 * Estimated bytes of a fold state, counted as its documents' JSON (sampled); documents not parsed
 * yet count as their texts. A kept state is weighed again each time it is loaded, so what answers
 * from it parsed since counts too. States loaded from one chain share most of their documents, so a
 * sum over states overcounts: the bound errs on the side of holding less.
 */
export const stateBytes = (state: MemoryDocs): number => {
  let bytes = 0;
  for (const docs of state.collections.values()) {
    let parsed: Iterable<Doc>;
    let count: number;
    if (docs instanceof LazyDocMap) {
      // Not docs.values(): that would parse them all.
      bytes += docs.unparsedChars;
      parsed = docs.parsed();
      count = 0;
      for (const _ of docs.parsed()) count++;
      bytes += (docs.size - count) * ENTRY_BYTES;
    } else {
      parsed = docs.values();
      count = docs.size;
    }
    if (count === 0) continue;
    let measured = 0;
    let sum = 0;
    for (const doc of parsed) {
      sum += Buffer.byteLength(JSON.stringify(doc));
      if (++measured >= SAMPLED) break;
    }
    bytes += count * (sum / measured + ENTRY_BYTES);
  }
  return Math.round(bytes);
};

/**
 * Fold states parsed from snapshots (ParsedSnapshots, used by loadSnapshot as a Map, least recently
 * used first), bounded in bytes: setting a state drops the least recently used ones until the
 * estimated total fits, the new one too if it alone does not. A fold state over a long history is
 * tens of megabytes of heap: a count of states alone would bound nothing.
 */
export class ParsedSnapshotCache extends Map<string, MemoryDocs> {
  private readonly sizes = new Map<string, number>();
  private total = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override set(id: string, state: MemoryDocs): this {
    this.delete(id);
    const bytes = stateBytes(state);
    super.set(id, state);
    this.sizes.set(id, bytes);
    this.total += bytes;
    for (const oldest of this.keys()) {
      if (this.total <= this.maxBytes) break;
      this.delete(oldest);
    }
    return this;
  }

  override delete(id: string): boolean {
    const bytes = this.sizes.get(id);
    if (bytes !== undefined) {
      this.total -= bytes;
      this.sizes.delete(id);
    }
    return super.delete(id);
  }

  override clear(): void {
    this.sizes.clear();
    this.total = 0;
    super.clear();
  }

  /** Estimated bytes of the states held. */
  get bytes(): number {
    return this.total;
  }
}
