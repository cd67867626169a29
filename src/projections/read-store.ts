/**
 * The ReadStore port: named collections of JSON documents (read models) plus per-projection
 * checkpoints kept beside them. Engines: embedded SQLite, MongoDB.
 */

/**
 * A document: JSON values, except that a top-level field may hold bytes (a Uint8Array), which the
 * engine keeps in its binary type (a BLOB beside the JSON on SQLite, BSON binary data on MongoDB)
 * rather than as text (SQLite's JSON names the field, as null), and gives back as a Buffer. Bytes
 * deeper in a document are not supported; a bytes field cannot be indexed.
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
  /**
   * Indexes on several fields (each declared in `indexes`), for a query that tests the first ones
   * for equality and sorts by the next: with one index per field an engine picks one of them and
   * scans or sorts what it matches (a parent's links by attribute matched half the links table).
   */
  readonly compoundIndexes?: readonly (readonly string[])[];
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

/** A document as JSON text, with its id. */
export type DocText = readonly [id: string, json: string];
/** Whether a document is given as text (a document itself is never an array). */
export const isDocText = (doc: Doc | DocText): doc is DocText => Array.isArray(doc);

export type WriteOp =
  | {
      readonly kind: 'put';
      readonly collection: string;
      readonly doc: Doc;
      /**
       * `doc` as JSON.stringify writes it, when the caller has it already: a store that stores JSON
       * need not encode it again. Never given for a document with bytes fields.
       */
      readonly json?: string;
    }
  | { readonly kind: 'delete'; readonly collection: string; readonly id: string };

export interface Checkpoint {
  readonly position: number;
  /**
   * Changes each time a rebuild is switched in; getCheckpoint leaves it out while it is 0. The
   * position alone cannot fence a runner whose position equals the rebuilt one: a runner that
   * passes `expected` with the generation it read (`?? 0`) is fenced by every switch since.
   */
  readonly generation?: number;
}

export interface ReadStore extends LeaseStore {
  /** Creates the collection (and its indexes) if missing; idempotent. */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  listCollections(): Promise<string[]>;
  get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null>;
  getMany<T extends Doc = Doc>(collection: string, ids: readonly string[]): Promise<Map<string, T>>;
  find<T extends Doc = Doc>(collection: string, query?: FindQuery): Promise<T[]>;
  /**
   * What `find` answers, each document as its JSON text (as JSON.stringify writes it) beside its
   * id: for copying documents on without parsing and encoding each again (a snapshot of a fold's
   * state spilled to the store). A store that keeps documents as JSON hands its text over as it is.
   */
  findJson(collection: string, query?: FindQuery): Promise<DocText[]>;
  count(collection: string, query?: Pick<FindQuery, 'where'>): Promise<number>;
  upsert(collection: string, doc: Doc): Promise<void>;
  delete(collection: string, id: string): Promise<void>;
  /**
   * Applies the operations in order, atomically. At most `maxBatch` of them: past it nothing is
   * written and BatchTooLargeError is thrown.
   */
  bulkWrite(ops: readonly WriteOp[]): Promise<void>;
  dropCollection(name: string): Promise<void>;
  /**
   * The most one transaction (a commitBatch or a bulkWrite) may carry. MongoDB aborts transactions
   * older than 60 s (`transactionLifetimeLimitSeconds`) and under cache pressure, so a window too
   * big would fail and be retried forever: its adapter refuses it up front instead. Writes that must
   * stay atomic (a runner's window and its checkpoint) are split by the caller to fit.
   */
  readonly maxBatch: BatchLimit;
  /**
   * False when certainly no other connection (another process) has committed since the last call:
   * a process following the checkpoints others store skips reading them then. Left out by stores
   * that cannot tell cheaply (the caller then reads them every time).
   */
  othersCommitted?(): boolean;

