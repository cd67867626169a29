/**
 * EventStoreDB / KurrentDB adapter of the EventStore port, on the vendor's `@kurrent/kurrentdb-client` 1.x (gRPC;
 * stream and `$all` reads go through the client's native bridge, appends and subscriptions through gRPC).
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  StreamNotFoundError,
  UnsupportedError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type Filter,
  type MultiAppendResult,
} from '@kurrent/kurrentdb-client';
import {
  StoreNotEmptyError,
  WrongExpectedRevisionError,
  matchesFilter,
  type AppendResult,
  type ExportedEvent,
  type ImportResult,
  type BatchHandler,
  type EventStore,
  type ExpectedRevision,
  type LogFilter,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from '../event-store.ts';
import {
  fromCurrentState,
  isSystemEvent,
  knownPosition,
  recordedAtOf,
  toImportedEventData,
  toEventData,
  toKurrentConnectionString,
  toMultiStreamEventData,
  toReadPosition,
  toRecordedEvent,
  toStreamState,
} from './esdb-mapping.ts';

const READ_ALL_PAGE_SIZE = 500;
/** Largest run of imported events sent in one append (JSON characters, roughly bytes). */
const IMPORT_APPEND_BYTES = 512 * 1024;
const DEFAULT_BATCH_SIZE = 500;
/** How long a partial batch waits for more events before it is handed over (the catch-up bursts arrive within it). */
const FLUSH_DELAY_MS = 5;
const OPEN_PROBE_TIMEOUT_MS = 10_000;
/** gRPC status UNIMPLEMENTED: the server has no such method (the client passes it through as the error's `code`). */
const GRPC_UNIMPLEMENTED = 12;

/**
 * Whether the server lacks multi-stream appends. The client asks the server's feature list first and throws its
 * `UnsupportedError("multiStreamAppend", "25.1")` before sending anything (dist/streams/appendToStream/index.js);
 * a server that lists the method but then answers UNIMPLEMENTED is taken the same way. Either way nothing was written.
 */
const lacksMultiStreamAppend = (error: unknown): boolean =>
  error instanceof UnsupportedError || (error as { code?: unknown } | null)?.code === GRPC_UNIMPLEMENTED;

const distinctStreams = (appends: readonly StreamAppend[]): boolean => new Set(appends.map((a) => a.stream)).size === appends.length;

export class EsdbEventStore implements EventStore {
  /** Learnt from the server on the first multi-stream append (undefined until then). */
  #multiStream: boolean | undefined;

  constructor(private readonly client: KurrentDBClient) {}

  get atomicAppendMany(): boolean | undefined {
    return this.#multiStream;
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    if (events.length === 0) return this.#appendNothing(stream, expectedRevision);
    let result;
    try {
      result = await this.client.appendToStream(stream, events.map(toEventData), { streamState: toStreamState(expectedRevision) });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(stream, expectedRevision, fromCurrentState(error.actualState));
      }
      throw error;
    }
    // Only with `throwOnAppendFailure=false` in the connection string; the batch-append path then reports a bogus revision.
    if (!result.success) throw new WrongExpectedRevisionError(stream, expectedRevision, undefined);
    const revision = Number(result.nextExpectedRevision);
    // Older servers answer an idempotent retry without the position of the events already written.
    const position = knownPosition(result.position?.commit) ?? (await this.#positionOf(stream, revision));
    return { revision, position };
  }

