/**
 * A bounded in-memory map of values derived from a read model, valid for exactly one version of it
 * (`ProjectionRunner.version`): when the version moves, every entry is dropped. The version moves
 * on this process's own commits and also when it sees the projection's stored checkpoint moved by
 * another process (an `api` process, or a standby), so no cached value outlives a checkpoint the
 * process has seen.
 *
 * The protocol that keeps it exact: read the version with `version()` BEFORE loading what a value
 * is derived from, and hand that version to `set`. A value loaded while a batch was being committed
 * is then tagged with the version before the commit, which is stale as soon as the commit is
 * announced, so it is never served afterwards. A version of -1 (no such projection in this process)
 * turns the cache off.
 *
 * The version moves (in this process) before anyone waiting for the change is released, so
 * read-your-writes holds as for a read of the read model itself. Values are never undefined: keep
 * "none" as null. Eviction is oldest-inserted first once `maxEntries` is reached.
 *
 * Given `changedSince` (the keys whose sources changed since a version, where that is known), a
 * move drops only those keys' values; where it is not known, every value goes as before.
 */
/** Where a VersionedCache keeps its values, and what bounds them. */
export interface KeptValues<K, V> {
  get(key: K): V | undefined;
  put(key: K, value: V): void;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
}

/** At most `maxEntries` values; the oldest inserted goes first. */
const countBounded = <K, V>(maxEntries: number): KeptValues<K, V> => {
  const entries = new Map<K, V>();
  return {
    get: (key) => entries.get(key),
    put(key, value) {
      if (!entries.has(key) && entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (!oldest.done) entries.delete(oldest.value);
      }
      entries.set(key, value);
    },
    delete: (key) => void entries.delete(key),
    clear: () => entries.clear(),
    get size() {
      return entries.size;
    },
  };
};

export class VersionedCache<K, V> {
  private readonly entries: KeptValues<K, V>;
  private tag = -1;
  /** Look-ups answered from the cache and not, for the service's metrics (plain numbers: read on scrape, so counting costs an add). */
  hits = 0;
  misses = 0;

  /** `bound`: a number of entries, or a store of its own (see SizedVersionedCache). */
  constructor(
    private readonly currentVersion: () => number,
    bound: number | KeptValues<K, V> = 10_000,
    private readonly changedSince?: (version: number) => ReadonlySet<K> | undefined,
  ) {
    this.entries = typeof bound === 'number' ? countBounded(bound) : bound;
  }

  /** Brings the values kept up to version `now`: drops those whose sources changed since, or all of them. */
  private moveTo(now: number): void {
    const changed = this.tag >= 0 && now >= 0 && this.entries.size > 0 ? this.changedSince?.(this.tag) : undefined;
    if (changed) for (const key of changed) this.entries.delete(key);
    else if (this.entries.size > 0) this.entries.clear();
    this.tag = now;
  }

  /** The version to tag a value with: read it before loading the value's sources. */
  version(): number {
    return this.currentVersion();
  }

  get(key: K): V | undefined {
    const now = this.currentVersion();
    if (now !== this.tag) this.moveTo(now);
    const value = now < 0 ? undefined : this.entries.get(key);
    if (value === undefined) this.misses++;
    else this.hits++;
    return value;
  }

  /** Stores a value loaded after `version()` answered `loadedAt`; ignored if the model has moved since. */
  set(key: K, value: V, loadedAt: number): void {
    if (loadedAt < 0 || loadedAt !== this.currentVersion()) return;
    if (loadedAt !== this.tag) this.moveTo(loadedAt);
    this.entries.put(key, value);
  }

  /** The kept value, or `read()`'s (kept, unless undefined, for the version current before it ran). */
  async through(key: K, read: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const at = this.version();
    const value = await read();
    if (value !== undefined) this.set(key, value, at);
    return value;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** What a cache needs of the projection runner: which projection holds a collection, and its version. */
export interface VersionedProjections {
  readonly projectors: readonly { readonly name: string; readonly collections: readonly { readonly name: string }[] }[];
  version(projection: string): number;
  /** The ids of `collection` changed since `version`, where known (ProjectionRunner.changedSince). */
  changedSince?(projection: string, collection: string, version: number): ReadonlySet<string> | undefined;
}

/** The version of the projection holding `collection` (-1 when none does: nothing is cached). */
export const collectionVersion = (runner: VersionedProjections, collection: string): (() => number) => {
  const name = holderOf(runner, collection);
  return name === undefined ? () => -1 : () => runner.version(name);
};

/** The ids of `collection` changed since a version of the projection holding it, where known. */
export const collectionChanges = (runner: VersionedProjections, collection: string): ((version: number) => ReadonlySet<string> | undefined) => {
  const name = holderOf(runner, collection);
  return (version) => (name === undefined ? undefined : runner.changedSince?.(name, collection, version));
};

const holderOf = (runner: VersionedProjections, collection: string) => runner.projectors.find((p) => p.collections.some((c) => c.name === collection))?.name;
