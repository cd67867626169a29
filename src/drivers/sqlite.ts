import type Database from 'better-sqlite3';

/**
 * WAL with synchronous=NORMAL: a commit survives a process crash; a power loss may drop the last
 * transactions but never corrupts the file. The same settings are used by the benchmark baselines.
 */
export const applySqlitePragmas = (db: Database.Database): void => {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
};
