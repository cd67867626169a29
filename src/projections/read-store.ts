/**
 * The ReadStore port: named collections of JSON documents (read models) plus per-projection
 * checkpoints kept beside them. Engines: embedded SQLite, MongoDB.
 */

export interface Doc {
  /** Unique inside its collection. */
  readonly id: string;
  readonly [field: string]: unknown;
}

export interface CollectionSpec {
  readonly name: string;
  /** Fields (dotted paths allowed) that `find` may filter and sort by. */
  readonly indexes?: readonly string[];
}

export type Scalar = string | number | boolean | null;

/** Equality on a scalar, or a range / membership test. */
export type FieldCondition =
  | Scalar
  | { readonly $in: readonly Scalar[] }
  | { readonly $gt?: Scalar; readonly $gte?: Scalar; readonly $lt?: Scalar; readonly $lte?: Scalar };

export interface FindQuery {
  /** Every field must be declared in the collection's indexes (or be `id`). */
  readonly where?: Readonly<Record<string, FieldCondition>>;
  readonly sort?: readonly (readonly [field: string, direction: 'asc' | 'desc'])[];
  readonly limit?: number;
}

export type WriteOp =
  | { readonly kind: 'put'; readonly collection: string; readonly doc: Doc }
  | { readonly kind: 'delete'; readonly collection: string; readonly id: string };

export interface Checkpoint {
  readonly position: number;
}

export interface ReadStore extends LeaseStore {
  /** Creates the collection (and its indexes) if missing; idempotent. */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  listCollections(): Promise<string[]>;
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null>;
  getMany<T extends Doc = Doc>(collection: string, ids: readonly string[]): Promise<Map<string, T>>;
  find<T extends Doc = Doc>(collection: string, query?: FindQuery): Promise<T[]>;
  count(collection: string, query?: Pick<FindQuery, 'where'>): Promise<number>;
  upsert(collection: string, doc: Doc): Promise<void>;
  delete(collection: string, id: string): Promise<void>;
  /** Applies the operations in order, atomically. */
  bulkWrite(ops: readonly WriteOp[]): Promise<void>;
  dropCollection(name: string): Promise<void>;
  /** Renames `from` to `to`, replacing `to` if it exists (the blue/green switch of a rebuild). */
  renameCollection(from: string, to: string): Promise<void>;

  getCheckpoint(projection: string): Promise<Checkpoint | null>;
  /**
   * Applies `ops` and moves the projection's checkpoint from `expected` to `next` in one
   * transaction. If the stored checkpoint is not `expected` (another runner got there first),
   * nothing is written and CheckpointConflictError is thrown.
   */
  commitBatch(projection: string, ops: readonly WriteOp[], expected: Checkpoint | null, next: Checkpoint): Promise<void>;
  deleteCheckpoint(projection: string): Promise<void>;
  /**
   * The switch of a blue/green rebuild: renames each `from` over its `to` (replacing it), sets
   * `projection`'s checkpoint and deletes the checkpoint `retired`. SQLite does it in one
   * transaction. MongoDB cannot rename inside a transaction: it renames first and moves the
   * checkpoints last; after a crash in between, run the rebuild again.
   */
  swapIn(renames: readonly (readonly [from: string, to: string])[], projection: string, checkpoint: Checkpoint, retired: string): Promise<void>;
  close(): Promise<void>;
  /**
   * Adds `by` to the number `field` (a top-level field) of document `id` and returns the document
   * after the change; a missing document is created from `init` with `field` set to `by`. Atomic
   * against concurrent callers in every process sharing the store, so counts shared between
   * processes (the auth-failure throttle) lose no increments.
   */
  increment(collection: string, id: string, field: string, by: number, init?: Readonly<Record<string, unknown>>): Promise<Doc>;
}

/**
 * A named, time-limited claim kept in the read store: one runner per projection across every
 * process sharing the store holds it and renews it while it runs; a standby takes it over once it
 * lapses. Times are the store's own clock (MongoDB: the server's), so processes on different
 * machines agree on when a lease lapses. A lease decides who does the work; correctness still
 * rests on the checkpoint fence of commitBatch.
 */
export interface Lease {
  readonly name: string;
  readonly owner: string;
  /** Milliseconds left before it lapses, by the store's clock. */
  readonly remainingMs: number;
}

/** Lease operations of the ReadStore port (see Lease). */
export interface LeaseStore {
  /** Takes lease `name` for `ttlMs` if it is free, lapsed or already `owner`'s; false while another owner holds it. */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends `owner`'s lease by `ttlMs` from now; false once it is not `owner`'s (released, or taken over after it lapsed). */
  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it (a clean stop: a standby takes over at once). */
  releaseLease(name: string, owner: string): Promise<void>;
  /** The holder of `name`, or null when it is free or has lapsed. */
  getLease(name: string): Promise<Lease | null>;
}

export class CheckpointConflictError extends Error {
  override readonly name = 'CheckpointConflictError';
  constructor(readonly projection: string, readonly expected: Checkpoint | null, readonly actual: Checkpoint | null) {
    super(`Projection ${projection}: checkpoint expected ${expected?.position ?? 'none'}, found ${actual?.position ?? 'none'}`);
  }
}

export class UnknownFieldError extends Error {
  override readonly name = 'UnknownFieldError';
  constructor(readonly collection: string, readonly field: string) {
    super(`Collection ${collection} has no index on ${field}`);
  }
}

export const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
export const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
