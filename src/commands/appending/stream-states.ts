import type { EventDecoder } from '../../events/decode.ts';
import type { AppendResult, EventStore, NewEvent, RecordedEvent, StreamAppend } from '../../events/event-store.ts';
import { GroupCommit } from './group-commit.ts';
import { StreamLocks } from './stream-locks.ts';
import { BytesBounded } from '../../projections/bytes-bounded.ts';
import { loadAggregate, type Aggregate, type DomainEvent } from './run-command.ts';

/** An evolve function that does not depend on recorded times (so this process's own appends can be folded in). */
export type DatelessEvolve<S, E extends DomainEvent> = (state: S | null, event: E) => S;

const EPOCH = new Date(0);

/** An appended event as reading it back gives it (but for its position and recorded time, which a dateless fold ignores). */
const asReadBack = (event: NewEvent, text: string, stream: string, revision: number): RecordedEvent => ({
  id: event.id ?? '',
  type: event.type,
  data: JSON.parse(text) as unknown,
  metadata: event.metadata ?? {},
  stream,
  revision,
  position: 0,
  recordedAt: EPOCH,
});

/** What a kept state counts for beyond its JSON: its map entry, key and bookkeeping. */
const ENTRY_BYTES = 128;

/** Estimated bytes of a state: its JSON's length. */
const measure = (state: unknown): number => ENTRY_BYTES + (JSON.stringify(state)?.length ?? 0);

/** What SVC_COMMAND_CACHE defaults to: the bytes of the kept states of all push-data's holders together. */
export const COMMAND_CACHE_BYTES = 16 * 2 ** 20;

/**
 * What this process knows about the tail of an embedded (SQLite) log, whose positions are dense:
 * an append of n events right after the head lands exactly at head + 1 ... head + n.
 *
 * Invariant: every event in (chainStart, head] was appended through `appended()` (this process's
 * group commit), and `lastOwn` has, for each stream written in that range, the position of the
 * last such append. So a state of a stream that was complete up to position `upTo >= chainStart`
 * is still complete while the log's head equals `head` and the stream was not written after
 * `upTo`. Anything else moving the head (other commands, other processes) is seen as a head beyond
 * `head` and restarts the chain there, which only makes states be read again.
 */
export class LogWatch {
  private chainStart = Number.POSITIVE_INFINITY;
  private head = -1;
  private readonly lastOwn = new Map<string, number>();
  /** Events of this process's group commit being written and not yet told of (`appended`). */
  private unreported = 0;
  /** Settles when a write under way ends; made when someone waits for that. */
  private ended?: { readonly promise: Promise<void>; readonly resolve: () => void };

  constructor(
    private readonly events: EventStore,
    private readonly maxStreams = 50_000,
  ) {}

  /** A read of the head not yet begun, which every asker until it begins shares. */
  private nextRead?: Promise<number>;

  /**
   * The log's head as of some instant after this call; read it BEFORE reading a stream whose state
   * is then complete up to it. The commands asking in one turn of the event loop share one read
   * (made at the end of the turn: a push asks for it once per record, and it is a statement on the
   * store each time); a read that has begun is not shared, so no asker gets a head older than its call.
   */
  position(): Promise<number> {
    return (this.nextRead ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.nextRead = undefined;
      return this.read();
    }));
  }

  private async read(): Promise<number> {
    const h = await this.events.headPosition();
    // Where the store commits off the event loop, a group's commit is visible a little before its
    // answer arrives: a move within its events may be its own. No state is current at such a head
    // (it is not `head`), but the chain waits for `appended` to tell instead of starting again.
    if (h > this.head + this.unreported) this.restart(h);
    return h;
  }

  /** A write of `events` more (or, when it has ended, fewer) of this process's events is under way. */
  writing(events: number): void {
    this.unreported += events;
    if (events < 0 && this.ended) {
      this.ended.resolve();
      this.ended = undefined;
    }
  }

  /**
   * Whether a state of `stream` complete up to `upTo` is complete at head `h` (from `position()`). It
   * is complete through `head` then; a head read before this process's latest appends were answered
   * (`h` behind `head`) finds it as complete as a read of the stream would, which reads to its end.
   */
  current(stream: string, upTo: number, h: number): boolean {
    return h <= this.head && upTo >= this.chainStart && upTo >= (this.lastOwn.get(stream) ?? -1);
  }

  /**
   * Whether this process's writes under way may account for head `h`: they are committed and not yet
   * answered, so the head shows them before `appended` is told. Waiting for their answer (`written`)
   * costs no work, where reading the stream costs a read of a file the commit has just changed.
   */
  mayExplain(h: number): boolean {
    return h > this.head && h <= this.head + this.unreported;
  }

  /** Settles when the next write under way has ended (answered, or failed). */
  written(): Promise<void> {
    if (!this.ended) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.ended = { promise, resolve };
    }
    return this.ended.promise;
  }

  /** Records appends this process made (`results` as `appendMany` answered them). */
  appended(appends: readonly StreamAppend[], results: readonly AppendResult[]): void {
    let count = 0;
    for (const a of appends) count += a.events.length;
    let last = -1;
    for (const r of results) last = Math.max(last, r.position);
    if (last < 0) return;
    if (this.head >= 0 && last === this.head + count) this.head = last;
    else this.restart(last);
    if (this.lastOwn.size >= this.maxStreams) this.restart(this.head);
    appends.forEach((a, i) => this.lastOwn.set(a.stream, Math.max(this.lastOwn.get(a.stream) ?? -1, results[i]?.position ?? last)));
  }

  private restart(at: number): void {
    this.chainStart = at;
    this.head = at;
    this.lastOwn.clear();
  }
}

