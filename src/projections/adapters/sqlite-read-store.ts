import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import {
  BatchTooLargeError,
  COLLECTION_NAME,
  CheckpointConflictError,
  LeaseLostError,
  type LeaseFence,
  UNBOUNDED,
  sameCheckpoint,
  type BatchLimit,
  FIELD_PATH,
  UnknownFieldError,
  type Checkpoint,
  type CollectionSpec,
  type Doc,
  type DocText,
  type FieldCondition,
  type FindQuery,
  type Lease,
  type ReadStore,
  type SwitchPlan,
  type WriteOp,
  splitDoc,
} from '../read-store.ts';
import { commitWatch, openSqliteFile, passiveCheckpoint, type CheckpointResult } from '../../drivers/sqlite.ts';
import { SqliteCheckpointThread } from '../../drivers/sqlite-checkpoint-thread.ts';
import { migrateCheckpoints, parseMark, SqliteSwitchMarks } from './sqlite-switch.ts';
import { SqliteLeases } from './sqlite-leases.ts';
import { packBytes, unpackDoc } from './sqlite-bytes.ts';
import { column, columnName, fieldValue, storedFields, type StoredField } from './sqlite-fields.ts';
/**
 * A compound index is kept in `_collections` beside the declared fields as its fields joined by
 * `+` (never part of a field path, so never taken for a field a query may name).
 */
const COMPOUND = '+';
const sqlValue = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

const checkName = (name: string) => {
  if (!COLLECTION_NAME.test(name)) throw new Error(`Invalid collection name: ${name}`);
};

export interface SqliteReadStoreOptions {
  /** Bound of one transaction; default none (SQLite has no transaction time limit). */
  readonly maxBatch?: BatchLimit;
  /** How long a switch begun by this store may stay unfinished before another store takes it over. Default 30 s. */
  readonly switchLeaseMs?: number;
  /** SQLite's page cache of this connection; default 256 MiB. */
  readonly pageCacheBytes?: number;
  /** How long a write waits for another connection's write transaction; default 5 s. */
  readonly busyTimeoutMs?: number;
  /**
   * Copy the log into the file from a thread of its own, every this many ms, rather than in the
   * commits of this connection (see SqliteCheckpointThread): for a connection serving requests.
   * Default: in the commits, as SQLite does.
   */
  readonly checkpointEveryMs?: number;
}

/** SQLite's own default: a commit that leaves the log at this many pages or more checkpoints it. */
const AUTO_CHECKPOINT_PAGES = 1000;

/** How often a store waiting for another store's switch looks again. */
const SWITCH_POLL_MS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits between two attempts at the write lock, as SQLite's own busy handler spaces them; the last repeats. */
const LOCK_RETRY_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
const isBusy = (e: unknown) => e instanceof Database.SqliteError && e.code.startsWith('SQLITE_BUSY');

/**
 * Embedded read store: one table per collection holding the JSON document, with an indexed column
 * per declared field, written from the document (sqlite-fields.ts). Checkpoints live in the same
 * file so a batch of read-model changes and its checkpoint commit in one transaction.
 */
export class SqliteReadStore implements ReadStore {
  private readonly indexes = new Map<string, Set<string>>();
  /** How each collection is written (its columns), made on first write. */
  private readonly writers = new Map<string, Writer>();
  /**
   * The schema cookie `indexes` and `writers` were read under: another connection that declares a
   * field, or switches a rebuilt table in, changes it, and what was read of the tables is read again.
   */
  private schemaSeen = -1;
  readonly othersCommitted: () => boolean;
  private readonly checkpoints: SqliteCheckpointThread | undefined;
  private readonly statements = new Map<string, Database.Statement>();
  readonly maxBatch: BatchLimit;
  private readonly switchLeaseMs: number;
  private readonly switches: SqliteSwitchMarks;
  /** Owner of the switches this store begins. */
  private readonly owner = randomUUID();
  /** How long a write waits for the write lock: the connection's busy timeout. */
  private readonly lockWaitMs: number;
  /** Settles once the writes waiting for the lock have run; none while no write waits. */
  private waiting: Promise<void> | undefined;
  /** Set on a view made by `fenced`: checked at the start of each of its write transactions. */
  private fence: LeaseFence | undefined;
  /**
   * The write transaction this connection has open for the writes asked in the current turn, and
   * its commit (a microtask away): shared by the fenced views, which write on the same connection.
   */
  private readonly turn: { commit?: Promise<void> } = {};

