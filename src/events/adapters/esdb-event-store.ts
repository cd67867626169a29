/** EventStoreDB (and KurrentDB) adapter of the EventStore port, on `@eventstore/db-client` 6.x (gRPC). */
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type Filter,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  WrongExpectedRevisionError,
  matchesFilter,
  type AppendResult,
  type BatchHandler,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from '../event-store.ts';
import {
  fromCurrentRevision,
  isSystemEvent,
  knownPosition,
  toEsdbConnectionString,
  toEsdbExpectedRevision,
  toEventData,
  toReadPosition,
  toRecordedEvent,
} from './esdb-mapping.ts';

const READ_ALL_PAGE_SIZE = 500;
const DEFAULT_BATCH_SIZE = 500;
/** How long a partial batch waits for more events before it is handed over (the catch-up bursts arrive within it). */
const FLUSH_DELAY_MS = 5;
const OPEN_PROBE_TIMEOUT_MS = 10_000;

/** Iterates a client read and cancels the gRPC call when the consumer stops early (reads have no deadline). */
async function* iterate<T>(read: StreamingRead<T>): AsyncGenerator<T> {
  let finished = false;
  try {
    for await (const item of read) yield item;
    finished = true;
  } finally {
    if (!finished) await read.cancel().catch(() => undefined);
  }
}

export class EsdbEventStore implements EventStore {
  constructor(private readonly client: EventStoreDBClient) {}

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    if (events.length === 0) return this.#appendNothing(stream, expectedRevision);
    let result;
    try {
      result = await this.client.appendToStream(stream, events.map(toEventData), {
        expectedRevision: toEsdbExpectedRevision(expectedRevision),
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(stream, expectedRevision, fromCurrentRevision(error.actualVersion));
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
   * EventStoreDB has no multi-stream transaction: the streams are appended one after the other. A retry of the whole
   * call after a partial failure is safe, because the events carry their ids and the server treats a repeated append
   * of the same ids at the same expected revision as already done (idempotent) instead of writing them again.
   */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const { stream, events, expectedRevision } of appends) {
      results.push(await this.append(stream, events, expectedRevision));
    }
    return results;
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
      for await (const resolved of iterate(read)) {
        const event = toRecordedEvent(resolved);
        if (event !== undefined) yield event;
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return;
      throw error;
    }
  }

  /** The 6.x client cannot filter `readAll` on the server (only subscriptions), so filters apply here. */
  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    const { after, until, maxCount } = options;
    if (maxCount !== undefined && maxCount <= 0) return;
    const untilMs = until?.getTime();
    let from = toReadPosition(after);
    let lastPosition = after ?? -1;
    let delivered = 0;
    for (;;) {
      let received = 0;
      // A page read from a position starts at that (already seen) event, hence the `<= lastPosition` skip.
      for await (const resolved of iterate(
        this.client.readAll({ direction: FORWARDS, fromPosition: from, maxCount: READ_ALL_PAGE_SIZE }),
      )) {
        received++;
        const recorded = resolved.event;
        if (recorded === undefined) continue;
        from = recorded.position;
        const position = Number(recorded.position.commit);
        if (position <= lastPosition) continue;
        lastPosition = position;
        if (isSystemEvent(recorded.type, recorded.streamId)) continue;
        if (untilMs !== undefined && recorded.created.getTime() > untilMs) return;
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
    for await (const resolved of iterate(this.client.readAll({ direction: BACKWARDS, fromPosition: END }))) {
      const recorded = resolved.event;
      if (recorded !== undefined && !isSystemEvent(recorded.type, recorded.streamId)) {
        return Number(recorded.position.commit);
      }
    }
    return 0;
  }

  subscribe(options: SubscribeOptions, handler: BatchHandler): Subscription {
    return new EsdbSubscription(this.client, options, handler);
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

  constructor(client: EventStoreDBClient, options: SubscribeOptions, handler: BatchHandler) {
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
 * The server filters on one criterion only: the stream prefix when given (most selective), else the event types,
 * else just system events. Everything else, and exact type matches, are checked again client-side.
 */
const serverFilter = (options: SubscribeOptions): Filter => {
  if (options.streamPrefix !== undefined) return streamNameFilter({ prefixes: [options.streamPrefix] });
  if (options.types !== undefined && options.types.length > 0) return eventTypeFilter({ prefixes: [...options.types] });
  return excludeSystemEvents();
};

export async function openEsdbEventStore(connectionString: string): Promise<EsdbEventStore> {
  const client = EventStoreDBClient.connectionString(toEsdbConnectionString(connectionString));
  const store = new EsdbEventStore(client);
  // Reads have no gRPC deadline, so an unreachable (rather than refusing) host would hang the probe without a timer.
  const probe = client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        for await (const _ of iterate(probe));
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`EventStoreDB did not answer within ${OPEN_PROBE_TIMEOUT_MS} ms`)),
          OPEN_PROBE_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (error) {
    await probe.cancel().catch(() => undefined);
    await client.dispose().catch(() => undefined);
    throw new Error(`Cannot open EventStoreDB event store: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
  return store;
}
