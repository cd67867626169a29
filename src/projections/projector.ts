import type { RecordedEvent } from '../events/event-store.ts';
import type { CollectionSpec, Doc, DocText, ReadStore, WriteOp } from './read-store.ts';
import type { MemoryDocs } from './batch-docs.ts';

/** Gives the event loop back when the caller's slice of time is used (an answer being made). */
export type Pause = () => Promise<void>;
/** For callers with no one to give the event loop to (the command line, tests). */
export const noPause: Pause = async () => undefined;

/** What a projector may do with read-model documents while folding one event. */
export interface DocAccess {
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null>;
  put(collection: string, doc: Doc): void;
  delete(collection: string, id: string): void;
  /**
   * The document when it is at hand without waiting (null: there is none), undefined when only
   * `get` can tell. Optional: folds run over every event of a rebuild, and most of their reads are
   * answered from memory, where a promise per read is much of their cost.
   */
  peek?<T extends Doc = Doc>(collection: string, id: string): T | null | undefined;
}

/**
 * A read model defined as a fold over the event log. `apply` must depend only on the event and the
 * documents it reads, so the same projector builds the live read model (runner), a scratch copy
 * (verify, rebuild) and an in-memory answer for a past instant (replay).
 */
export interface Projector {
  readonly name: string;
  readonly collections: readonly CollectionSpec[];
  /** Event types the fold reacts to; other events only advance the checkpoint. */
  readonly handles?: readonly string[];
  apply(event: RecordedEvent, docs: DocAccess): void | Promise<void>;
  /**
   * Runs after each batch has been folded, before the next one: this is where snapshots are taken.
   * Failures are logged, never retried.
   */
  afterBatch?(context: BatchContext): Promise<void>;
  /**
   * Runs when a rebuild starts from nothing (no rebuild checkpoint), before it folds anything: what an
   * earlier run that was abandoned left outside the rebuild's copies goes (their copies are dropped).
   */
  beforeRebuild?(reads: ReadStore): Promise<void>;
  /** Runs once a rebuild has been switched in (e.g. to retire data derived from the old version). */
  afterRebuild?(reads: ReadStore): Promise<void>;
  /**
   * Collections whose documents follow from the fold's other collections: snapshots leave them out,
   * and whoever loads a snapshot makes them again with `derive` (replacing what the state held)
   * before folding further events onto it, calling `pause` as it goes (a query's answer gives
   * the event loop back so).
   */
  readonly derived?: { readonly collections: readonly string[]; derive(state: MemoryDocs, pause: Pause): Promise<void> };
  /**
   * Set when the fold is one per stream: every event it folds lies in a stream named with this
   * prefix, and the documents an event reads or writes belong to that stream alone. A rebuild
   * from nothing may then fold it stream by stream (EventStore.readByStream), keeping only the
   * documents of the streams in hand, each written once, instead of the whole state.
   */
  readonly byStream?: { readonly streamPrefix: string };
  /**
   * For some of the projector's collections, the id of the one document of it that folding an event
   * may write or remove (undefined: none). A process that sees another one's commit reads the events
   * it folded and drops from its caches only what they name (see VersionSteps).
   */
  readonly documentsOf?: Readonly<Record<string, (event: RecordedEvent) => string | undefined>>;
}

export interface BatchContext {
  readonly reads: ReadStore;
  /** The batch's last event. */
  readonly last: RecordedEvent;
  /**
   * The position the batch folds on from (its first event is the next one after it). When it is
   * not the `last` of the previous batch this projector saw, something else folded in between (another
   * process held the projection, or a failed window was dropped): what was kept about earlier
   * batches is incomplete.
   */
  readonly after?: number;
  /** What the batch wrote and removed, under the projector's own collection names. */
  readonly changes: readonly WriteOp[];
  /** Set while the projection is being rebuilt. */
  readonly rebuild?: RebuildTarget;
  /**
   * The generation of the projection whose state the batch folds (its checkpoint's, moved by each
   * rebuild switched in; a rebuild folds the next one): what is kept of a state is valid for its
   * generation only. 0 when not given.
   */
  readonly generation?: number;
  /**
   * Every document of one of the projector's collections, as folded up to `last`, a page at a time:
   * parsed where they are in memory, as JSON text where they are read from the store.
   */
  state(collection: string): Promise<Pages<Doc | DocText>>;
}

/** Items handed on a page at a time, from memory or as they are read. */
export type Pages<T> = Iterable<readonly T[]> | AsyncIterable<readonly T[]>;

/** Where a rebuild writes: fresh copies of the projector's collections under other names. */
export interface RebuildTarget {
  readonly physical: (collection: string) => string;
}

/**
 * The common shape: each event concerns at most one document, whose next state is a pure
 * function of its current state and the event (`null` removes it).
 */
export const foldDocuments =
  <D extends Doc>(
    collection: string,
    idOf: (event: RecordedEvent) => string | undefined,
    evolve: (doc: D | null, event: RecordedEvent) => D | null,
  ) =>
  async (event: RecordedEvent, docs: DocAccess): Promise<void> => {
    const id = idOf(event);
    if (id === undefined) return;
    const next = evolve(await docs.get<D>(collection, id), event);
    if (next === null) docs.delete(collection, id);
    else docs.put(collection, next);
  };
