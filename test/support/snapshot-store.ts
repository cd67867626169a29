/** A uvu suite whose tests each get a temporary directory, and read stores on it with the snapshots collection, closed after. */
import { join } from 'node:path';
import { suite } from 'uvu';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { snapshotSpec } from '../../src/projections/reporting/snapshots.ts';
import { tempDir } from './tmp.ts';

export interface SnapshotStoreCtx {
  dir: string;
  remove(): void;
  stores: SqliteReadStore[];
}

export const snapshotStoreSuite = (name: string, tmpLabel: string) => {
  const test = suite<SnapshotStoreCtx>(name, {} as never);
  test.before.each((ctx) => {
    const tmp = tempDir(tmpLabel);
    ctx.dir = tmp.dir;
    ctx.remove = tmp.remove;
    ctx.stores = [];
  });
  test.after.each(async (ctx) => {
    for (const store of ctx.stores) await store.close();
    ctx.remove();
  });
  return test;
};

/** A read store on the test's directory (`read.db`), with the snapshots collection. */
export const openSnapshotStore = async (ctx: SnapshotStoreCtx, options: Parameters<typeof openSqliteReadStore>[1] = {}): Promise<SqliteReadStore> => {
  const store = openSqliteReadStore(join(ctx.dir, 'read.db'), options);
  ctx.stores.push(store);
  await store.ensureCollection(snapshotSpec);
  return store;
};