  /**
   * One `multiStreamAppend` (all or nothing, KurrentDB 25.1+) when the server has it and the call names each stream
   * once (a limit of the server's append session); otherwise stream after stream in the order given, stopping at the
   * first failure. Retrying either way is safe: the events carry their ids, and the server takes a repeated append of
   * the same ids at the same expected revision as already done (idempotent) instead of writing them again.
   */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 1) return [await this.append(appends[0]!.stream, appends[0]!.events, appends[0]!.expectedRevision)];
    if (appends.length > 1 && this.#multiStream !== false && distinctStreams(appends) && appends.every((a) => a.events.length > 0)) {
      const results = await this.#appendAtomically(appends);
      if (results !== undefined) return results;
    }
    const results: AppendResult[] = [];
    for (const { stream, events, expectedRevision } of appends) results.push(await this.append(stream, events, expectedRevision));
    return results;
  }

  /** undefined when the server has no multi-stream append (nothing was written then). */
  async #appendAtomically(appends: readonly StreamAppend[]): Promise<AppendResult[] | undefined> {
    const results: AppendResult[] = new Array(appends.length);
    let pending = appends.map((append, index) => ({ append, index }));
    for (let attempt = 1; ; attempt++) {
      let answer: MultiAppendResult;
      try {
        answer = await this.client.multiStreamAppend(
          pending.map(({ append }) => ({
            streamName: append.stream,
            expectedState: toStreamState(append.expectedRevision ?? 'any'),
            events: append.events.map(toMultiStreamEventData),
          })),
        );
      } catch (error) {
        if (lacksMultiStreamAppend(error)) {
          this.#multiStream = false;
          return undefined;
        }
        // A revision conflict comes as the client's WrongExpectedVersionError, built from the server's
        // StreamRevisionConflictErrorDetails (stream, expected and actual revision: dist/utils/CommandError.js).
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        // Appends whose events are already in place (a retry of a call that was written, or partly written in order
        // before) are done; the others are sent once more on their own, and a conflict then is a real one.
        const done = await Promise.all(pending.map(({ append }) => this.#alreadyAppended(append)));
        const rest = pending.filter((_, i) => done[i] === undefined);
        pending.forEach(({ index }, i) => {
          if (done[i] !== undefined) results[index] = done[i];
        });
        if (rest.length === 0) return results;
        if (attempt > 1 || rest.length === pending.length) throw this.#conflict(error, appends);
        pending = rest;
        continue;
      }
      this.#multiStream = true;
      // The session reports one position, its last record's (streams.proto v2 AppendSessionResponse.position).
      const position = Number(answer.position);
      const revisions = new Map(answer.responses.map((r) => [r.streamName, Number(r.revision)]));
      for (const { append, index } of pending) {
        const revision = revisions.get(append.stream);
        results[index] = revision === undefined ? await this.#lastOf(append.stream) : { revision, position };
      }
      return results;
    }
  }

  #conflict(error: WrongExpectedVersionError, appends: readonly StreamAppend[]): WrongExpectedRevisionError {
    const expected = appends.find((a) => a.stream === error.streamName)?.expectedRevision ?? 'any';
    return new WrongExpectedRevisionError(error.streamName, expected, fromCurrentState(error.actualState));
  }

  /**
   * The result of `append` if its events are already in its stream right after the expected revision (the server's
   * own idempotency rule for single-stream appends). Unknowable for `any`, which has no place to look at.
   */
  async #alreadyAppended(append: StreamAppend): Promise<AppendResult | undefined> {
    const { stream, events, expectedRevision = 'any' } = append;
    if (expectedRevision === 'any' || events.some((e) => e.id === undefined)) return undefined;
    const from = expectedRevision === 'no_stream' ? 0 : expectedRevision + 1;
    const found: RecordedEvent[] = [];
    for await (const event of this.readStream(stream, { fromRevision: from, maxCount: events.length })) found.push(event);
    if (found.length !== events.length || found.some((e, i) => e.id !== events[i]!.id)) return undefined;
    const last = found[found.length - 1]!;
    return { revision: last.revision, position: last.position };
  }

  async #lastOf(stream: string): Promise<AppendResult> {
    for await (const event of this.readStream(stream, { direction: 'backwards', maxCount: 1 })) {
      return { revision: event.revision, position: event.position };
    }
    throw new Error(`KurrentDB acknowledged an append to ${stream} that cannot be read back`);
  }

  async *readStream(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const direction = options.direction ?? 'forwards';
    if (options.maxCount !== undefined && options.maxCount <= 0) return;
    const read = this.client.readStream(stream, {
      direction: direction === 'forwards' ? FORWARDS : BACKWARDS,
      fromRevision:
        options.fromRevision !== undefined ? BigInt(options.fromRevision) : direction === 'forwards' ? START : END,
      ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
    });
    try {
      for await (const resolved of read) {
        const event = toRecordedEvent(resolved);
        if (event !== undefined) yield event;
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return;
      throw error;
    }
  }

  /**
   * Pages of `$all`, filtered on the server (one criterion, see `serverFilter`) and checked again here. A filtered
   * read goes on past non-matching events until it has `maxCount` matches or reaches the end of the log (the
   * server's ReadAllForwardsFiltered enumerator), so a short page is the end. The native reader cannot be cancelled:
   * pages are bounded so that stopping early leaves little unread.
   */
  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const { after, until, maxCount } = options;
    if (maxCount !== undefined && maxCount <= 0) return;
    const untilMs = until?.getTime();
    const filter = serverFilter(options);
    let from = toReadPosition(after);
    let lastPosition = after ?? -1;
    let delivered = 0;
    for (;;) {
      let received = 0;
      // A page read from a position starts at that (already seen) event, hence the `<= lastPosition` skip.
      for await (const resolved of this.client.readAll({ direction: FORWARDS, fromPosition: from, maxCount: READ_ALL_PAGE_SIZE, filter })) {
        received++;
        const recorded = resolved.event;
        if (recorded === undefined) continue;
        from = recorded.position;
        const position = Number(recorded.position.commit);
        if (position <= lastPosition) continue;
        lastPosition = position;
        if (isSystemEvent(recorded.type, recorded.streamId)) continue;
        if (untilMs !== undefined && recordedAtOf(recorded).getTime() > untilMs) return;
        if (!matchesFilter(options, recorded.type, recorded.streamId)) continue;
        const event = toRecordedEvent(resolved);
        if (event === undefined) continue;
        yield event;
        if (maxCount !== undefined && ++delivered >= maxCount) return;
      }
      if (received < READ_ALL_PAGE_SIZE) return;
    }
  }

  async headPosition(): Promise<number> {
    const last = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter: excludeSystemEvents() });
    for await (const resolved of last) {
      const recorded = resolved.event;
      if (recorded !== undefined && !isSystemEvent(recorded.type, recorded.streamId)) return Number(recorded.position.commit);
    }
    return 0;
  }

  subscribe(options: SubscribeOptions, handler: BatchHandler): Subscription {
    return new EsdbSubscription(this.client, options, handler);
  }

  /**
   * Consecutive events of one stream go in one append (bounded well below the server's default 1 MiB
   * MaxAppendSize), at the revision before the run's first: the server then gives each the revision it had.
   * Empty means no event outside the server's own `$` streams.
   */
  async importEvents(events: AsyncIterable<ExportedEvent>): Promise<ImportResult> {
    const existing = await this.headPosition();
    if (existing !== 0) throw new StoreNotEmptyError(existing);
    let run: ExportedEvent[] = [];
    let runBytes = 0;
    let count = 0;
    let head = 0;
    let recordedAt = 0;
    const flush = async () => {
      if (run.length === 0) return;
      const first = run[0]!;
      const expected: ExpectedRevision = first.revision === 0 ? 'no_stream' : first.revision - 1;
      try {
        const result = await this.client.appendToStream(first.stream, run.map(toImportedEventData), { streamState: toStreamState(expected) });
        if (!result.success) throw new WrongExpectedRevisionError(first.stream, expected, undefined);
        head = knownPosition(result.position?.commit) ?? (await this.#positionOf(first.stream, Number(result.nextExpectedRevision)));
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) throw new WrongExpectedRevisionError(first.stream, expected, fromCurrentState(error.actualState));
        throw error;
      }
      count += run.length;
      run = [];
      runBytes = 0;
    };
    for await (const event of events) {
      const last = run[run.length - 1];
      const bytes = JSON.stringify(event.data ?? null).length + JSON.stringify(event.metadata ?? {}).length + 200;
      if (last && (last.stream !== event.stream || event.revision !== last.revision + 1 || runBytes + bytes > IMPORT_APPEND_BYTES)) await flush();
      recordedAt = Math.max(recordedAt, event.recordedAt.getTime());
      run.push(recordedAt === event.recordedAt.getTime() ? event : { ...event, recordedAt: new Date(recordedAt) });
      runBytes += bytes;
    }
    await flush();
    return { events: count, head };
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  /** Checks the expected revision without writing, so an empty append behaves the same on every server version. */
  async #appendNothing(stream: string, expectedRevision: ExpectedRevision): Promise<AppendResult> {
    let last: RecordedEvent | undefined;
    for await (const event of this.readStream(stream, { direction: 'backwards', maxCount: 1 })) last = event;
    const actual = last?.revision ?? -1;
    const ok = expectedRevision === 'any' || (expectedRevision === 'no_stream' ? actual === -1 : actual === expectedRevision);
    if (!ok) throw new WrongExpectedRevisionError(stream, expectedRevision, actual);
    return { revision: actual, position: last?.position ?? 0 };
  }

  async #positionOf(stream: string, revision: number): Promise<number> {
    for await (const event of this.readStream(stream, { fromRevision: revision, maxCount: 1 })) return event.position;
    throw new Error(`EventStoreDB acknowledged an append to ${stream} at revision ${revision} that cannot be read back`);
  }
}