  /**
   * The stored checkpoint, with its generation when not 0. While a switch of this checkpoint is
   * under way (see beginSwitch) it waits for the switch to finish, and finishes one whose process
   * died, so a caller never resumes from a checkpoint that is about to be replaced.
   */
  getCheckpoint(projection: string): Promise<Checkpoint | null>;
  /**
   * Applies `ops` and moves the projection's checkpoint from `expected` to `next` in one
   * transaction. If the stored checkpoint is not `expected` (another runner got there first, or a
   * switch is under way or has happened since), nothing is written and CheckpointConflictError is
   * thrown. The generation is compared when `expected` carries one; `next` keeps the stored
   * generation. More than `maxBatch` ops: BatchTooLargeError, nothing written.
   */
  commitBatch(projection: string, ops: readonly WriteOp[], expected: Checkpoint | null, next: Checkpoint): Promise<void>;
  deleteCheckpoint(projection: string): Promise<void>;
  /**
   * This store as the holder of `leases` (all `owner`'s) writes to it: every write through the view
   * first checks that no other owner has taken one of them, and throws LeaseLostError, changing
   * nothing, if one has. A lease that lapsed and that nobody took counts as held: whoever takes it
   * over changes its owner first, and from then on the old holder's writes are refused. The check
   * shares the write's transaction where the engine has one (every write on SQLite; on MongoDB the
   * transactional ones, which write the lease document so that a concurrent take-over conflicts;
   * its other writes check just before). Reads are not fenced.
   */
  fenced(leases: readonly string[], owner: string): ReadStore;
  /** The switch of a blue/green rebuild in one call: beginSwitch, then finishSwitch. */
  swapIn(renames: readonly (readonly [from: string, to: string])[], projection: string, checkpoint: Checkpoint, retired: string): Promise<void>;
  /**
   * First half of a switch: marks the checkpoints `plan.projection` and `plan.retired` as switching,
   * in one transaction. From then on commitBatch on either throws CheckpointConflictError, so no
   * batch folded by a live runner before the switch can land in the renamed collections (MongoDB
   * cannot rename inside a transaction, so the renames cannot share one with the checkpoints).
   * Refuses, marking nothing, when a `from` collection does not exist.
   */
  beginSwitch(plan: SwitchPlan): Promise<void>;
  /**
   * Second half: renames each `from` over its `to` (replacing it, indexes kept), then in one
   * transaction sets the checkpoint to the plan's with a new generation, deletes `retired` and
   * clears the mark. A switch begun by a live process (another store) is waited for; one whose
   * process died (its lease, `switchLeaseMs` of the store that began it, has lapsed) is taken over
   * and finished. No switch marked: nothing to do.
   */
  finishSwitch(projection: string): Promise<void>;
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

/** Does the stored checkpoint match the expected one? Positions, and generations when `expected` names one. */
export const sameCheckpoint = (expected: Checkpoint | null, actual: Checkpoint | null): boolean =>
  (expected?.position ?? null) === (actual?.position ?? null) && (expected?.generation === undefined || expected.generation === (actual?.generation ?? 0));

/** What a view made by ReadStore.fenced checks before each write. */
export interface LeaseFence {
  readonly leases: readonly string[];
  readonly owner: string;
}

/** A write through a fenced view (ReadStore.fenced) after another owner took one of its leases. */
export class LeaseLostError extends Error {
  constructor(
    readonly lease: string,
    readonly owner: string,
  ) {
    super(`Lease ${lease} is no longer held by ${owner}: the write was refused`);
  }
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

/** A blue/green switch: rebuilt collections renamed over the live ones, and the checkpoints moved. */
export interface SwitchPlan {
  readonly renames: readonly (readonly [from: string, to: string])[];
  /** The live projection, whose checkpoint becomes `checkpoint` (with a new generation). */
  readonly projection: string;
  readonly checkpoint: Checkpoint;
  /** The rebuild's own checkpoint, deleted by the switch. */
  readonly retired: string;
}

/** Bounds of one transaction: operations, and bytes of documents as writeOpBytes counts them. */
export interface BatchLimit {
  readonly ops: number;
  readonly bytes: number;
}

/** No bound: the embedded store's default (SQLite has no transaction time limit). */
export const UNBOUNDED: BatchLimit = { ops: Number.POSITIVE_INFINITY, bytes: Number.POSITIVE_INFINITY };

export class BatchTooLargeError extends Error {
  override readonly name = 'BatchTooLargeError';
  constructor(readonly ops: number, readonly bytes: number, readonly limit: BatchLimit) {
    super(`A batch of ${ops} operations (${bytes} bytes so far) is past the store's limit of ${limit.ops} operations or ${limit.bytes} bytes per transaction; split it`);
  }
}

/** A document's bytes fields (see Doc), in order; none: null. */
export type BytesFields = readonly (readonly [field: string, bytes: Uint8Array])[] | null;

/**
 * A put's document as JSON with its bytes fields as null, and those fields. Named, not left out: a
 * reader of the JSON alone (an earlier version, a SQL client) still sees that the field is there.
 */
export const splitDoc = (op: Extract<WriteOp, { kind: 'put' }>): { json: string; bytes: BytesFields } => {
  if (op.json !== undefined) return { json: op.json, bytes: null };
  let bytes: [string, Uint8Array][] | null = null;
  for (const field in op.doc) {
    const value = op.doc[field];
    if (value instanceof Uint8Array) (bytes ??= []).push([field, value]);
  }
  if (!bytes) return { json: JSON.stringify(op.doc), bytes };
  const rest: Record<string, unknown> = { ...op.doc };
  for (const [field] of bytes) rest[field] = null;
  return { json: JSON.stringify(rest), bytes };
};

/**
 * Bytes a write op counts for against BatchLimit.bytes: the UTF-8 JSON of a put's document and the
 * length of its bytes fields (engine-independent, so a caller can size its windows the same way on
 * every engine); 0 for a delete.
 */
export const writeOpBytes = (op: WriteOp): number => {
  if (op.kind === 'delete') return 0;
  const { json, bytes } = splitDoc(op);
  return Buffer.byteLength(json) + (bytes?.reduce((n, [, b]) => n + b.byteLength, 0) ?? 0);
};

/** Throws BatchTooLargeError when `ops` is past `limit`; `bytesOf` measures one op (default writeOpBytes). */
export const checkBatch = (ops: readonly WriteOp[], limit: BatchLimit, bytesOf: (op: WriteOp) => number = writeOpBytes): void => {
  if (ops.length > limit.ops) throw new BatchTooLargeError(ops.length, 0, limit);
  if (limit.bytes === Number.POSITIVE_INFINITY) return;
  let bytes = 0;
  for (const op of ops) {
    bytes += bytesOf(op);
    if (bytes > limit.bytes) throw new BatchTooLargeError(ops.length, bytes, limit);
  }
};

export const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
export const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
