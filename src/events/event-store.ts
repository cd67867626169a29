/**
 * The EventStore port. Domain code, projectors and queries depend on this interface only;
 * the engines (embedded SQLite, EventStoreDB) are adapters behind it.
 *
 * Positions and revisions are plain numbers: SQLite positions are a dense sequence, EventStoreDB
 * `$all` commit positions are byte offsets in the transaction log (far below 2^53 in practice).
 * Lag figures are therefore "events" on the embedded engine and "log bytes" on EventStoreDB.
 */

export interface EventMetadata {
  /** The HTTP request (or CLI run) that caused the event. */
  correlationId?: string;
  /** The id of the event or command that directly caused this one. */
  causationId?: string;
  /** Who did it: `user:<username>`, `apikey:<id>`, `admin`, `system`. */
  actor?: string;
  /** Version of the event's data shape, used by upcasters when reading back. */
  schemaVersion?: number;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** A UUID. Retrying an append with the same ids is a no-op (idempotent append). */
  readonly id?: string;
  readonly type: Type;
  readonly data: Data;
  readonly metadata?: EventMetadata;
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  readonly id: string;
  readonly type: Type;
  readonly data: Data;
  readonly metadata: EventMetadata;
  readonly stream: string;
  /** Zero-based revision of the event inside its stream. */
  readonly revision: number;
  /** Position in the global log; strictly increasing in log order. */
  readonly position: number;
  /** When the store recorded the event: UTC, millisecond precision. */
  readonly recordedAt: Date;
}

/** `any`: no check; `no_stream`: the stream must not exist; a number: the stream's current last revision. */
export type ExpectedRevision = 'any' | 'no_stream' | number;

export interface AppendResult {
  /** Revision of the last event written (or already present, on an idempotent retry). */
  readonly revision: number;
  /** Global position of the last event written. */
  readonly position: number;
}

export interface StreamAppend {
  readonly stream: string;
  readonly events: readonly NewEvent[];
  readonly expectedRevision?: ExpectedRevision;
}

export interface ReadStreamOptions {
  readonly direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  readonly fromRevision?: number;
  readonly maxCount?: number;
}

export interface LogFilter {
  /** Only events of these types. */
  readonly types?: readonly string[];
  /** Only events whose stream name starts with this prefix. */
  readonly streamPrefix?: string;
}

export interface ReadAllOptions extends LogFilter {
  /** Exclusive: events strictly after this position. Omitted = from the start of the log. */
  readonly after?: number;
  /** Only events recorded at or before this instant. */
  readonly until?: Date;
  readonly maxCount?: number;
}

export interface ReadByStreamOptions {
  /** Only streams whose names start with this prefix. */
  readonly streamPrefix: string;
  /** Only streams whose names sort at or after this one (a part cut by splitStreams). */
  readonly from?: string;
  /** Only streams whose names sort before this one. */
  readonly before?: string;
  /** Only events at or before this position. */
  readonly through: number;
  /** Only events of these types. */
  readonly types?: readonly string[];
}

export interface SplitStreamsOptions {
  readonly streamPrefix: string;
  /** How many parts to cut the streams into. */
  readonly parts: number;
}

export interface SubscribeOptions extends LogFilter {
  /** Exclusive start position; omitted = from the start of the log. */
  readonly after?: number;
  /** Largest batch handed to the handler at once. */
  readonly batchSize?: number;
}

export interface Subscription {
  /** Stops after the batch in progress; resolves once no handler call is running. */
  stop(): Promise<void>;
  /** Settles when the subscription ends: resolves after stop(), rejects if the handler or the engine fails. */
  readonly done: Promise<void>;
}

/**
 * Catch-up subscription: the handler first receives the stored events after `after` in batches,
 * then turns live and receives new events as they are appended. The next batch is delivered only
 * after the handler's promise resolves (back-pressure), so a handler sees events strictly in order.
 */
export type BatchHandler = (batch: readonly RecordedEvent[]) => Promise<void>;

/** An event as an export holds it: all it takes to put it back as it was, bar its position (the store's own). */
export interface ExportedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: EventMetadata;
  readonly stream: string;
  readonly revision: number;
  readonly recordedAt: Date;
}

export interface ImportResult {
  readonly events: number;
  /** Position of the last event imported (0 when there was none). */
  readonly head: number;
}

