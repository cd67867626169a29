import { BytesBounded } from '../projections/bytes-bounded.ts';

/** Bytes as a list of slices: a long answer is made, kept and sent without joining them into one buffer. */
export type Slices = readonly Buffer[];

export const sliceBytes = (slices: Slices): number => {
  let n = 0;
  for (const s of slices) n += s.length;
  return n;
};

/**
 * Serialised answers (JSON bytes) kept per key for exactly one version of the read model they were
 * derived from, bounded by their total size in bytes (least recently used dropped first). The
 * caller tags a value with the version it read BEFORE loading its sources (as VersionedCache's
 * protocol: src/projections/versioned-cache.ts), so a value loaded while a batch was committed is
 * never served once that commit is announced. A negative version (no such projection in this
 * process) turns caching off. Requests for the same key and version while it is being computed
 * share that one computation.
 */
export class AnswerCache {
  /** One answer may not push out most of the others: at most half the bound each. */
  private readonly kept: BytesBounded<string, { readonly version: number; readonly slices: Slices }>;
  private readonly pending = new Map<string, { readonly version: number; readonly value: Promise<Slices> }>();

  constructor(readonly maxBytes: number) {
    this.kept = new BytesBounded(maxBytes, maxBytes / 2);
  }

  /**
   * The bytes kept for `key` at `version`, else those `compute` makes (kept if the version has not
   * moved meanwhile). `at`: the version the caller read before it loaded what `compute` uses,
   * where it loaded some of that before this call.
   */
  async through(key: string, version: () => number, compute: () => Promise<Slices>, at = version()): Promise<Slices> {
    if (at < 0) return compute();
    const hit = this.kept.get(key);
    if (hit && hit.version === at) {
      // Most recently used last.
      this.kept.touch(key);
      return hit.slices;
    }
    if (hit) this.kept.delete(key);
    const running = this.pending.get(key);
    if (running && running.version === at) return running.value;
    const value = compute();
    this.pending.set(key, { version: at, value });
    try {
      const slices = await value;
      if (version() === at) this.kept.put(key, { version: at, slices }, sliceBytes(slices));
      return slices;
    } finally {
      if (this.pending.get(key)?.value === value) this.pending.delete(key);
    }
  }

  /** Bytes of the answers kept. */
  get bytes(): number {
    return this.kept.bytes;
  }

  get size(): number {
    return this.kept.size;
  }
}
