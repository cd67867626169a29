import type Database from 'better-sqlite3';
import type { Lease } from '../read-store.ts';

/**
 * Leases in the embedded read store: one row per lease. Each operation is one statement, and
 * SQLite's write lock serialises statements across connections and processes, so two owners can
 * never both take a lease. Times are this machine's clock, which every process sharing the file
 * reads.
 */
export class SqliteLeases {
  private readonly take: Database.Statement;
  private readonly extend: Database.Statement;
  private readonly drop: Database.Statement;
  private readonly read: Database.Statement<[string], { owner: string; expires_at: number }>;

  constructor(db: Database.Database, private readonly now: () => number = Date.now) {
    db.exec('CREATE TABLE IF NOT EXISTS _leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at INTEGER NOT NULL)');
    // The upsert's WHERE leaves a row held by another owner untouched: no change means refused.
    this.take = db.prepare(
      `INSERT INTO _leases (name, owner, expires_at) VALUES (@name, @owner, @expires)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE _leases.owner = excluded.owner OR _leases.expires_at <= @now`,
    );
    this.extend = db.prepare('UPDATE _leases SET expires_at = @expires WHERE name = @name AND owner = @owner');
    this.drop = db.prepare('DELETE FROM _leases WHERE name = ? AND owner = ?');
    this.read = db.prepare('SELECT owner, expires_at FROM _leases WHERE name = ?');
  }

  acquire(name: string, owner: string, ttlMs: number): boolean {
    const now = this.now();
    return this.take.run({ name, owner, expires: now + ttlMs, now }).changes === 1;
  }

  renew(name: string, owner: string, ttlMs: number): boolean {
    return this.extend.run({ name, owner, expires: this.now() + ttlMs }).changes === 1;
  }

  release(name: string, owner: string): void {
    this.drop.run(name, owner);
  }

  /** Who took the lease last, lapsed or not (null: nobody holds it, or it was released). */
  ownerOf(name: string): string | null {
    return this.read.get(name)?.owner ?? null;
  }

  get(name: string): Lease | null {
    const row = this.read.get(name);
    if (!row) return null;
    const remainingMs = row.expires_at - this.now();
    return remainingMs > 0 ? { name, owner: row.owner, remainingMs } : null;
  }
}
