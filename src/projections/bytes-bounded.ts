/**
 * Values kept by key within a bound on their total bytes (as the caller weighs them): putting one
 * drops the oldest entries until it fits, and one larger than `maxEntryBytes` is not kept (it would
 * push out most of the others). Oldest means first put; a caller that wants least recently used
 * puts a value again when it is used.
 */
export class BytesBounded<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly bytes: number }>();
  private total = 0;

  constructor(
    readonly maxBytes: number,
    private readonly maxEntryBytes: number,
  ) {}

  get(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Keeps `value` as the newest entry, if it is not too large; whatever `key` held goes either way. */
  put(key: K, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxEntryBytes) return;
    for (const oldest of this.entries.keys()) {
      if (this.total + bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
    this.entries.set(key, { value, bytes });
    this.total += bytes;
  }

  /** Makes the entry of `key` the newest. */
  touch(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.entries.set(key, e);
  }

  delete(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of the values kept, as weighed when they were put. */
  get bytes(): number {
    return this.total;
  }
}
