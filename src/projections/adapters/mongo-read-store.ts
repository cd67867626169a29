/**
 * ReadStore on MongoDB (official driver). Documents are stored with `_id` = our `id`.
 *
 * Requires a replica set (a single-node replica set is fine, e.g. `mongod --replSet rs0` plus
 * `rs.initiate()`): `bulkWrite` and `commitBatch` run in multi-document transactions, which a
 * standalone mongod rejects. Those are bounded by `maxBatch` (default 10,000 operations, 16 MiB):
 * the server aborts transactions older than 60 s, and big ones under cache pressure.
 */
import {
  Binary,
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type ClientSession,
  type Collection,
  type Db,
  type TransactionOptions,
  type UpdateFilter,
} from 'mongodb';
import { connectMongo } from '../../drivers/mongodb.ts';
import { MongoLeases } from './mongo-leases.ts';
import { mongoField, queryFields, toFilter, toSort } from './mongo-query.ts';
import { MongoSwitches, toCheckpoint, type CollectionMeta, type StoredCheckpoint } from './mongo-switch.ts';
import {
  COLLECTION_NAME,
  CheckpointConflictError,
  LeaseLostError,
  type LeaseFence,
  UnknownFieldError,
  checkBatch,
  sameCheckpoint,
  type BatchLimit,
  type Checkpoint,
  type CollectionSpec,
  type Doc,
  type DocText,
  type FindQuery,
  type Lease,
  type ReadStore,
  type SwitchPlan,
  type WriteOp,
} from '../read-store.ts';

type Stored = { _id: string } & Record<string, unknown>;

export interface MongoReadStoreOptions {
  /** Bound of one transaction; default MONGO_MAX_BATCH. */
  readonly maxBatch?: BatchLimit;
  /** How long a switch begun by this store may stay unfinished before another store takes it over. Default 30 s. */
  readonly switchLeaseMs?: number;
}

/**
 * Well inside the 60 s a transaction may live, even on a loaded server, and small beside the
 * WiredTiger cache; the server itself accepts transactions past 16 MB since 4.2.
 */
export const MONGO_MAX_BATCH: BatchLimit = { ops: 10_000, bytes: 16 * 1024 * 1024 };

