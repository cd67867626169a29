/**
 * Per-stream locks of one process. Commands that write the same streams take turns here instead of
 * all deciding on the same state and all but one failing at the append. Only streams that met a
 * conflict get locked (see `untilCommitted`), so uncontended commands never touch the table beyond
 * one map look-up per load.
 *
 * Deadlock freedom rests on two rules, kept by `LockHolder`:
 * - several locks are only ever taken together, in sorted order, by a holder that holds nothing;
 * - a holder that holds anything never waits for a lock while loading (it loads optimistically).
 * So a waiter either holds nothing, or waits in sorted order behind a holder that never waits for
 * a lower lock than its own.
 */

/** A lock wait that reached its deadline. */
export class LockWaitTimeout extends Error {
  override readonly name = 'LockWaitTimeout';
  constructor(readonly stream: string) {
    super(`Timed out waiting for the lock of stream ${stream}`);
  }
}

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

export class StreamLocks {
  /** A stream is locked while it has an entry; the entry's waiters get it in turn (first come, first served). */
  private readonly locked = new Map<string, Waiter[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether some holder has `stream` locked. */
  isLocked(stream: string): boolean {
    return this.locked.has(stream);
  }

  /** How many streams are locked (for tests and status). */
  get size(): number {
    return this.locked.size;
  }

  /** Takes `stream`'s lock, waiting in turn; rejects with LockWaitTimeout at `deadline` (a `now()` instant). */
  take(stream: string, deadline = Number.POSITIVE_INFINITY): Promise<void> | undefined {
    const waiters = this.locked.get(stream);
    if (!waiters) {
      this.locked.set(stream, []);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject };
      waiters.push(waiter);
      if (deadline === Number.POSITIVE_INFINITY) return;
      waiter.timer = setTimeout(() => {
        const at = waiters.indexOf(waiter);
        if (at < 0) return;
        waiters.splice(at, 1);
        reject(new LockWaitTimeout(stream));
      }, Math.max(0, deadline - this.now()));
    });
  }

  /** Hands `stream`'s lock to its next waiter, or frees it. Only its holder may call this. */
  give(stream: string): void {
    const waiters = this.locked.get(stream);
    if (!waiters) return;
    const next = waiters.shift();
    if (!next) {
      this.locked.delete(stream);
      return;
    }
    if (next.timer) clearTimeout(next.timer);
    next.resolve();
  }
}

/**
 * The locks one command holds, taken by the two rules above; `release()` gives them all back
 * (call it in a `finally`, whatever happened).
 */
export class LockHolder {
  private readonly held = new Set<string>();
  /** The stream a `beforeLoad` is waiting for, if any. */
  private waiting?: string;
  /** Counts releases: a lock handed over after the holder released everything is given back at once. */
  private releases = 0;

  constructor(
    private readonly table: StreamLocks,
    /** No lock is waited for past this instant (`LockWaitTimeout`). */
    private readonly deadline = Number.POSITIVE_INFINITY,
  ) {}

  holds(stream: string): boolean {
    return this.held.has(stream);
  }

  /**
   * Before loading `stream`: when another holder has it locked (it is being retried after a
   * conflict) and this command holds nothing, wait for it and hold it, so as to decide on the
   * state its holder leaves instead of on the one it is about to replace. Undefined when there is
   * nothing to wait for (the common case: no promise is made).
   */
  beforeLoad(stream: string): Promise<void> | undefined {
    if (this.held.size > 0 || this.waiting !== undefined || !this.table.isLocked(stream)) return undefined;
    const taken = this.table.take(stream, this.deadline);
    if (!taken) {
      this.held.add(stream);
      return undefined;
    }
    this.waiting = stream;
    const releases = this.releases;
    return taken.then(
      () => {
        this.waiting = undefined;
        if (releases !== this.releases) this.table.give(stream);
        else this.held.add(stream);
      },
      (e: unknown) => {
        this.waiting = undefined;
        throw e;
      },
    );
  }

  /** Holds exactly the locks of `streams`: releases what it holds (unless that is already all of them), then takes them in sorted order. */
  async lockAll(streams: Iterable<string>): Promise<void> {
    const wanted = [...new Set(streams)].sort();
    if (wanted.length === this.held.size && wanted.every((s) => this.held.has(s))) return;
    this.release();
    const releases = this.releases;
    for (const stream of wanted) {
      const taken = this.table.take(stream, this.deadline);
      if (taken) {
        try {
          await taken;
        } catch (e) {
          this.release();
          throw e;
        }
      }
      if (releases !== this.releases) {
        this.table.give(stream);
        return;
      }
      this.held.add(stream);
    }
  }

  release(): void {
    this.releases += 1;
    for (const stream of this.held) this.table.give(stream);
    this.held.clear();
  }
}