/**
 * Catch-up subscription on `$all` that turns live by itself. Events are buffered and handed to the handler in
 * batches; the server stream is paused while a full batch waits, so a slow handler holds back the server.
 */
class EsdbSubscription implements Subscription {
  readonly done: Promise<void>;
  readonly #source: AllStreamSubscription;
  readonly #handler: BatchHandler;
  readonly #filter: SubscribeOptions;
  readonly #after: number | undefined;
  readonly #batchSize: number;
  #buffer: RecordedEvent[] = [];
  #active = true;
  #paused = false;
  #draining = false;
  #drained: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #error: { readonly cause: unknown } | undefined;
  #shutdown: Promise<void> | undefined;
  #settle!: () => void;

  constructor(client: KurrentDBClient, options: SubscribeOptions, handler: BatchHandler) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    this.#handler = handler;
    this.#filter = { types: options.types, streamPrefix: options.streamPrefix };
    this.#after = options.after;
    this.#batchSize = batchSize;
    let resolveDone!: () => void;
    let rejectDone!: (cause: unknown) => void;
    this.done = new Promise<void>((resolve, reject) => {
      resolveDone = resolve;
      rejectDone = reject;
    });
    this.#settle = () => (this.#error === undefined ? resolveDone() : rejectDone(this.#error.cause));
    // The failure stays observable through `done`; without this a consumer that awaits stop() first would crash the process.
    this.done.catch(() => undefined);