type Kept<S> = Aggregate<S> & {
  readonly upTo: number;
  /** Estimated bytes: measured on a load, then grown by the JSON of each own append folded in. */
  readonly bytes: number;
  /** The last measured figure: past twice that, the state is measured again. */
  readonly measured: number;
};

/**
 * Folded stream states kept between commands. A load reads only the events appended after the
 * kept revision (by this process or any other), so it answers exactly what a fold of the whole
 * stream would, with one short read instead of the stream's history. With a `LogWatch` it does
 * not read at all while the log has only moved by this process's appends, whose events are folded
 * in as they are appended (`appended`). Writers still append with the loaded revision as the
 * expected one, so concurrency control is unchanged.
 *
 * `evolve` must be pure and must not depend on recorded times, and states are shared between
 * callers: never mutate one. Bounded in estimated bytes (the states' JSON): the least recently
 * used streams are dropped first, and a state larger than the bound is not kept.
 */
export class StreamStates<S, E extends DomainEvent> {
  private readonly entries: BytesBounded<string, Kept<S>>;

  constructor(
    private readonly events: EventStore,
    private readonly decode: EventDecoder,
    private readonly evolve: DatelessEvolve<S, E>,
    private readonly watch?: LogWatch,
    private readonly commits?: GroupCommit,
    maxBytes = COMMAND_CACHE_BYTES / 4,
  ) {
    this.entries = new BytesBounded(maxBytes, maxBytes);
  }

  /**
   * The stream's state. `at`: the log's head as `watch.position()` answered it earlier in this
   * command (its reads then all happen as of that instant); read afresh when omitted. An append
   * to the stream submitted to the group commit is waited for first, so that concurrent commands
   * on one stream take turns instead of deciding on the same state and all but one failing.
   */
  async load(stream: string, at?: number): Promise<Aggregate<S>> {
    for (let submitted = this.commits?.settled(stream); submitted; submitted = this.commits?.settled(stream)) {
      await submitted;
      at = undefined;
    }
    let kept = this.entries.get(stream);
    const head = this.watch ? (at ?? (await this.watch.position())) : -1;
    // Under load the head often shows a group of this process's committed a moment before its answer.
    while (kept && this.watch && !this.watch.current(stream, kept.upTo, head) && this.watch.mayExplain(head)) {
      await this.watch.written();
      kept = this.entries.get(stream);
    }
    if (kept && this.watch?.current(stream, kept.upTo, head)) {
      this.entries.touch(stream);
      return { state: kept.state, revision: kept.revision };
    }
    const loaded = await loadAggregate(this.events, this.decode, stream, this.evolve, kept);
    if (loaded.revision < 0) return loaded;
    // A concurrent load may have kept a later state meanwhile: keep the latest.
    const now = this.entries.get(stream);
    if (!now || now.revision < loaded.revision || (now.revision === loaded.revision && now.upTo < head)) {
      const bytes = measure(loaded.state);
      this.entries.put(stream, { ...loaded, upTo: head, bytes, measured: bytes }, bytes);
    }
    return loaded;
  }

  /**
   * Folds in an append this process made (`result` as the store answered it), when the kept
   * state is the one it was decided on: the append's expected revision proves that no other event
   * came between, so the state is complete up to the append's position.
   */
  appended(append: StreamAppend, result: AppendResult): void {
    const kept = this.entries.get(append.stream);
    if (!kept || append.expectedRevision !== kept.revision || result.revision !== kept.revision + append.events.length) return;
    let { state, revision, bytes, measured } = kept;
    for (const event of append.events) {
      revision += 1;
      const text = JSON.stringify(event.data);
      bytes += text.length;
      state = this.evolve(state, this.decode<E>(asReadBack(event, text, append.stream, revision)));
    }
    // An event's JSON bounds what it adds; changes that replace values make that an overestimate, corrected now and then.
    if (bytes > 2 * measured) bytes = measured = measure(state);
    this.entries.put(append.stream, { state, revision, upTo: result.position, bytes, measured }, bytes);
  }

  /** Drops the kept state of a stream (the next load reads it whole). */
  forget(stream: string): void {
    this.entries.delete(stream);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The command-side helpers of one event store: its group commit, stream locks and, where positions are dense, its log watch. */
export interface StoreHelpers {
  readonly commits: GroupCommit;
  /** Commands writing the same streams take turns here after a conflict (see `untilCommitted`). */
  readonly locks: StreamLocks;
  readonly watch?: LogWatch;
  /** A new holder of kept stream states over this store's watch and group commit, keeping up to `maxBytes` (estimated) of them. */
  streamStates<S, E extends DomainEvent>(decode: EventDecoder, evolve: DatelessEvolve<S, E>, maxBytes: number): StreamStates<S, E>;
}

/** The helpers of an event store: made once at start-up and shared by the commands that append to it. */
export const createStoreHelpers = (events: EventStore): StoreHelpers => {
  // Without dense positions (EventStoreDB) the head says nothing about who appended: short reads alone.
  const watch = events.densePositions ? new LogWatch(events) : undefined;
  const commits = watch
    ? new GroupCommit(
        events,
        (appends, results) => watch.appended(appends, results),
        (n) => watch.writing(n),
      )
    : new GroupCommit(events);
  return {
    commits,
    locks: new StreamLocks(),
    ...(watch ? { watch } : {}),
    streamStates<S, E extends DomainEvent>(decode: EventDecoder, evolve: DatelessEvolve<S, E>, maxBytes: number): StreamStates<S, E> {
      return new StreamStates(events, decode, evolve, watch, commits, maxBytes);
    },
  };
};
