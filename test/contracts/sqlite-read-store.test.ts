import { join } from 'node:path';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { readStoreContract } from './read-store.contract.ts';
import { tempDir } from '../support/tmp.ts';

readStoreContract('embedded SQLite', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'read.db');
  const store = openSqliteReadStore(file);
  const others: ReadStore[] = [];
  return {
    store,
    another: async (options) => {
      const other = openSqliteReadStore(file, options);
      others.push(other);
      return other;
    },
    close: async () => {
      // A store the contract closed itself is closed already (better-sqlite3 allows closing twice).
      for (const other of others) await other.close();
      await store.close();
      tmp.remove();
    },
  };
}).run();