  constructor(private readonly db: Database.Database, options: SqliteReadStoreOptions = {}) {
    this.lockWaitMs = db.pragma('busy_timeout', { simple: true }) as number;
    db.exec(`
      CREATE TABLE IF NOT EXISTS _collections (name TEXT PRIMARY KEY, indexes TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS _checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    `);
    migrateCheckpoints(db);
    this.othersCommitted = commitWatch(db);
    this.switches = new SqliteSwitchMarks(db);
    this.maxBatch = options.maxBatch ?? UNBOUNDED;
    this.switchLeaseMs = options.switchLeaseMs ?? 30_000;
    if (options.checkpointEveryMs !== undefined && !db.memory) {
      db.pragma('wal_autocheckpoint = 0');
      // Without its thread, the log would grow without end: this connection checkpoints again.
      this.checkpoints = new SqliteCheckpointThread(db.name, options.checkpointEveryMs, () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
      });
    }
  }

  /** Copies the log into the file now (on the checkpoint thread where there is one), without waiting for any lock. */
  async checkpointNow(): Promise<CheckpointResult> {
    return this.checkpoints ? this.checkpoints.now() : passiveCheckpoint(this.db);
  }

  /**
   * Runs `fn` in a write transaction once this connection holds the write lock. While another
   * connection writes (another process's rebuild commits or switches in for seconds), it waits on
   * a timer, not in SQLite's busy handler, which sleeps on this thread: a lease renewal or a commit
   * waiting so froze every request of the process. Gives up as the busy handler would, after the
   * busy timeout, with SQLite's own error. This store's writes keep the order they were asked in: one
   * asked while others wait goes after them.
   *
   * Writes asked in one turn share one transaction (see `joined`): the projections a live batch
   * changes each commit, one after the other, and each BEGIN and COMMIT cost more than the few
   * documents a push changes in each of them.
   */
  private async writing<T>(fn: () => T): Promise<T> {
    if (this.waiting === undefined && (this.turn.commit || this.tryBegin(false))) return this.joined(fn);
    const turn = (this.waiting ?? Promise.resolve()).then(() => this.lockThen(fn));
    const settled = turn.then(
      () => undefined,
      () => undefined,
    );
    this.waiting = settled;
    void settled.then(() => {
      if (this.waiting === settled) this.waiting = undefined;
    });
    return turn;
  }

  private async lockThen<T>(fn: () => T): Promise<T> {
    const started = Date.now();
    for (let attempt = 0; !this.turn.commit && !this.tryBegin(Date.now() - started >= this.lockWaitMs); attempt++) {
      await sleep(Math.min(LOCK_RETRY_MS[Math.min(attempt, LOCK_RETRY_MS.length - 1)]!, Math.max(1, this.lockWaitMs - (Date.now() - started))));
    }
    return this.joined(fn);
  }

  /**
   * `fn` in a savepoint of the write transaction this connection holds: rolled back alone if it
   * throws (the call fails at once, the others' writes stand), else answered once the transaction has
   * committed. The transaction commits in a microtask, so the writes asked before this turn's
   * microtasks have run join it, and no request of another turn (a macrotask) reads this connection
   * while it is open. A failed COMMIT rolls back and fails every write in it.
   */
  private joined<T>(fn: () => T): Promise<T> {
    const commit = (this.turn.commit ??= this.commitSoon());
    this.stmt('SAVEPOINT write').run();
    let out: T;
    try {
      // Under the write lock: a take-over (a write too) either came before, and is seen, or waits until after.
      if (this.fence) for (const lease of this.fence.leases) if (this.leases.ownerOf(lease) !== this.fence.owner) throw new LeaseLostError(lease, this.fence.owner);
      out = fn();
      this.stmt('RELEASE write').run();
    } catch (e) {
      if (this.db.inTransaction) {
        this.stmt('ROLLBACK TO write').run();
        this.stmt('RELEASE write').run();
      }
      return Promise.reject(e);
    }
    return commit.then(() => out);
  }

  private commitSoon(): Promise<void> {
    const commit = new Promise<void>((resolve, reject) =>
      queueMicrotask(() => {
        this.turn.commit = undefined;
        try {
          this.db.exec('COMMIT');
          resolve();
        } catch (e) {
          if (this.db.inTransaction) this.db.exec('ROLLBACK');
          reject(e as Error);
        }
      }),
    );
    // Every write in it may have failed on its own already: then nobody else hears of a failed COMMIT.
    commit.catch(() => undefined);
    return commit;
  }

  /** BEGIN IMMEDIATE without waiting: false if another connection holds the lock (thrown on the last attempt). */
  private tryBegin(last: boolean): boolean {
    // Compiled afresh each time: SQLite applies busy_timeout when the pragma is compiled, so running
    // a statement prepared once would leave the timeout where it was. exec compiles and runs it
    // without making a statement object (under 1 µs against about 3 for pragma()).
    this.db.exec('PRAGMA busy_timeout = 0');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      return true;
    } catch (e) {
      if (!isBusy(e) || last) throw e;
      return false;
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${this.lockWaitMs}`);
    }
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Declared indexes of a collection; re-read on a miss because another process may have rebuilt it. */
  private declared(name: string): Set<string> {
    checkName(name);
    const cached = this.indexes.get(name);
    if (cached) return cached;
    const row = this.db.prepare<[string], { indexes: string }>('SELECT indexes FROM _collections WHERE name = ?').get(name);
    if (!row) throw new Error(`Unknown collection: ${name}`);
    const set = new Set<string>(JSON.parse(row.indexes));
    this.indexes.set(name, set);
    return set;
  }

  async ensureCollection({ name, indexes = [], compoundIndexes = [] }: CollectionSpec): Promise<void> {
    checkName(name);
    for (const f of indexes) if (!FIELD_PATH.test(f)) throw new Error(`Invalid field path: ${f}`);
    for (const fields of compoundIndexes) {
      const missing = fields.find((f) => f !== 'id' && !indexes.includes(f));
      if (missing !== undefined || fields.length < 2) throw new Error(`Invalid compound index on ${name}: ${fields.join(', ')} (two or more fields, each declared in indexes)`);
    }
    const compound = compoundIndexes.map((fields) => fields.join(COMPOUND));
    await this.writing(() => {
      this.db.exec(`CREATE TABLE IF NOT EXISTS "${name}" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, bin BLOB)`);
      const existing = new Set(
        (this.db.prepare(`SELECT name FROM pragma_table_xinfo(?)`).all(name) as { name: string }[]).map((r) => r.name),
      );
      const added = indexes.filter((field) => field !== 'id' && !existing.has(columnName(field)));
      for (const field of added) this.db.exec(`ALTER TABLE "${name}" ADD COLUMN ${column(field)}`);
      // What writes put there from then on (fieldValue), for the documents already in it: all in one
      // pass over the table (a rebuilt objects table of 50,000 documents took 926 ms a field at a time).
      if (added.length > 0) this.db.exec(`UPDATE "${name}" SET ${added.map((field) => `${column(field)} = json_extract(doc, '$.${field}')`).join(', ')}`);
      this.indexSync(name, [...indexes.filter((f) => f !== 'id'), ...compound]);
      const all = new Set([...this.declaredOrEmpty(name), ...indexes, ...compound]);
      this.db.prepare('INSERT OR REPLACE INTO _collections (name, indexes) VALUES (?, ?)').run(name, JSON.stringify([...all]));
      this.indexes.set(name, all);
      this.writers.delete(name);
    });
  }

  /**
   * Gives `table` an index on each of `entries` it has none on. An index keeps its name when its table
   * is renamed (a rebuilt copy switched in) and SQLite cannot rename one, so a name is looked for
   * rather than derived: the first free of `ix_<table>__<entry>` and the same with a number after it
   * (the live collection may hold the names its copy had, while the next copy is made under them).
   */
  private indexSync(table: string, entries: readonly string[]): void {
    const indexed = this.db.prepare<[string], { name: string }>('SELECT name FROM pragma_index_info(?) ORDER BY seqno');
    const covered = new Set(
      (this.db.prepare("SELECT name FROM pragma_index_list(?) WHERE origin = 'c'").all(table) as { name: string }[]).map((i) =>
        indexed.all(i.name).map((c) => c.name).join(','),
      ),
    );
    const taken = this.db.prepare<[string]>("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
    for (const entry of entries) {
      const fields = entry.split(COMPOUND);
      const columns = fields.map(columnName).join(',');
      if (covered.has(columns)) continue;
      const base = `ix_${table}__${entry.replaceAll('.', '__')}`;
      let name = base;
      for (let n = 2; taken.get(name) !== undefined; n++) name = `${base}__${n}`;
      this.db.exec(`CREATE INDEX "${name}" ON "${table}" (${fields.map(column).join(', ')})`);
      covered.add(columns);
    }
  }

  private declaredOrEmpty(name: string): Set<string> {
    try {
      return this.declared(name);
    } catch {
      return new Set();
    }
  }

  async listCollections(): Promise<string[]> {
    return (this.db.prepare('SELECT name FROM _collections ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    this.declared(collection);
    const row = this.withBytesColumn(() => this.stmt(`SELECT doc, bin FROM "${collection}" WHERE id = ?`).get(id)) as Row | undefined;
    return row ? unpackDoc<T>(row.doc, row.bin) : null;
  }

  async getMany<T extends Doc = Doc>(collection: string, ids: readonly string[]): Promise<Map<string, T>> {
    this.declared(collection);
    const stmt = this.stmt(`SELECT doc, bin FROM "${collection}" WHERE id = ?`);
    return this.withBytesColumn(() =>
      this.reading(() => {
        const out = new Map<string, T>();
        for (const id of ids) {
          const row = stmt.get(id) as Row | undefined;
          if (row) out.set(id, unpackDoc<T>(row.doc, row.bin));
        }
        return out;
      }),
    );
  }

  /**
   * `fn`'s reads in one read transaction, so at one snapshot of the file. Each statement run on
   * its own opens and ends a transaction of its own (WAL locks taken and released, the page cache
   * checked against the log afresh): 18,000 point reads took 170 ms that way, 48 ms in one.
   */
  private reading<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.stmt('BEGIN').run();
    try {
      return fn();
    } finally {
      if (this.db.inTransaction) this.stmt('COMMIT').run();
    }
  }

  private whereSql(collection: string, where: FindQuery['where'], params: unknown[]): string {
    const fields = this.declared(collection);
    const parts: string[] = [];
    for (const [field, cond] of Object.entries(where ?? {})) {
      if (field !== 'id' && !fields.has(field)) throw new UnknownFieldError(collection, field);
      parts.push(this.conditionSql(column(field), cond, params));
    }
    return parts.length ? ` WHERE ${parts.join(' AND ')}` : '';
  }

  private conditionSql(col: string, cond: FieldCondition, params: unknown[]): string {
    if (cond === null) return `${col} IS NULL`;
    if (typeof cond !== 'object') {
      params.push(sqlValue(cond));
      return `${col} = ?`;
    }
    if ('$in' in cond) {
      params.push(...cond.$in.map(sqlValue));
      return `${col} IN (${cond.$in.map(() => '?').join(',') || 'NULL'})`;
    }
    const ops = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;
    const parts = (Object.keys(ops) as (keyof typeof ops)[])
      .filter((k) => cond[k] !== undefined)
      .map((k) => {
        params.push(sqlValue(cond[k]));
        return `${col} ${ops[k]} ?`;
      });
    return parts.length ? parts.join(' AND ') : '1';
  }

  async find<T extends Doc = Doc>(collection: string, query: FindQuery = {}): Promise<T[]> {
    return this.findRows(collection, query, 'doc, bin', (r: Row) => unpackDoc<T>(r.doc, r.bin));
  }

  async findJson(collection: string, query: FindQuery = {}): Promise<DocText[]> {
    // The stored text is what JSON.stringify wrote; a document with bytes fields is made whole first.
    return this.findRows(collection, query, 'id, doc, bin', (r: Row & { id: string }): DocText => [r.id, r.bin === null ? r.doc : JSON.stringify(unpackDoc(r.doc, r.bin))]);
  }

  private findRows<R, T>(collection: string, query: FindQuery, columns: string, map: (row: R) => T): T[] {
    const params: unknown[] = [];
    let sql = `SELECT ${columns} FROM "${collection}"` + this.whereSql(collection, query.where, params);
    const fields = this.declared(collection);
    const order = (query.sort ?? []).map(([field, dir]) => {
      if (field !== 'id' && !fields.has(field)) throw new UnknownFieldError(collection, field);
      return `${column(field)} ${dir === 'desc' ? 'DESC' : 'ASC'}`;
    });
    sql += ` ORDER BY ${[...order, 'id'].join(', ')}`;
    if (query.limit !== undefined) {
      sql += ' LIMIT ?';
      params.push(query.limit);
    }
    return (this.withBytesColumn(() => this.stmt(sql).all(...params)) as R[]).map(map);
  }

  async count(collection: string, query: Pick<FindQuery, 'where'> = {}): Promise<number> {
    const params: unknown[] = [];
    const sql = `SELECT COUNT(*) AS n FROM "${collection}"` + this.whereSql(collection, query.where, params);
    return (this.stmt(sql).get(...params) as { n: number }).n;
  }

  async upsert(collection: string, doc: Doc): Promise<void> {
    await this.writing(() => this.applyOps([{ kind: 'put', collection, doc }], UNBOUNDED));
  }

  async delete(collection: string, id: string): Promise<void> {
    await this.writing(() => this.applyOps([{ kind: 'delete', collection, id }], UNBOUNDED));
  }

  async bulkWrite(ops: readonly WriteOp[]): Promise<void> {
    this.checkCount(ops);
    await this.writing(() => this.applyOps(ops, this.maxBatch));
  }

  private checkCount(ops: readonly WriteOp[]): void {
    if (ops.length > this.maxBatch.ops) throw new BatchTooLargeError(ops.length, 0, this.maxBatch);
  }

  /**
   * Runs `fn`, and once more after giving its table the `bin` column when it lacked it: tables made
   * by a previous version (before bytes fields, or by a rebuild such a process switched in) get it
   * on first use, not at open (no work at start-up, and a table switched in later is covered too).
   * Writes run again from their first op inside the same transaction: puts and deletes in order end
   * the same.
   */
  private withBytesColumn<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof Database.SqliteError) || !/(no such column: bin|has no column named bin)$/.test(e.message)) throw e;
      addBytesColumns(this.db);
      return fn();
    }
  }

  private applyOps(ops: readonly WriteOp[], limit: BatchLimit): void {
    this.withBytesColumn(() => this.applyOpsOnce(ops, limit));
  }

  /** Bytes are counted on the JSON written anyway; past the limit the throw rolls the transaction back. */
  private applyOpsOnce(ops: readonly WriteOp[], limit: BatchLimit): void {
    this.schemaCheck();
    const countBytes = limit.bytes !== Number.POSITIVE_INFINITY;
    let bytes = 0;
    // Writers are looked up once per run of one collection, not per operation: batches hold thousands.
    let w: Writer | undefined;
    let of: string | undefined;
    for (const op of ops) {
      if (op.collection !== of) {
        w = this.writer(op.collection);
        of = op.collection;
      }
      if (op.kind === 'put') {
        const { json, bytes: fields } = splitDoc(op);
        const bin = packBytes(fields);
        if (countBytes && (bytes += Buffer.byteLength(json) + (bin?.length ?? 0)) > limit.bytes) throw new BatchTooLargeError(ops.length, bytes, limit);
        w!.put(op.doc, json, bin);
      } else w!.del(op.id);
    }
  }

  /** Forgets what was read of the tables if another connection (or this one) changed the schema since. In a write transaction. */
  private schemaCheck(): void {
    const cookie = this.stmt('PRAGMA schema_version').pluck().get() as number;
    if (cookie === this.schemaSeen) return;
    this.indexes.clear();
    this.writers.clear();
    this.schemaSeen = cookie;
  }

  /**
   * How `collection` is written. A document written again over one with the same values of the
   * declared fields updates its row alone; a field that changed is set with the document, so only
   * its index is rewritten (one statement per set of changed fields, prepared once).
   */
  private writer(collection: string): Writer {
    const known = this.writers.get(collection);
    if (known) return known;
    const fields = storedFields(this.db, collection, this.declared(collection));
    const remove = this.stmt(`DELETE FROM "${collection}" WHERE id = ?`);
    const del = (id: string) => void remove.run(id);
    let w: Writer;
    if (fields.length === 0) {
      const upsert = this.stmt(`INSERT INTO "${collection}" (id, doc, bin) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, bin = excluded.bin`);
      w = { fields, put: (doc, json, bin) => void upsert.run(doc.id, json, bin), del };
    } else {
      const columns = fields.map((f) => f.column);
      const current = this.stmt(`SELECT ${columns.join(', ')} FROM "${collection}" WHERE id = ?`).raw();
      const insert = this.stmt(`INSERT INTO "${collection}" (id, doc, bin, ${columns.join(', ')}) VALUES (?, ?, ?${', ?'.repeat(columns.length)})`);
      const updates = new Map<number, Database.Statement>();
      const update = (changed: number): Database.Statement => {
        let u = updates.get(changed);
        if (!u) {
          const sets = columns.filter((_, i) => changed & (1 << i)).map((c) => `, ${c} = ?`);
          u = this.stmt(`UPDATE "${collection}" SET doc = ?, bin = ?${sets.join('')} WHERE id = ?`);
          updates.set(changed, u);
        }
        return u;
      };
      w = {
        fields,
        put: (doc, json, bin) => {
          const values = fields.map((f) => fieldValue(doc, f.field));
          const old = current.get(doc.id) as unknown[] | undefined;
          if (old === undefined) {
            insert.run(doc.id, json, bin, ...values);
            return;
          }
          let changed = 0;
          const set: unknown[] = [];
          for (let i = 0; i < values.length; i++) {
            if (old[i] === values[i]) continue;
            changed |= 1 << i;
            set.push(values[i]);
          }
          update(changed).run(json, bin, ...set, doc.id);
        },
        del,
      };
    }
    this.writers.set(collection, w);
    return w;
  }

  async dropCollection(name: string): Promise<void> {
    checkName(name);
    await this.writing(() => {
      this.db.exec(`DROP TABLE IF EXISTS "${name}"`);
      this.db.prepare('DELETE FROM _collections WHERE name = ?').run(name);
    });
    this.forget(name);
  }

  async swapIn(renames: readonly (readonly [string, string])[], projection: string, checkpoint: Checkpoint, retired: string): Promise<void> {
    // Both halves in one transaction: nobody ever sees the mark.
    await this.writing(() => {
      const token = this.beginSync({ renames, projection, checkpoint, retired });
      this.completeSync(projection, token);
    });
  }

  async beginSwitch(plan: SwitchPlan): Promise<void> {
    await this.writing(() => this.beginSync(plan));
  }

  private beginSync(plan: SwitchPlan): string {
    for (const [from, to] of plan.renames) {
      checkName(to);
      this.declared(from);
    }
    const token = randomUUID();
    this.switches.begin(plan, token, this.owner, Date.now() + this.switchLeaseMs);
    return token;
  }

  async finishSwitch(name: string): Promise<void> {
    for (;;) {
      const seen = this.switches.row(name)?.switching;
      if (!seen) return;
      const mark = parseMark(seen);
      // The retired checkpoint's mark points to the projection's, which holds the plan.
      if (mark.of !== name) {
        name = mark.of;
        continue;
      }
      if (mark.owner !== this.owner) {
        // Another store's switch: wait while its process may still finish it, take it over after.
        if (Date.now() < mark.expiresAt || !(await this.writing(() => this.switches.takeOver(name, seen, mark, this.owner, Date.now() + this.switchLeaseMs)))) {
          await sleep(SWITCH_POLL_MS);
          continue;
        }
      }
      // Looks again afterwards: a store that took this switch over meanwhile finishes it instead.
      await this.writing(() => this.completeSync(name, mark.token));
    }
  }

  /** Renames, moves the checkpoints and clears the mark, if the mark is still the switch `token`. */
  private completeSync(projection: string, token: string): void {
    const row = this.switches.row(projection);
    const mark = row?.switching ? parseMark(row.switching) : undefined;
    if (!row || mark?.token !== token || mark.owner !== this.owner) return;
    const { plan } = mark;
    if (!plan) throw new Error(`Projection ${projection}: its switch mark has no plan`);
    for (const [from, to] of plan.renames) this.renameSync(from, to);
    this.stmt('UPDATE _checkpoints SET position = ?, generation = ?, switching = NULL, updated_at = ? WHERE projection = ?').run(
      plan.checkpoint.position,
      row.generation + 1,
      Date.now(),
      projection,
    );
    this.stmt('DELETE FROM _checkpoints WHERE projection = ?').run(plan.retired);
  }

  private renameSync(from: string, to: string): void {
    const fields = this.declared(from);
    checkName(to);
    this.db.exec(`DROP TABLE IF EXISTS "${to}"`);
    // Its indexes go with it, under the names they had (see indexSync).
    this.db.exec(`ALTER TABLE "${from}" RENAME TO "${to}"`);
    this.db.prepare('DELETE FROM _collections WHERE name = ?').run(from);
    this.db.prepare('INSERT OR REPLACE INTO _collections (name, indexes) VALUES (?, ?)').run(to, JSON.stringify([...fields]));
    this.forget(from);
    this.forget(to);
  }

  private setCheckpoint(projection: string, position: number): void {
    this.stmt(
      'INSERT INTO _checkpoints (projection, position, updated_at) VALUES (?, ?, ?) ON CONFLICT (projection) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at',
    ).run(projection, position, Date.now());
  }

  private forget(name: string): void {
    this.indexes.delete(name);
    this.writers.delete(name);
    // Statements compiled against a dropped or renamed table must not be reused.
    for (const sql of this.statements.keys()) if (sql.includes(`"${name}"`)) this.statements.delete(sql);
  }

  async getCheckpoint(projection: string): Promise<Checkpoint | null> {
    for (;;) {
      const row = this.switches.row(projection);
      if (!row?.switching) return row ? toCheckpoint(row) : null;
      await this.finishSwitch(parseMark(row.switching).of);
    }
  }

  async commitBatch(projection: string, ops: readonly WriteOp[], expected: Checkpoint | null, next: Checkpoint): Promise<void> {
    this.checkCount(ops);
    await this.writing(() => {
      const row = this.switches.row(projection);
      const actual = row ? toCheckpoint(row) : null;
      if (row?.switching || !sameCheckpoint(expected, actual)) throw new CheckpointConflictError(projection, expected, actual);
      this.applyOps(ops, this.maxBatch);
      this.setCheckpoint(projection, next.position);
    });
  }

  async deleteCheckpoint(projection: string): Promise<void> {
    await this.writing(() => this.stmt('DELETE FROM _checkpoints WHERE projection = ?').run(projection));
  }

  async close(): Promise<void> {
    await this.checkpoints?.close();
    this.db.close();
  }

  async increment(collection: string, id: string, field: string, by: number, init: Readonly<Record<string, unknown>> = {}): Promise<Doc> {
    this.declared(collection);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field) || field === 'id') throw new Error(`Invalid field to increment: ${field}`);
    const doc = { ...init, id, [field]: by };
    // One statement: SQLite's write lock makes it atomic across connections and processes.
    const row = (await this.writing(() =>
      this.withBytesColumn(() => {
        this.schemaCheck();
        const { fields } = this.writer(collection);
        const sum = `coalesce(json_extract(doc, '$.${field}'), 0) + ?`;
        // The field's own column, where it is declared, counts as its member of the JSON does.
        const counted = fields.find((f) => f.field === field);
        return this.stmt(
          `INSERT INTO "${collection}" (id, doc${fields.map((f) => `, ${f.column}`).join('')}) VALUES (?, ?${', ?'.repeat(fields.length)}) ` +
            `ON CONFLICT (id) DO UPDATE SET doc = json_set(doc, '$.${field}', ${sum})${counted ? `, ${counted.column} = ${sum}` : ''} RETURNING doc, bin`,
        ).get(id, JSON.stringify(doc), ...fields.map((f) => fieldValue(doc, f.field)), by, ...(counted ? [by] : []));
      }),
    )) as Row;
    return unpackDoc(row.doc, row.bin);
  }

  private leaseTable?: SqliteLeases;
  /** Made on first use, so a store that never takes a lease never creates the table. */
  private get leases(): SqliteLeases {
    return (this.leaseTable ??= new SqliteLeases(this.db));
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.writing(() => this.leases.acquire(name, owner, ttlMs));
  }

  async renewLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.writing(() => this.leases.renew(name, owner, ttlMs));
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.writing(() => this.leases.release(name, owner));
  }

  async getLease(name: string): Promise<Lease | null> {
    return this.leases.get(name);
  }

  fenced(leases: readonly string[], owner: string): ReadStore {
    // The same connection and state; only the fence (and its own queue of waiting writes) differ.
    const view = Object.create(this) as SqliteReadStore;
    view.fence = { leases, owner };
    view.waiting = undefined;
    return view;
  }
}

/** A document's row: its JSON and its packed bytes fields (sqlite-bytes.ts). */
type Row = { doc: string; bin: Buffer | null };

/** Writes of one collection: a document (its JSON and bytes made already), a removal. */
interface Writer {
  readonly fields: readonly StoredField[];
  put(doc: Doc, json: string, bin: Buffer | null): void;
  del(id: string): void;
}

/**
 * Gives collections made before bytes fields their `bin` column (a nullable column is added
 * without rewriting the table), inside a write transaction: another process may be doing the same.
 */
const addBytesColumns = (db: Database.Database) =>
  db
    .transaction(() => {
      for (const { name } of db.prepare('SELECT name FROM _collections').all() as { name: string }[]) {
        const columns = db.prepare('SELECT name FROM pragma_table_xinfo(?)').all(name) as { name: string }[];
        if (!columns.some((c) => c.name === 'bin')) db.exec(`ALTER TABLE "${name}" ADD COLUMN bin BLOB`);
      }
    })
    .immediate();

const toCheckpoint = (row: { position: number; generation: number }): Checkpoint =>
  row.generation ? { position: row.position, generation: row.generation } : { position: row.position };

export const openSqliteReadStore = (file: string, options: SqliteReadStoreOptions = {}): SqliteReadStore => {
  // synchronous=NORMAL: a power loss may drop the read models' last commits, which are rebuilt from
  // the event log (their checkpoints fall back with them), so they need not pay a sync per commit.
  const db = openSqliteFile(file, 'NORMAL');
  // Read models are written at random (one document per object): SQLite's 2 MB default page cache
  // thrashes once they outgrow it, and catch-up and rebuilds slow down several times over.
  db.pragma(`cache_size = -${Math.max(1024, Math.round((options.pageCacheBytes ?? 256 * 2 ** 20) / 1024))}`);
  if (options.busyTimeoutMs !== undefined) db.pragma(`busy_timeout = ${Math.round(options.busyTimeoutMs)}`);
  return new SqliteReadStore(db, options);
};
