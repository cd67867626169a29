import type { Committed, EncodedAppend } from './sqlite-append.ts';

/**
 * An event as the events table holds it, its columns in the order the store reads them (as arrays:
 * better-sqlite3 builds an object row property by property, which took about half the time of
 * reading the log).
 */
export type EventRow = [position: number, id: string, stream: string, revision: number, type: string, data: string, metadata: string, recordedAt: number];

/**
 * The rows this store's own appends have just written, exactly as reading the log gives them (the
 * writer says where each append landed and with which recorded time), so that a subscription
 * following the log is handed them without reading them back. Only one run of consecutive
 * positions is held: positions are dense, so events appended by another connection in between show
 * as a gap, and the run starts again after it. Bounded in rows and in bytes: a subscription
 * further behind reads the file as before.
 */
export class RecentRows {
  private rows: EventRow[] = [];
  /** Rows before this index are dropped (compacted away now and then). */
  private start = 0;
  private bytes = 0;

  constructor(
    private readonly maxRows = 4096,
    private readonly maxBytes = 8 * 2 ** 20,
  ) {}

  /** Records a commit of `appends` as the writer answered it. */
  add(appends: readonly EncodedAppend[], committed: Committed): void {
    appends.forEach((append, i) => {
      const recordedAt = committed.recordedAt[i];
      const result = committed.results[i];
      if (recordedAt === null || recordedAt === undefined || !result) return; // a retry: already in the log
      const n = append.events.length;
      const first = result.position - n + 1;
      if (this.rows.length > this.start && this.rows[this.rows.length - 1]![0] + 1 !== first) this.clear();
      append.events.forEach((e, j) => {
        this.rows.push([first + j, e.id, append.stream, result.revision - n + 1 + j, e.type, e.data, e.metadata, recordedAt]);
        this.bytes += e.data.length + e.metadata.length;
      });
    });
    while (this.rows.length - this.start > this.maxRows || (this.bytes > this.maxBytes && this.rows.length > this.start)) {
      const row = this.rows[this.start++]!;
      this.bytes -= row[5].length + row[6].length;
    }
    if (this.start > this.rows.length / 2) {
      this.rows = this.rows.slice(this.start);
      this.start = 0;
    }
  }

  /** Up to `limit` rows from position `after + 1` on; undefined when that position is not held. */
  after(after: number, limit: number): EventRow[] | undefined {
    if (this.rows.length === this.start) return undefined;
    const at = this.start + (after + 1 - this.rows[this.start]![0]);
    if (at < this.start || at >= this.rows.length) return undefined;
    return this.rows.slice(at, at + limit);
  }

  private clear(): void {
    this.rows = [];
    this.start = 0;
    this.bytes = 0;
  }
}
