import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { PRIVATE_FILE_MODE, tightenMode } from './private-files.ts';

/**
 * How long a commit waits for the disk. In WAL mode, `FULL` syncs the log at every commit, so a
 * commit that returned survives a power loss; `NORMAL` syncs only at checkpoints, so a commit
 * survives a crash of the process but the last ones may be lost with the machine (never corrupting
 * the file).
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

/**
 * WAL, the given durability (NORMAL unless told), a busy timeout for other processes' writes, foreign keys.
 * Several processes may share a file: every write transaction is begun IMMEDIATE (a deferred one that
 * read first fails at once with SQLITE_BUSY when another process wrote meanwhile, without waiting).
 */
export const applySqlitePragmas = (db: Database.Database, synchronous: SqliteSynchronous = 'NORMAL'): void => {
  // The busy timeout first: switching to WAL takes a lock that another process may be holding.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma('foreign_keys = ON');
};

const inMemory = (file: string) => file === '' || file === ':memory:' || file.startsWith('file::memory:');

/**
 * Opens (creating if need be) a database file readable by its owner only. SQLite gives the -wal and
 * -shm files the mode of the database file, so creating that one 0600 makes all three private;
 * files left looser by an older version are tightened.
 */
export const openSqliteFile = (file: string, synchronous: SqliteSynchronous = 'NORMAL'): Database.Database => {
  if (!inMemory(file)) {
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
    for (const path of [file, `${file}-wal`, `${file}-shm`]) tightenMode(path, PRIVATE_FILE_MODE);
  }
  const db = new Database(file);
  applySqlitePragmas(db, synchronous);
  return db;
};

/** What a passive checkpoint did: frames in the WAL, how many of them are now in the database file, and whether a lock cut it short. */
export interface CheckpointResult {
  readonly busy: boolean;
  readonly log: number;
  readonly checkpointed: number;
}

/** The row `PRAGMA wal_checkpoint` answers. */
export type CheckpointRow = { readonly busy: number; readonly log: number; readonly checkpointed: number };

export const checkpointResult = (row: CheckpointRow): CheckpointResult => ({ busy: row.busy !== 0, log: row.log, checkpointed: row.checkpointed });

/**
 * A function telling whether another connection has committed to `db` since it was last called
 * (true on the first call): SQLite's `PRAGMA data_version`, about 1 µs and no page read. A commit
 * on `db` itself does not count.
 */
export const commitWatch = (db: Database.Database): (() => boolean) => {
  const version = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seen = -1;
  return () => {
    const now = version.get()!;
    if (now === seen) return false;
    seen = now;
    return true;
  };
};

/** Copies what it can of the WAL into the database file, without waiting for any lock or holding up any reader or writer. */
export const passiveCheckpoint = (db: Database.Database): CheckpointResult => checkpointResult((db.pragma('wal_checkpoint(PASSIVE)') as CheckpointRow[])[0]!);
