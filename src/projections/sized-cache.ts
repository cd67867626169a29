import { BytesBounded } from './bytes-bounded.ts';
import { VersionedCache } from './versioned-cache.ts';

/**
 * VersionedCache (read `version()` before loading a value, hand it to `set`; every entry goes when
 * the version moves) bounded by the bytes its values take, as `sizeOf` estimates them, rather than
 * by their number: objects range from a few hundred bytes to megabytes, so a count bounds nothing.
 * Oldest inserted dropped first; a value larger than a quarter of the bound is not kept.
 */
export class SizedVersionedCache<K, V> extends VersionedCache<K, V> {
  private readonly kept: BytesBounded<K, V>;

  constructor(
    currentVersion: () => number,
    readonly maxBytes: number,
    /** May weigh the key too (a key taken from a request can be of any length). */
    sizeOf: (value: V, key: K) => number,
    changedSince?: (version: number) => ReadonlySet<K> | undefined,
  ) {
    const kept = new BytesBounded<K, V>(maxBytes, maxBytes / 4);
    super(currentVersion, {
      get: (key) => kept.get(key),
      put: (key, value) => kept.put(key, value, sizeOf(value, key)),
      delete: (key) => kept.delete(key),
      clear: () => kept.clear(),
      get size() {
        return kept.size;
      },
    }, changedSince);
    this.kept = kept;
  }

  /** Estimated bytes of the values kept. */
  get bytes(): number {
    return this.kept.bytes;
  }
}
