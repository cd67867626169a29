import Database from 'better-sqlite3';
import { applySqlitePragmas } from '../../src/drivers/sqlite.ts';
import { SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';

/** The write transactions a connection began and committed (`BEGIN IMMEDIATE`, `COMMIT`); set back to 0 to count afresh. */
export interface TransactionCounts {
  begins: number;
  commits: number;
}

/** A read store over `file` (the service's pragmas) whose connection counts its write transactions. */
export const countedReadStore = (file: string): { store: SqliteReadStore; counts: TransactionCounts } => {
  const db = new Database(file);
  applySqlitePragmas(db);
  const counts: TransactionCounts = { begins: 0, commits: 0 };
  const exec = db.exec.bind(db);
  db.exec = (sql: string) => {
    if (sql === 'BEGIN IMMEDIATE') counts.begins++;
    if (sql === 'COMMIT') counts.commits++;
    return exec(sql);
  };
  return { store: new SqliteReadStore(db), counts };
};
