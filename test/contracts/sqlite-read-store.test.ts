import { join } from 'node:path';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { readStoreContract } from './read-store.contract.ts';
import { tempDir } from '../support/tmp.ts';

readStoreContract('embedded SQLite', async () => {
  const tmp = tempDir();
  const store = openSqliteReadStore(join(tmp.dir, 'read.db'));
  return { store, close: async () => (await store.close(), tmp.remove()) };
}).run();