const META = '_collections';
const CHECKPOINTS = '_checkpoints';
const TXN: TransactionOptions = { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' } };
const ILLEGAL_OPERATION = 20;
const NAMESPACE_EXISTS = 48;
const DUPLICATE_KEY = 11000;

function checkName(name: string): string {
  if (!COLLECTION_NAME.test(name)) throw new Error(`Invalid collection name: ${JSON.stringify(name)}`);
  return name;
}

function checkId(id: unknown): string {
  if (typeof id !== 'string') throw new Error(`Document id must be a string, got ${typeof id}`);
  return id;
}

function toStored(doc: Doc): Stored {
  const { id, ...fields } = doc;
  if ('_id' in fields) throw new Error(`Document ${String(id)}: the field _id is reserved`);
  return { ...fields, _id: checkId(id) };
}

/** Bytes fields (see Doc) go in as they are (the driver stores a Uint8Array as BSON binary data) and come back as Binary: made Buffers again. */
function fromStored<T extends Doc>(stored: Stored): T {
  const { _id, ...fields } = stored;
  for (const field in fields) {
    const value = fields[field];
    if (value instanceof Binary) {
      const bytes = value.value();
      fields[field] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
  }
  return { id: _id, ...fields } as unknown as T;
}

function hasCode(err: unknown, code: number): err is MongoServerError {
  return err instanceof MongoServerError && Number(err.code) === code;
}

export class MongoReadStore implements ReadStore {
  private readonly meta: Collection<CollectionMeta>;
  private readonly checkpoints: Collection<StoredCheckpoint>;
  /** Declared fields per collection; only ever trusted positively, so another process's changes are re-read. */
  private readonly declared = new Map<string, ReadonlySet<string>>();
  readonly maxBatch: BatchLimit;
  private readonly switches: MongoSwitches;
  /** Set on a view made by `fenced`. */
  private fence: LeaseFence | undefined;

  constructor(
    private readonly db: Db,
    options: MongoReadStoreOptions = {},
    /** Closed by close() when the store owns its client (otherwise whoever opened it closes it). */
    private readonly ownedClient?: MongoClient,
  ) {
    this.meta = db.collection<CollectionMeta>(META);
    this.checkpoints = db.collection<StoredCheckpoint>(CHECKPOINTS);
    this.maxBatch = options.maxBatch ?? MONGO_MAX_BATCH;
    this.switches = new MongoSwitches({
      db,
      checkpoints: this.checkpoints,
      meta: this.meta,
      transaction: (fn) => this.transaction(fn),
      forget: (name) => this.declared.delete(name),
      leaseMs: options.switchLeaseMs ?? 30_000,
    });
  }

  private coll(name: string): Collection<Stored> {
    return this.db.collection<Stored>(checkName(name));
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    await this.checkFence();
    const name = checkName(spec.name);
    const indexes = [...new Set(spec.indexes ?? [])];
    const keys = indexes.map(mongoField).filter((key) => key !== '_id');
    try {
      await this.db.createCollection(name);
    } catch (err) {
      if (!hasCode(err, NAMESPACE_EXISTS)) throw err;
    }
    // Compound keys in the order given: equality fields first, then the sort field (MongoDB's ESR rule).
    const compound = (spec.compoundIndexes ?? []).map((fields) => Object.fromEntries(fields.map((f) => [mongoField(f), 1] as const)));
    const all = [...keys.map((key) => ({ key: { [key]: 1 } })), ...compound.map((key) => ({ key }))];
    if (all.length > 0) await this.coll(name).createIndexes(all);
    await this.meta.updateOne({ _id: name }, { $addToSet: { indexes: { $each: indexes } } }, { upsert: true });
    this.declared.delete(name);
  }

  async listCollections(): Promise<string[]> {
    const infos = await this.db.listCollections({ type: 'collection' }, { nameOnly: true }).toArray();
    // COLLECTION_NAME excludes our `_`-prefixed metadata and Mongo's `system.*` collections.
    return infos.map((info) => info.name).filter((name) => COLLECTION_NAME.test(name)).sort();
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const stored = await this.coll(collection).findOne({ _id: checkId(id) });
    return stored ? fromStored<T>(stored) : null;
  }

  async getMany<T extends Doc = Doc>(collection: string, ids: readonly string[]): Promise<Map<string, T>> {
    const result = new Map<string, T>();
    if (ids.length === 0) return result;
    const found = await this.coll(collection).find({ _id: { $in: ids.map(checkId) } }).toArray();
    const byId = new Map(found.map((stored) => [stored._id, stored]));
    for (const id of ids) {
      const stored = byId.get(id);
      if (stored) result.set(id, fromStored<T>(stored));
    }
    return result;
  }

  async find<T extends Doc = Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    const coll = this.coll(collection);
    const { limit } = query;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0)) throw new Error(`Invalid limit: ${limit}`);
    await this.assertDeclared(collection, queryFields(query));
    // Mongo reads limit 0 as "no limit".
    if (limit === 0) return [];
    let cursor = coll.find(toFilter(query.where)).sort(toSort(query.sort));
    if (limit !== undefined) cursor = cursor.limit(limit);
    return (await cursor.toArray()).map((stored) => fromStored<T>(stored));
  }

  async findJson(collection: string, query: FindQuery = {}): Promise<DocText[]> {
    // Documents come from the server as BSON, never as JSON text: encoded here.
    return (await this.find(collection, query)).map((doc): DocText => [doc.id, JSON.stringify(doc)]);
  }

  async count(collection: string, query: Pick<FindQuery, 'where'> = {}): Promise<number> {
    const coll = this.coll(collection);
    await this.assertDeclared(collection, queryFields(query));
    return coll.countDocuments(toFilter(query.where));
  }

  async upsert(collection: string, doc: Doc): Promise<void> {
    await this.checkFence();
    const { _id, ...fields } = toStored(doc);
    await this.coll(collection).replaceOne({ _id }, fields, { upsert: true });
  }

  async delete(collection: string, id: string): Promise<void> {
    await this.checkFence();
    await this.coll(collection).deleteOne({ _id: checkId(id) });
  }

  async bulkWrite(ops: readonly WriteOp[]): Promise<void> {
    checkBatch(ops, this.maxBatch);
    const batches = toBatches(ops);
    if (batches.size === 0) return;
    await this.transaction((session) => this.applyBatches(batches, session));
  }

  async dropCollection(name: string): Promise<void> {
    await this.checkFence();
    await this.db.dropCollection(checkName(name));
    await this.meta.deleteOne({ _id: name });
    this.declared.delete(name);
  }

  async swapIn(renames: readonly (readonly [string, string])[], projection: string, checkpoint: Checkpoint, retired: string): Promise<void> {
    await this.beginSwitch({ renames, projection, checkpoint, retired });
    await this.finishSwitch(projection);
  }

  async beginSwitch(plan: SwitchPlan): Promise<void> {
    await this.checkFence();
    return this.switches.begin(plan);
  }

  async finishSwitch(projection: string): Promise<void> {
    await this.checkFence();
    return this.switches.finish(projection);
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    for (;;) {
      const stored = await this.checkpoints.findOne({ _id: projection });
      if (!stored?.switching) return toCheckpoint(stored);
      await this.switches.finish(stored.switching.of);
    }
  }

  async commitBatch(projection: string, ops: readonly WriteOp[], expected: Checkpoint | null, next: Checkpoint): Promise<void> {
    checkBatch(ops, this.maxBatch);
    const batches = toBatches(ops);
    try {
      await this.transaction(async (session) => {
        const stored = await this.checkpoints.findOne({ _id: projection }, { session });
        const actual = toCheckpoint(stored);
        // A switch under way conflicts too: its mark was written in a transaction, so a commit
        // that read the checkpoint before it meets a write conflict here and is retried.
        if (stored?.switching || !sameCheckpoint(expected, actual)) throw new CheckpointConflictError(projection, expected, actual);
        await this.applyBatches(batches, session);
        // $set keeps the generation.
        await this.checkpoints.updateOne({ _id: projection }, { $set: { position: next.position } }, { upsert: true, session });
      });
    } catch (err) {
      // Two runners creating the first checkpoint may race on its insert; the loser sees a duplicate key.
      if (hasCode(err, DUPLICATE_KEY)) {
        const actual = await this.getCheckpoint(projection);
        if (!sameCheckpoint(expected, actual)) throw new CheckpointConflictError(projection, expected, actual);
      }
      throw err;
    }
  }

  async deleteCheckpoint(projection: string): Promise<void> {
    await this.checkFence();
    await this.checkpoints.deleteOne({ _id: projection });
  }

  async close(): Promise<void> {
    await this.ownedClient?.close();
  }

  async increment(collection: string, id: string, field: string, by: number, init: Readonly<Record<string, unknown>> = {}): Promise<Doc> {
    await this.checkFence();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field) || field === 'id') throw new Error(`Invalid field to increment: ${field}`);
    const { _id, ...insertOnly } = toStored({ ...init, id } as Doc);
    delete insertOnly[field];
    // Cast: the driver's typed $inc accepts no field of `unknown` type, which every field of Stored is.
    const update = { $inc: { [field]: by }, ...(Object.keys(insertOnly).length ? { $setOnInsert: insertOnly } : {}) } as unknown as UpdateFilter<Stored>;
    const run = () => this.coll(collection).findOneAndUpdate({ _id }, update, { upsert: true, returnDocument: 'after' });
    let stored: Stored | null;
    try {
      stored = await run();
    } catch (err) {
      // Two first increments may race on the insert; the server retries most such upserts itself
      // (an equality match on _id), and otherwise the document now exists, so once more updates it.
      if (!hasCode(err, DUPLICATE_KEY)) throw err;
      stored = await run();
    }
    if (!stored) throw new Error(`increment of ${collection}/${id} returned no document`);
    return fromStored(stored);
  }

  private async assertDeclared(collection: string, fields: readonly string[]): Promise<void> {
    const wanted = fields.filter((field) => mongoField(field) !== '_id');
    if (wanted.length === 0) return;
    let known = this.declared.get(collection);
    if (!known || !wanted.every((field) => known?.has(field))) {
      const entry = await this.meta.findOne({ _id: collection });
      known = new Set(entry?.indexes ?? []);
      this.declared.set(collection, known);
    }
    const missing = wanted.find((field) => !known?.has(field));
    if (missing !== undefined) throw new UnknownFieldError(collection, missing);
  }

  /** Sequential on purpose: the driver does not support concurrent operations inside a transaction. */
  private async applyBatches(batches: Batches, session: ClientSession): Promise<void> {
    for (const [name, ops] of batches) await this.coll(name).bulkWrite(ops, { ordered: true, session });
  }

  private async transaction(fn: (session: ClientSession) => Promise<void>): Promise<void> {
    const session = this.db.client.startSession();
    const fence = this.fence;
    const fenced = fence
      ? async (s: ClientSession) => {
          for (const lease of fence.leases) if (!(await this.leases.holdIn(lease, fence.owner, s))) throw new LeaseLostError(lease, fence.owner);
          await fn(s);
        }
      : fn;
    try {
      await session.withTransaction(fenced, TXN);
    } catch (err) {
      if (hasCode(err, ILLEGAL_OPERATION) && /replica set|transaction numbers/i.test(err.message)) {
        throw new Error(`MongoDB must run as a replica set (a single-node one is fine) for read-store transactions: ${err.message}`, { cause: err });
      }
      throw err;
    } finally {
      await session.endSession();
    }
  }

  private leaseDocs?: MongoLeases;
  private get leases(): MongoLeases {
    return (this.leaseDocs ??= new MongoLeases(this.db));
  }

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leases.acquire(name, owner, ttlMs);
  }

  renewLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leases.renew(name, owner, ttlMs);
  }

  releaseLease(name: string, owner: string): Promise<void> {
    return this.leases.release(name, owner);
  }

  getLease(name: string): Promise<Lease | null> {
    return this.leases.get(name);
  }

  fenced(leases: readonly string[], owner: string): ReadStore {
    // The same client and state; only the fence differs.
    const view = Object.create(this) as MongoReadStore;
    view.fence = { leases, owner };
    return view;
  }

  /** For the writes outside a transaction: checked just before, so a take-over between the two is not seen. */
  private async checkFence(): Promise<void> {
    const fence = this.fence;
    if (!fence) return;
    for (const lease of fence.leases) if ((await this.leases.ownerOf(lease)) !== fence.owner) throw new LeaseLostError(lease, fence.owner);
  }
}

