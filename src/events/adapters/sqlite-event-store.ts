import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  DuplicateEventIdError,
  StoreNotEmptyError,
  WrongExpectedRevisionError,
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
import { applySqlitePragmas, openSqliteFile } from '../../drivers/sqlite.ts';

interface EventRow {
  position: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: number;
}

export interface SqliteEventStoreOptions {
  /** Milliseconds since the epoch; injectable so tests can control recorded times. */
  readonly clock?: () => number;
  /** How often a live subscription looks for events appended by other processes. */
  readonly pollIntervalMs?: number;
}

const PAGE = 1000;

const toEvent = (row: EventRow): RecordedEvent => ({
  id: row.id,
  type: row.type,
  data: JSON.parse(row.data),
  metadata: JSON.parse(row.metadata),
  stream: row.stream,
  revision: row.revision,
  position: row.position,
  recordedAt: new Date(row.recorded_at),
});

/** The smallest string greater than every string that starts with `prefix`. */
const prefixEnd = (prefix: string): string =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

const filterSql = (filter: LogFilter, params: unknown[]): string => {
  let sql = '';
  if (filter.types !== undefined) {
    sql += ` AND +type IN (${filter.types.map(() => '?').join(',') || 'NULL'})`;
    params.push(...filter.types);
  }
  if (filter.streamPrefix) {
    sql += ' AND stream >= ? AND stream < ?';
    params.push(filter.streamPrefix, prefixEnd(filter.streamPrefix));
  }
  return sql;
};

/**
 * Embedded event store: one table, the rowid is the global position, UNIQUE(stream, revision)
 * enforces optimistic concurrency and UNIQUE(id) makes retried appends idempotent.
 */
export class SqliteEventStore implements EventStore {
  readonly densePositions = true;
  readonly atomicAppendMany = true;
  private readonly appended = new EventEmitter();
  private readonly clock: () => number;
  private readonly pollIntervalMs: number;
  private lastRecordedAt = 0;
  private readonly stmts;
  private readonly pages = new Map<string, Database.Statement<unknown[], EventRow>>();
  private readonly appendTx;

