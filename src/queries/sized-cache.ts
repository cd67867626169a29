import { BytesBounded } from './bytes-bounded.ts';

/**
 * VersionedCache's protocol (src/projections/versioned-cache.ts: read `version()` before loading a
 * value, hand it to `set`; every entry goes when the version moves) bounded by the bytes its values
 * take, as `sizeOf` estimates them, rather than by their number: objects range from a few hundred
 * bytes to megabytes, so a count bounds nothing. Oldest inserted dropped first; a value larger
 * than a quarter of the bound is not kept.
 */
export class SizedVersionedCache<K, V> {
  private readonly entries: BytesBounded<K, V>;
  private tag = -1;
  hits = 0;
  misses = 0;

  constructor(
    private readonly currentVersion: () => number,
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {
    this.entries = new BytesBounded(maxBytes, maxBytes / 4);
  }

  version(): number {
    return this.currentVersion();
  }

  get(key: K): V | undefined {
    const now = this.currentVersion();
    if (now !== this.tag) {
      this.clear(now);
      this.misses++;
      return undefined;
    }
    const value = now < 0 ? undefined : this.entries.get(key);
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }

  set(key: K, value: V, loadedAt: number): void {
    if (loadedAt < 0 || loadedAt !== this.currentVersion()) return;
    if (loadedAt !== this.tag) this.clear(loadedAt);
    this.entries.put(key, value, this.sizeOf(value));
  }

  private clear(tag: number): void {
    this.entries.clear();
    this.tag = tag;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Estimated bytes of the values kept. */
  get bytes(): number {
    return this.entries.bytes;
  }
}