    this.#source = client.subscribeToAll({ fromPosition: toReadPosition(options.after), filter: serverFilter(options) });
    this.#source.on('data', (resolved: AllStreamResolvedEvent) => this.#onEvent(resolved));
    this.#source.on('error', (error: Error) => this.#fail(error));
    this.#source.on('end', () => this.#fail(new Error('EventStoreDB ended the $all subscription')));
  }

  stop(): Promise<void> {
    return this.#close();
  }

  #onEvent(resolved: AllStreamResolvedEvent): void {
    if (!this.#active) return;
    let event: RecordedEvent | undefined;
    try {
      event = toRecordedEvent(resolved);
    } catch (error) {
      this.#fail(error);
      return;
    }
    if (
      event === undefined ||
      (this.#after !== undefined && event.position <= this.#after) ||
      isSystemEvent(event.type, event.stream) ||
      !matchesFilter(this.#filter, event.type, event.stream)
    ) {
      return;
    }
    this.#buffer.push(event);
    if (this.#buffer.length >= this.#batchSize && !this.#paused) {
      this.#source.pause();
      this.#paused = true;
    }
    if (this.#draining) return;
    if (this.#buffer.length >= this.#batchSize) {
      this.#drain();
    } else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        if (!this.#draining) this.#drain();
      }, FLUSH_DELAY_MS);
    }
  }

  /** The only place the handler is called; `#draining` is flipped synchronously so no second loop can start. */
  #drain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#draining = true;
    this.#drained = (async () => {
      try {
        while (this.#active && this.#buffer.length > 0) {
          const batch = this.#buffer.splice(0, this.#batchSize);
          if (this.#paused && this.#buffer.length < this.#batchSize) {
            this.#paused = false;
            this.#source.resume();
          }
          try {
            await this.#handler(batch);
          } catch (error) {
            this.#fail(error);
            return;
          }
        }
      } finally {
        this.#draining = false;
      }
    })();
  }

  #fail(cause: unknown): void {
    if (!this.#active) return;
    this.#error = { cause };
    void this.#close();
  }

  #close(): Promise<void> {
    this.#shutdown ??= (async () => {
      this.#active = false;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#buffer = [];
      await this.#source.unsubscribe().catch(() => undefined);
      await this.#drained;
      this.#settle();
    })();
    return this.#shutdown;
  }
}

/**
 * The server filters on one criterion only: the stream prefix when given (most selective), else the event types
 * (as prefixes), else just system events. Everything else, and exact type matches, are checked again client-side.
 */
const serverFilter = (options: LogFilter): Filter => {
  if (options.streamPrefix !== undefined) return streamNameFilter({ prefixes: [options.streamPrefix] });
  if (options.types !== undefined && options.types.length > 0) return eventTypeFilter({ prefixes: [...options.types] });
  return excludeSystemEvents();
};

export async function openEsdbEventStore(connectionString: string): Promise<EsdbEventStore> {
  const client = KurrentDBClient.connectionString(toKurrentConnectionString(connectionString));
  const store = new EsdbEventStore(client);
  // Reads have no deadline, so an unreachable (rather than refusing) host would hang the probe without a timer.
  // The probe reads `$all`, so a user who may not read it is told now rather than by the first projection.
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      store.headPosition(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`KurrentDB did not answer within ${OPEN_PROBE_TIMEOUT_MS} ms`)),
          OPEN_PROBE_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (error) {
    await client.dispose().catch(() => undefined);
    throw new Error(`Cannot open the KurrentDB event store: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
  return store;
}