  constructor(private readonly db: Database.Database, options: SqliteEventStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.appended.setMaxListeners(0);
    // An append is acknowledged only once it is on disk: WAL with synchronous=FULL syncs the log at
    // every commit, i.e. once per group commit of appends. The log is the only source of truth; the
    // read models can be rebuilt from it. Set here so a connection opened by anyone gets it.
    applySqlitePragmas(db, 'FULL');
    db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        stream TEXT NOT NULL,
        revision INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        recorded_at INTEGER NOT NULL,
        UNIQUE (stream, revision)
      );
      CREATE INDEX IF NOT EXISTS events_recorded_at ON events (recorded_at);
      CREATE INDEX IF NOT EXISTS events_type ON events (type, position);
    `);
    this.stmts = {
      lastRevision: db.prepare<[string], { r: number | null }>('SELECT MAX(revision) AS r FROM events WHERE stream = ?'),
      insert: db.prepare(
        'INSERT INTO events (id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      byId: db.prepare<[string], EventRow>('SELECT * FROM events WHERE id = ?'),
      head: db.prepare<[], { p: number | null }>('SELECT MAX(position) AS p FROM events'),
      lastRecordedAt: db.prepare<[], { t: number | null }>('SELECT MAX(recorded_at) AS t FROM events'),
      streamForwards: db.prepare<[string, number, number], EventRow>('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?'),
      streamBackwards: db.prepare<[string, number, number], EventRow>('SELECT * FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?'),
      lastAtOrBefore: db.prepare<[number], { p: number | null }>('SELECT position AS p FROM events WHERE recorded_at <= ? ORDER BY recorded_at DESC, position DESC LIMIT 1'),
    };
    this.lastRecordedAt = this.stmts.lastRecordedAt.get()?.t ?? 0;
    this.appendTx = db.transaction((appends: readonly StreamAppend[]) => appends.map((a) => this.appendOne(a)));
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    const [result] = await this.appendMany([{ stream, events, expectedRevision }]);
    return result!;
  }

  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results = this.appendTx.immediate(appends);
    this.appended.emit('append');
    return results;
  }

  private appendOne({ stream, events, expectedRevision = 'any' }: StreamAppend): AppendResult {
    if (events.length === 0) throw new Error(`Append to ${stream} has no events`);
    const current = this.stmts.lastRevision.get(stream)?.r ?? -1;
    const conflict =
      (expectedRevision === 'no_stream' && current !== -1) ||
      (typeof expectedRevision === 'number' && expectedRevision !== current);
    if (conflict) {
      const retried = this.alreadyAppended(stream, events);
      if (retried) return retried;
      throw new WrongExpectedRevisionError(stream, expectedRevision, current);
    }
    const first = events[0]!.id;
    if (first !== undefined && this.stmts.byId.get(first)) return this.alreadyAppended(stream, events)!;
    // Monotonic recorded time: replay "up to time T" relies on log order and time order agreeing.
    const now = Math.max(this.clock(), this.lastRecordedAt);
    let revision = current;
    let position = 0;
    try {
      for (const event of events) {
        revision += 1;
        const info = this.stmts.insert.run(
          event.id ?? randomUUID(),
          stream,
          revision,
          event.type,
          JSON.stringify(event.data),
          JSON.stringify(event.metadata ?? {}),
          now,
        );
        position = Number(info.lastInsertRowid);
      }
    } catch (error) {
      // A later event's id is taken while the first one is new: ids were reused, not retried.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') this.alreadyAppended(stream, events);
      throw error;
    }
    this.lastRecordedAt = now;
    return { revision, position };
  }

  /** The result of the original append if these exact events were already appended to this stream. */
  private alreadyAppended(stream: string, events: readonly NewEvent[]): AppendResult | null {
    const rows = events.map((e) => (e.id === undefined ? undefined : this.stmts.byId.get(e.id)));
    if (rows.every((r) => r === undefined)) return null;
    const consistent = rows.every(
      (r, i) => r !== undefined && r.stream === stream && r.type === events[i]!.type && (i === 0 || r.revision === rows[i - 1]!.revision + 1),
    );
    if (!consistent) throw new DuplicateEventIdError(events[rows.findIndex((r) => r !== undefined)]!.id!);
    const last = rows[rows.length - 1]!;
    return { revision: last.revision, position: last.position };
  }

  async *readStream(stream: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backwards = options.direction === 'backwards';
    let remaining = options.maxCount ?? Infinity;
    let from = options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0);
    const stmt = backwards ? this.stmts.streamBackwards : this.stmts.streamForwards;
    while (remaining > 0) {
      const rows = stmt.all(stream, from, Math.min(PAGE, remaining));
      for (const row of rows) yield toEvent(row);
      if (rows.length < PAGE) return;
      remaining -= rows.length;
      from = rows[rows.length - 1]!.revision + (backwards ? -1 : 1);
    }
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let after = options.after ?? 0;
    let remaining = options.maxCount ?? Infinity;
    // Recorded times only grow with position, so "until" is a position bound found once through its
    // index (one seek: the newest entry at or before it, not a count through every earlier one).
    const upTo = options.until === undefined ? undefined : (this.stmts.lastAtOrBefore.get(options.until.getTime())?.p ?? 0);
    while (remaining > 0) {
      const rows = this.readPage(after, Math.min(PAGE, remaining), options, upTo);
      for (const row of rows) yield toEvent(row);
      if (rows.length === 0) return;
      remaining -= rows.length;
      after = rows[rows.length - 1]!.position;
    }
  }

  /**
   * One page of the log in position order. The rowid drives the scan (`+type` keeps SQLite off the
   * type index, which would sort the whole rest of the log for every page).
   */
  private readPage(after: number, limit: number, filter: LogFilter, upTo?: number): EventRow[] {
    const params: unknown[] = [after];
    let sql = 'SELECT * FROM events WHERE position > ?';
    if (upTo !== undefined) {
      sql += ' AND position <= ?';
      params.push(upTo);
    }
    sql += filterSql(filter, params) + ' ORDER BY position LIMIT ?';
    params.push(limit);
    let stmt = this.pages.get(sql);
    if (!stmt) this.pages.set(sql, (stmt = this.db.prepare<unknown[], EventRow>(sql)));
    return stmt.all(...params);
  }

  async headPosition(): Promise<number> {
    return this.stmts.head.get()?.p ?? 0;
  }

  /**
   * One transaction held across the whole (async) source: a failed or refused import leaves the store
   * empty, and the write lock taken first keeps other processes from appending between the emptiness
   * check and the commit. Dirty pages spill to the WAL, so memory stays bounded however long the log.
   */
  async importEvents(events: AsyncIterable<ExportedEvent>): Promise<ImportResult> {
    this.db.exec('BEGIN IMMEDIATE');
    let count = 0;
    let head = 0;
    let recordedAt = 0;
    try {
      const existing = this.stmts.head.get()?.p ?? 0;
      if (existing !== 0) throw new StoreNotEmptyError(existing);
      for await (const event of events) {
        const current = this.stmts.lastRevision.get(event.stream)?.r ?? -1;
        if (event.revision !== current + 1) throw new WrongExpectedRevisionError(event.stream, event.revision === 0 ? 'no_stream' : event.revision - 1, current);
        recordedAt = Math.max(recordedAt, event.recordedAt.getTime());
        const info = this.stmts.insert.run(event.id, event.stream, event.revision, event.type, JSON.stringify(event.data ?? null), JSON.stringify(event.metadata ?? {}), recordedAt);
        head = Number(info.lastInsertRowid);
        count++;
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
    this.lastRecordedAt = Math.max(this.lastRecordedAt, recordedAt);
    this.appended.emit('append');
    return { events: count, head };
  }

  subscribe(options: SubscribeOptions, handler: BatchHandler): Subscription {
    const batchSize = options.batchSize ?? 500;
    let stopped = false;
    let wake: (() => void) | null = null;
    const onAppend = () => wake?.();
    this.appended.on('append', onAppend);
    const idle = () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => resolve(), this.pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => {
        wake = null;
      });
    const loop = async () => {
      let after = options.after ?? 0;
      try {
        while (!stopped) {
          const rows = this.readPage(after, batchSize, options);
          if (rows.length === 0) {
            await idle();
            continue;
          }
          await handler(rows.map(toEvent));
          after = rows[rows.length - 1]!.position;
          // better-sqlite3 is synchronous: give HTTP requests a turn between batches of a long catch-up.
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        this.appended.off('append', onAppend);
      }
    };
    const done = loop();
    // The failure reaches whoever awaits `done`; without a listener it must not crash the process.
    done.catch(() => undefined);
    return {
      done,
      stop: async () => {
        stopped = true;
        wake?.();
        await done.catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

export const openSqliteEventStore = (file: string, options?: SqliteEventStoreOptions): SqliteEventStore => {
  return new SqliteEventStore(openSqliteFile(file, 'FULL'), options);
};