type Batches = Map<string, AnyBulkWriteOperation<Stored>[]>;

/**
 * Groups ops per collection, keeping their relative order inside each collection. Collections are
 * independent and the whole batch commits atomically, so the order across collections is unobservable.
 */
function toBatches(ops: readonly WriteOp[]): Batches {
  const batches: Batches = new Map();
  for (const op of ops) {
    const name = checkName(op.collection);
    let batch = batches.get(name);
    if (!batch) batches.set(name, (batch = []));
    if (op.kind === 'put') {
      const { _id, ...replacement } = toStored(op.doc);
      batch.push({ replaceOne: { filter: { _id }, replacement, upsert: true } });
    } else if (op.kind === 'delete') {
      batch.push({ deleteOne: { filter: { _id: checkId(op.id) } } });
    } else {
      throw new Error(`Unknown write op kind: ${JSON.stringify((op as { kind: unknown }).kind)}`);
    }
  }
  return batches;
}

/**
 * Connects eagerly, so an unreachable server or a bad URI fails at start-up. The store owns this
 * client; the service shares one client between the read store and GridFS instead (app/engines.ts).
 */
export async function openMongoReadStore(uri: string, options: MongoReadStoreOptions & { dbName?: string } = {}): Promise<MongoReadStore> {
  const { client, db } = await connectMongo(uri, options.dbName);
  return new MongoReadStore(db, options, client);
}
