import type Database from 'better-sqlite3';
import { newEventId } from '../event-id.ts';
import { DuplicateEventIdError, WrongExpectedRevisionError, type AppendResult, type ExpectedRevision, type StreamAppend } from '../event-store.ts';

/** An event as the events table holds it: data and metadata already JSON, the id chosen. */
export interface EncodedEvent {
  readonly id: string;
  readonly type: string;
  readonly data: string;
  readonly metadata: string;
}

export interface EncodedAppend {
  readonly stream: string;
  readonly expectedRevision: ExpectedRevision;
  readonly events: readonly EncodedEvent[];
}

/**
 * Encoded by the caller's thread: JSON.stringify is what the store has always stored (a class's
 * toJSON, a Map as {}), which a structured clone to the writer thread would not keep.
 */
export const encodeAppends = (appends: readonly StreamAppend[]): EncodedAppend[] =>
  appends.map(({ stream, events, expectedRevision = 'any' }) => ({
    stream,
    expectedRevision,
    events: events.map((e) => ({ id: e.id ?? newEventId(), type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(e.metadata ?? {}) })),
  }));

/**
 * What a commit of appends answers: each append's result, and the recorded time its events were
 * written with (null where they were already in the log: a retry wrote nothing).
 */
export interface Committed {
  readonly results: AppendResult[];
  readonly recordedAt: (number | null)[];
}

interface IdRow {
  readonly position: number;
  readonly stream: string;
  readonly revision: number;
  readonly type: string;
}

/**
 * The append transaction of the embedded store, on whichever connection (and thread) writes:
 * optimistic concurrency by expected revision, idempotency by event id, monotonic recorded time.
 */
export class SqliteAppender {
  private lastRecordedAt = 0;
  private readonly stmts;
  private readonly tx;

  constructor(db: Database.Database) {
    this.stmts = {
      lastRevision: db.prepare<[string], { r: number | null }>('SELECT MAX(revision) AS r FROM events WHERE stream = ?'),
      insert: db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      byId: db.prepare<[string], IdRow>('SELECT position, stream, revision, type FROM events WHERE id = ?'),
      lastRecordedAt: db.prepare<[], { t: number | null }>('SELECT MAX(recorded_at) AS t FROM events'),
    };
    this.tx = db.transaction((appends: readonly EncodedAppend[], times: readonly number[]) => {
      // Monotonic recorded time: replay "up to time T" relies on log order and time order agreeing.
      // The newest time in the file counts too (an import, another process): one index seek.
      let recordedAt = Math.max(this.lastRecordedAt, this.stmts.lastRecordedAt.get()?.t ?? 0);
      const committed: Committed = { results: [], recordedAt: [] };
      appends.forEach((a, i) => {
        recordedAt = Math.max(recordedAt, times[i]!);
        const { result, written } = this.appendOne(a, recordedAt);
        committed.results.push(result);
        committed.recordedAt.push(written ? recordedAt : null);
      });
      return { committed, recordedAt };
    });
  }

  /**
   * One IMMEDIATE transaction (other processes may share the file): all of `appends` or none.
   * `times`: the caller's clock read for each append (the clock cannot cross to the writer thread).
   */
  append(appends: readonly EncodedAppend[], times: readonly number[]): Committed {
    const { committed, recordedAt } = this.tx.immediate(appends, times);
    this.lastRecordedAt = recordedAt;
    return committed;
  }

  private appendOne({ stream, events, expectedRevision }: EncodedAppend, recordedAt: number): { result: AppendResult; written: boolean } {
    if (events.length === 0) throw new Error(`Append to ${stream} has no events`);
    const current = this.stmts.lastRevision.get(stream)?.r ?? -1;
    const conflict = (expectedRevision === 'no_stream' && current !== -1) || (typeof expectedRevision === 'number' && expectedRevision !== current);
    if (conflict) {
      const retried = this.alreadyAppended(stream, events);
      if (retried) return { result: retried, written: false };
      throw new WrongExpectedRevisionError(stream, expectedRevision, current);
    }
    if (this.stmts.byId.get(events[0]!.id)) return { result: this.alreadyAppended(stream, events)!, written: false };
    let revision = current;
    let position = 0;
    try {
      for (const event of events) {
        revision += 1;
        const info = this.stmts.insert.run(event.id, stream, revision, event.type, event.data, event.metadata, recordedAt);
        position = Number(info.lastInsertRowid);
      }
    } catch (error) {
      // A later event's id is taken while the first one is new: ids were reused, not retried.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') this.alreadyAppended(stream, events);
      throw error;
    }
    return { result: { revision, position }, written: true };
  }

  /** The result of the original append if these exact events were already appended to this stream. */
  private alreadyAppended(stream: string, events: readonly EncodedEvent[]): AppendResult | null {
    const rows = events.map((e) => this.stmts.byId.get(e.id));
    if (rows.every((r) => r === undefined)) return null;
    const consistent = rows.every(
      (r, i) => r !== undefined && r.stream === stream && r.type === events[i]!.type && (i === 0 || r.revision === rows[i - 1]!.revision + 1),
    );
    if (!consistent) throw new DuplicateEventIdError(events[rows.findIndex((r) => r !== undefined)]!.id);
    const last = rows[rows.length - 1]!;
    return { revision: last.revision, position: last.position };
  }
}

/** An append's failure as it crosses from the writer thread: the typed errors are made again on the other side. */
export type WireError =
  | { readonly kind: 'revision'; readonly stream: string; readonly expected: ExpectedRevision; readonly actual: number | undefined }
  | { readonly kind: 'duplicate-id'; readonly eventId: string }
  | { readonly kind: 'error'; readonly name: string; readonly message: string; readonly code?: string };

export const toWire = (e: unknown): WireError => {
  if (e instanceof WrongExpectedRevisionError) return { kind: 'revision', stream: e.stream, expected: e.expected, actual: e.actual };
  if (e instanceof DuplicateEventIdError) return { kind: 'duplicate-id', eventId: e.eventId };
  const { name = 'Error', message = String(e), code } = (e ?? {}) as { name?: string; message?: string; code?: unknown };
  return { kind: 'error', name, message, ...(typeof code === 'string' ? { code } : {}) };
};

export const fromWire = (w: WireError): Error => {
  if (w.kind === 'revision') return new WrongExpectedRevisionError(w.stream, w.expected, w.actual);
  if (w.kind === 'duplicate-id') return new DuplicateEventIdError(w.eventId);
  // SQLite's errors (SQLITE_BUSY, SQLITE_FULL...) keep their name and code: callers test `code`.
  const error = new Error(w.message) as Error & { code?: string };
  error.name = w.name;
  if (w.code !== undefined) error.code = w.code;
  return error;
};
