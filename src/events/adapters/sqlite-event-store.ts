import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import {
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
  type ReadByStreamOptions,
  type SplitStreamsOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from '../event-store.ts';
import { applySqlitePragmas, commitWatch, openSqliteFile } from '../../drivers/sqlite.ts';
import { encodeAppends, SqliteAppender } from './sqlite-append.ts';
import { SqliteAppendThread } from './sqlite-append-thread.ts';
import { RecentRows, type EventRow } from './recent-rows.ts';

export interface SqliteEventStoreOptions {
  /** Milliseconds since the epoch; injectable so tests can control recorded times. */
  readonly clock?: () => number;
  /** How often a live subscription looks for events appended by other processes. */
  readonly pollIntervalMs?: number;
  /**
   * Commits the appends on its own connection in a thread of its own (see `openSqliteEventStore`);
   * without one they are committed on `db` in the caller's thread. Closed by the store's close().
   */
  readonly appendThread?: SqliteAppendThread;
}

const PAGE = 1000;
/**
 * How often an idle subscription asks SQLite whether another connection has committed (`PRAGMA
 * data_version`, about 1 µs, no page read): another process's appends are seen within this, not at
 * the next poll of the file. Every 2 ms after the last events it saw, then less often the longer
 * the log stays quiet (each look wakes the process: an idle service spent 0.5-1.2% of a core more
 * looking every 2 ms throughout).
 */
const watchEveryMs = (quietLooks: number): number => (quietLooks < 250 ? 2 : quietLooks < 500 ? 10 : 50);

/** What a subscription saw when it last looked at whether others appended (see othersAppended). */
interface Watched {
  /** Whether another connection committed since the last look (commitWatch). */
  readonly othersCommitted: () => boolean;
  /** The head was ahead of what this store knows by no more than its appends under way: look again. */
  ownMayExplain: boolean;
}

/** The columns an event is read with, in the order of EventRow. */
const COLUMNS = 'position, id, stream, revision, type, data, metadata, recorded_at';

const toEvent = (row: EventRow): RecordedEvent => ({
  id: row[1],
  type: row[4],
  data: JSON.parse(row[5]),
  metadata: JSON.parse(row[6]),
  stream: row[2],
  revision: row[3],
  position: row[0],
  recordedAt: new Date(row[7]),
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
  private readonly stmts;
  private readonly pages = new Map<string, Database.Statement<unknown[], EventRow>>();
  private readonly appendThread: SqliteAppendThread | undefined;
  private readonly appender: SqliteAppender | undefined;
  /** This store's latest appends, handed to subscriptions without reading them back. */
  private readonly recent = new RecentRows();
  /** The last position this store's appends were answered for, and events of its appends not yet answered. */
  private ownHead = 0;
  private ownPending = 0;

  constructor(private readonly db: Database.Database, options: SqliteEventStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.appendThread = options.appendThread;
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
      head: db.prepare<[], { p: number | null }>('SELECT MAX(position) AS p FROM events'),
      streamForwards: db.prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?`).raw(true),
      streamBackwards: db.prepare<[string, number, number], EventRow>(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND revision <= ? ORDER BY revision DESC LIMIT ?`).raw(true),
      lastAtOrBefore: db.prepare<[number], { p: number | null }>('SELECT position AS p FROM events WHERE recorded_at <= ? ORDER BY recorded_at DESC, position DESC LIMIT 1'),
    };
    this.appender = this.appendThread ? undefined : new SqliteAppender(db);
  }

  async append(stream: string, events: readonly NewEvent[], expectedRevision: ExpectedRevision = 'any'): Promise<AppendResult> {
    const [result] = await this.appendMany([{ stream, events, expectedRevision }]);
    return result!;
  }

  /**
   * Answers once the transaction is committed and synced. With a writer thread the event loop
   * goes on meanwhile (the fsync is most of an append's wall time); readers see the appends
   * only once committed, as with any other connection's writes.
   */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const encoded = encodeAppends(appends);
    // Each append reads the clock, as if appended one by one (an import spreads a history over time so).
    const times = appends.map(() => this.clock());
    let events = 0;
    for (const a of appends) events += a.events.length;
    this.ownPending += events;
    let committed;
    try {
      committed = this.appendThread ? await this.appendThread.append(encoded, times) : this.appender!.append(encoded, times);
    } finally {
      this.ownPending -= events;
    }
    for (const r of committed.results) if (r.position > this.ownHead) this.ownHead = r.position;
    this.recent.add(encoded, committed);
    this.appended.emit('append');
    return committed.results;
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
      from = rows[rows.length - 1]![3] + (backwards ? -1 : 1);
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
      for (const event of rows) yield event;
      if (rows.length === 0) return;
      remaining -= rows.length;
      after = rows[rows.length - 1]!.position;
    }
  }

  /**
   * Walks the (stream, revision) index from one page's last event to the next page's, so each page
   * is one seek whatever the log's length; position and type are checked on the rows it passes.
   */
  async *readByStream(options: ReadByStreamOptions): AsyncIterable<RecordedEvent> {
    const params: unknown[] = [];
    let where = filterSql(options, params);
    if (options.before !== undefined) {
      where += ' AND stream < ?';
      params.push(options.before);
    }
    const sql = `SELECT ${COLUMNS} FROM events WHERE (stream, revision) > (?, ?) AND position <= ?${where} ORDER BY stream, revision LIMIT ?`;
    const stmt = this.page(sql);
    let stream = options.from !== undefined && options.from > options.streamPrefix ? options.from : options.streamPrefix;
    let revision = -1;
    for (;;) {
      const rows = stmt.all(stream, revision, options.through, ...params, PAGE);
      for (const row of rows) yield toEvent(row);
      if (rows.length < PAGE) return;
      stream = rows[rows.length - 1]![2];
      revision = rows[rows.length - 1]![3];
    }
  }

  async splitStreams({ streamPrefix, parts }: SplitStreamsOptions): Promise<string[]> {
    if (parts < 2) return [];
    // Both walk the (stream, revision) index alone: a few tens of milliseconds per million events.
    const range = [streamPrefix, prefixEnd(streamPrefix)];
    const count = this.db.prepare<unknown[], { n: number }>('SELECT count(*) AS n FROM events WHERE stream >= ? AND stream < ?').get(...range)!.n;
    const at = this.db.prepare<unknown[], { stream: string }>('SELECT stream FROM events WHERE stream >= ? AND stream < ? ORDER BY stream, revision LIMIT 1 OFFSET ?');
    const cuts: string[] = [];
    for (let k = 1; k < parts; k++) {
      const stream = at.get(...range, Math.floor((count * k) / parts))?.stream;
      // The first stream of a run: a long stream at a cut leaves the run after it shorter, or empty.
      if (stream !== undefined && stream > (cuts[cuts.length - 1] ?? streamPrefix)) cuts.push(stream);
    }
    return cuts;
  }

  /**
   * One page of the log in position order. The rowid drives the scan (`+type` keeps SQLite off the
   * type index, which would sort the whole rest of the log for every page).
   */
  private readPage(after: number, limit: number, filter: LogFilter, upTo?: number): RecordedEvent[] {
    const params: unknown[] = [after];
    let sql = `SELECT ${COLUMNS} FROM events WHERE position > ?`;
    if (upTo !== undefined) {
      sql += ' AND position <= ?';
      params.push(upTo);
    }
    sql += filterSql(filter, params) + ' ORDER BY position LIMIT ?';
    params.push(limit);
    return this.page(sql).all(...params).map(toEvent);
  }

  /** A page query, prepared once (its text depends on the filter and bounds asked for). */
  private page(sql: string): Database.Statement<unknown[], EventRow> {
    let stmt = this.pages.get(sql);
    if (!stmt) this.pages.set(sql, (stmt = this.db.prepare<unknown[], EventRow>(sql).raw(true)));
    return stmt;
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
    this.appended.emit('append');
    return { events: count, head };
  }

  /**
   * Whether another connection has committed events after `after` that this store's appends do not
   * account for. Read on a move of the data version only, or while this store's appends under way
   * (committed, not yet answered) may be what moved the head: those are handed over, not read back.
   * Positions are dense, so the head beyond what this store knows is another connection's events;
   * theirs before this store's own leave a gap in the rows held, which the reader fills from the file.
   */
  private othersAppended(after: number, seen: Watched): boolean {
    if (!seen.othersCommitted() && !seen.ownMayExplain) return false;
    const head = this.stmts.head.get()?.p ?? 0;
    const known = Math.max(after, this.ownHead);
    seen.ownMayExplain = head > known && head <= known + this.ownPending;
    return head > known + this.ownPending;
  }

  subscribe(options: SubscribeOptions, handler: BatchHandler): Subscription {
    const batchSize = options.batchSize ?? 500;
    let stopped = false;
    let wake: (() => void) | null = null;
    let appendedSince = false;
    const onAppend = () => {
      appendedSince = true;
      wake?.();
    };
    this.appended.on('append', onAppend);
    // A filtered subscription reads the file: the rows held cover every position, not only the matching ones.
    // It is not woken by others' commits either: its position stays at its last matching event, so
    // the head would be past it after every commit, and each wake would read the file from there.
    const filtered = options.types !== undefined || !!options.streamPrefix;
    /** Looks at the data version since the last events were handed over (see watchEveryMs). */
    let quietLooks = 0;
    const watched: Watched = { othersCommitted: commitWatch(this.db), ownMayExplain: false };
    // Until the poll, until this store appends, or until another connection has committed events past `after`.
    const idle = (after: number) =>
      new Promise<void>((resolve) => {
        let watch: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(timer);
          clearTimeout(watch);
          resolve();
        };
        const timer = setTimeout(done, this.pollIntervalMs);
        const look = () => {
          let seen = true;
          try {
            seen = this.othersAppended(after, watched);
          } catch {
            // A closed store, say: the loop's next read meets the same failure and ends the subscription.
          }
          if (seen) done();
          else watch = setTimeout(look, watchEveryMs(quietLooks++));
        };
        wake = done;
        if (!filtered) look();
      }).finally(() => {
        wake = null;
      });

    const loop = async () => {
      let after = options.after ?? 0;
      try {
        while (!stopped) {
          appendedSince = false;
          const held = filtered ? undefined : this.recent.after(after, batchSize);
          const rows = held ? held.map(toEvent) : this.readPage(after, batchSize, options);
          if (rows.length === 0) {
            await idle(after);
            continue;
          }
          quietLooks = 0;
          await handler(rows);
          after = rows[rows.length - 1]!.position;
          // better-sqlite3 is synchronous: give HTTP requests a turn between batches of a long catch-up.
          await new Promise((resolve) => setImmediate(resolve));
          // Every row held was handed over. Until this store's writer answers for more (or the poll
          // comes round for other connections' appends), the file holds nothing new but rows
          // committed and not yet answered for, which would be read back instead of handed over.
          if (held && held.length < batchSize && !appendedSince && !stopped) await idle(after);
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
    await this.appendThread?.close();
    this.db.close();
  }
}

/**
 * Opens the store on a file with a writer thread (started by the first append): the main thread's
 * connection only reads (and imports). An in-memory database has one connection, so appends are
 * committed on it in the caller's thread.
 */
export const openSqliteEventStore = (file: string, options: SqliteEventStoreOptions = {}): SqliteEventStore => {
  const db = openSqliteFile(file, 'FULL');
  return new SqliteEventStore(db, db.memory || options.appendThread ? options : { ...options, appendThread: new SqliteAppendThread(file) });
};
