import type { AppendResult, EventStore, StreamAppend } from '../../events/event-store.ts';

/** At most this many more turns of the event loop wait for submissions (measured: groups of 19 became 26 at 32 connections). */
const MAX_WAIT_TURNS = 4;
/**
 * Groups written at once. Where the store commits off the event loop, a second group queued behind
 * the one committing keeps the writer busy while this thread handles the first one's answer; more
 * would only make the groups smaller (more transactions, more syncs).
 */
const MAX_IN_FLIGHT = 2;

interface Pending {
  readonly appends: readonly StreamAppend[];
  resolve(results: AppendResult[]): void;
  reject(error: unknown): void;
}

/**
 * Group commit: the appends submitted while the event loop keeps bringing more (see
 * `flushWhenQuiet`) are written with one `appendMany` (on the embedded store one transaction
 * instead of one each, which is most of an append's cost). Each submission stays all-or-nothing with its own expected revisions: when the
 * group fails (a stale revision in one of them, say), every submission is appended again on its
 * own, so only the failing ones fail. Retrying is safe on every engine because events carry ids
 * (a repeated append of the same ids is a no-op).
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private scheduled = false;
  /** Groups being written. */
  private inFlight = 0;
  /** A flush of the pending group is on its way (waiting for a quiet turn, or for the next turn after a write ended). */
  private armed = false;
  /** Settles when the flush under way or next to come has ended. */
  private flushed?: { readonly promise: Promise<void>; readonly resolve: () => void };
  /** Streams with a submitted append, and the end of the flush that writes it. */
  private readonly busy = new Map<string, Promise<void>>();

  constructor(
    private readonly events: EventStore,
    /** Told of every successful append, in the order they were made. */
    private readonly onAppended?: (appends: readonly StreamAppend[], results: readonly AppendResult[]) => void,
    /** Told of the events of a group before it is written (positive) and once its write has ended, retries included (negative). */
    private readonly onWriting?: (events: number) => void,
  ) {}

  /** Appends like `events.appendMany(appends)`, together with the others submitted in this turn. */
  appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ appends, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        let resolveFlushed!: () => void;
        const promise = new Promise<void>((r) => (resolveFlushed = r));
        this.flushed = { promise, resolve: resolveFlushed };
      }
      if (!this.armed && this.inFlight < MAX_IN_FLIGHT) {
        this.armed = true;
        this.flushWhenQuiet(0, 0);
      }
      for (const a of appends) this.busy.set(a.stream, this.flushed!.promise);
    });
  }

  /**
   * When an append to `stream` is submitted and not yet written: settles once it has been (or has
   * failed). A command that waits for it before loading the stream decides on the written state
   * rather than on one that is about to be stale.
   */
  settled(stream: string): Promise<void> | undefined {
    return this.busy.get(stream);
  }

  /**
   * Flushes at the end of a turn of the event loop that brought no new submission, or after
   * MAX_WAIT_TURNS turns that all did. A lone append is written at the end of its own turn, as
   * before; under load the group takes in the requests that reached their commit a turn later.
   * Every group is one synced transaction (fsync: 0.15 ms on a quiet disk, several ms on a busy
   * one), so fewer, larger groups are what push-data throughput is made of.
   */
  private flushWhenQuiet(seen: number, turns: number): void {
    setImmediate(() => {
      const now = this.pending.length;
      if (now > Math.max(seen, 1) && turns < MAX_WAIT_TURNS) this.flushWhenQuiet(now, turns + 1);
      else {
        this.armed = false;
        void this.flush();
      }
    });
  }

  /**
   * Writes the group gathered so far. Where the store commits off the event loop (the embedded
   * store's writer thread) up to MAX_IN_FLIGHT groups are under way; the submissions that arrive
   * meanwhile gather until one ends and then go together at once, so a group grows with the
   * commit's time. The store commits calls in the order made and answers them in that order, so
   * `onAppended` hears of appends in log order (a failed group's retries come after the group
   * written behind it, and are heard of after it).
   */
  private async flush(): Promise<void> {
    const group = this.pending;
    const flushed = this.flushed!;
    this.pending = [];
    this.scheduled = false;
    this.flushed = undefined;
    this.inFlight++;
    let events = 0;
    for (const p of group) for (const a of p.appends) events += a.events.length;
    this.onWriting?.(events);
    try {
      await this.write(group);
    } finally {
      this.onWriting?.(-events);
      for (const p of group) for (const a of p.appends) if (this.busy.get(a.stream) === flushed.promise) this.busy.delete(a.stream);
      this.inFlight--;
      flushed.resolve();
      // Gathered during the write: every turn it took was a turn of waiting already.
      if (this.scheduled && !this.armed) {
        this.armed = true;
        setImmediate(() => {
          this.armed = false;
          void this.flush();
        });
      }
    }
  }

  private async write(group: readonly Pending[]): Promise<void> {
    if (group.length > 1) {
      const appends = group.flatMap((p) => p.appends);
      let results: AppendResult[] | undefined;
      try {
        results = await this.events.appendMany(appends);
      } catch {
        // Found out below, one by one.
      }
      if (results) {
        this.settle(group, appends, results);
        return;
      }
    }
    for (const p of group) {
      let results: AppendResult[];
      try {
        results = await this.events.appendMany(p.appends);
      } catch (e) {
        p.reject(e);
        continue;
      }
      this.settle([p], p.appends, results);
    }
  }

  /** Tells `onAppended` of a successful append (outside any retry: it must never be appended twice) and answers its submissions. */
  private settle(group: readonly Pending[], appends: readonly StreamAppend[], results: AppendResult[]): void {
    try {
      this.onAppended?.(appends, results);
    } catch (e) {
      for (const p of group) p.reject(e);
      return;
    }
    let at = 0;
    for (const p of group) p.resolve(results.slice(at, (at += p.appends.length)));
  }
}