export interface EventStore {
  /**
   * True when positions are dense (n appended events take the next n positions): a caller that
   * knows its own appends can then tell from the head alone that nobody else has appended.
   */
  readonly densePositions?: boolean;
  /**
   * Whether `appendMany` is all or nothing across streams: true on the embedded store and on KurrentDB 25.1+
   * (`multiStreamAppend`), false on older EventStoreDB / KurrentDB servers, undefined until known (the KurrentDB
   * adapter learns it from the server's answer to its first multi-stream append). Callers need not test it:
   * `appendMany`'s contract below is written so that one way of ordering appends is safe on both.
   */
  readonly atomicAppendMany?: boolean;
  append(stream: string, events: readonly NewEvent[], expectedRevision?: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends to several streams, each with its own expected revision; results in the order of `appends`.
   *
   * Atomic where the engine can be (`atomicAppendMany`). Otherwise the streams are appended one by one in
   * the order given, and the first failure stops the rest while the earlier ones stay written. So a caller
   * puts first the append that can lose a race (a dependent's claim, a user) and last the streams that only
   * this call can create (a new object's): a lost race then writes nothing, on either kind of engine.
   * A repeated call with the same event ids (a retry after a failure or an unanswered call) is a no-op for
   * every append already written, answering its revision again: an append is idempotent by event id.
   *
   * Positions: on an atomic multi-stream append KurrentDB reports one log position, that of the commit's
   * last event, which is then given for every stream of the call (never less than its own last event's);
   * the highest position of a call, the one read-your-writes waits for, is the same on a repeated call.
   */
  appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
  readStream(stream: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  /**
   * The events of every stream whose name starts with `streamPrefix`, one stream after another (in
   * the order of their names), each stream's in revision order; only those at or before `through`.
   * A rebuild folds a projection whose documents each belong to one stream this way: a stream's
   * documents are finished when its last event is folded, so none is held while others are folded.
   * Optional: an engine that can only read its log in log order leaves it out (KurrentDB: reading
   * every stream on its own would cost a round trip per stream), and the rebuild reads the log in
   * order there.
   */
  readByStream?(options: ReadByStreamOptions): AsyncIterable<RecordedEvent>;
  /**
   * Stream names that cut the streams starting with `streamPrefix` into `parts` runs (in name order)
   * of about as many events each: each name is the first stream of the run after it, so readByStream
   * from one to the next reads one run. Fewer names where there are fewer streams; none for one
   * part. Present where readByStream is; the rebuild shares one projection's streams among its
   * worker threads with it.
   */
  splitStreams?(options: SplitStreamsOptions): Promise<string[]>;
  /** Position of the last event in the log, or 0 when the log is empty. */
  headPosition(): Promise<number>;
  subscribe(options: SubscribeOptions, handler: BatchHandler): Subscription;
  /**
   * Loads an exported log into an empty store (a restore), in the order given: every event keeps its
   * id, stream, revision, type, data, metadata and recorded time (a time earlier than the one before
   * it is raised to it: readers rely on time growing with the log). Refuses with StoreNotEmptyError
   * when the store holds any event, and with WrongExpectedRevisionError when an event's revision does
   * not follow its stream's previous one. Nothing else may write meanwhile.
   * Embedded: all or nothing (one transaction). KurrentDB: run after run of one stream's events, in
   * order; the server records its own time, so the original travels in the metadata and is read back
   * as `recordedAt`; a failure leaves the events before it written.
   */
  importEvents(events: AsyncIterable<ExportedEvent>): Promise<ImportResult>;
  close(): Promise<void>;
}

export class StoreNotEmptyError extends Error {
  override readonly name = 'StoreNotEmptyError';
  constructor(readonly head: number) {
    super(`The event store is not empty (its log reaches position ${head}); a log can only be imported into an empty store`);
  }
}

export class WrongExpectedRevisionError extends Error {
  override readonly name = 'WrongExpectedRevisionError';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual last revision, or -1 when it does not exist (`undefined` if unknown). */
    readonly actual: number | undefined,
  ) {
    super(`Stream ${stream}: expected revision ${String(expected)}, actual ${actual === undefined ? 'unknown' : actual}`);
  }
}

/**
 * An event id was reused with different content or at a different place. The embedded store
 * refuses it; EventStoreDB treats ids only as de-duplication keys (an id repeated in the same
 * stream is taken for a retry), so commands must never reuse ids for new events.
 */
export class DuplicateEventIdError extends Error {
  override readonly name = 'DuplicateEventIdError';
  constructor(readonly eventId: string) {
    super(`Event id ${eventId} was already used for a different append`);
  }
}

export const matchesFilter = (filter: LogFilter, type: string, stream: string): boolean =>
  (filter.types === undefined || filter.types.includes(type)) &&
  (filter.streamPrefix === undefined || stream.startsWith(filter.streamPrefix));
