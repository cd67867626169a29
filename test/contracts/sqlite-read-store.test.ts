import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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

const upgrade = suite('embedded SQLite read store: files made by earlier versions');

/** Runs `fn` on a read.db in a temporary directory, made first by `sql` (what an earlier version left) when given. */
const onFile = async (sql: string | null, fn: (file: string) => Promise<void>) => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'read.db');
  try {
    if (sql) {
      const old = new Database(file);
      old.exec(sql);
      old.close();
    }
    await fn(file);
  } finally {
    tmp.remove();
  }
};

upgrade('an older read.db gains the columns on open and keeps its checkpoints', () =>
  onFile(
    `CREATE TABLE _checkpoints (projection TEXT PRIMARY KEY, position INTEGER NOT NULL, updated_at INTEGER NOT NULL);
     INSERT INTO _checkpoints VALUES ('tally', 42, 0);`,
    async (file) => {
      // Opened twice, as by two processes: the second finds the columns there.
      const [a, b] = [openSqliteReadStore(file), openSqliteReadStore(file)];
      assert.equal(await a.getCheckpoint('tally'), { position: 42 });
      await b.commitBatch('tally', [], { position: 42, generation: 0 }, { position: 43 });
      assert.equal(await a.getCheckpoint('tally'), { position: 43 });
      await a.close();
      await b.close();
    },
  ),
);
upgrade('a collection made before bytes fields takes them on first use, and its documents read as before', () =>
  onFile(
    `CREATE TABLE _collections (name TEXT PRIMARY KEY, indexes TEXT NOT NULL);
     INSERT INTO _collections VALUES ('chunks', '[]');
     CREATE TABLE chunks (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
     INSERT INTO chunks VALUES ('old', '{"id":"old","z":"AAEC"}');`,
    async (file) => {
      // Opened twice, as by two processes, and written without ensureCollection (a process that finds it made).
      const [a, b] = [openSqliteReadStore(file), openSqliteReadStore(file)];
      assert.equal(await b.get('chunks', 'old'), { id: 'old', z: 'AAEC' });
      await a.bulkWrite([{ kind: 'put', collection: 'chunks', doc: { id: 'new', z: Buffer.from([0, 1, 2]) } }]);
      const got = await b.get('chunks', 'new');
      assert.ok(Buffer.from([0, 1, 2]).equals(got!.z as Uint8Array));
      await a.close();
      await b.close();
    },
  ),
);
upgrade('a table a previous version brings back without bin (its rebuild switched in) is given the column on first use, reads and writes alike', () =>
  onFile(null, async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'rows', indexes: ['n'] });
    await store.bulkWrite([{ kind: 'put', collection: 'rows', doc: { id: 'a', n: 1 } }]);
    assert.equal(await store.get('rows', 'a'), { id: 'a', n: 1 });
    // What a previous version's switch leaves: the table made again without the column.
    const oldSwitch = () => {
      const old = new Database(file);
      old.exec(`DROP TABLE rows; CREATE TABLE rows (id TEXT PRIMARY KEY, doc TEXT NOT NULL, "f_n" GENERATED ALWAYS AS (json_extract(doc, '$.n')) VIRTUAL);
                INSERT INTO rows (id, doc) VALUES ('b', '{"id":"b","n":2}');`);
      old.close();
    };
    oldSwitch();
    await store.bulkWrite([{ kind: 'put', collection: 'rows', doc: { id: 'c', n: 3, z: Buffer.from([7]) } }]);
    assert.ok(Buffer.from([7]).equals((await store.get('rows', 'c'))!.z as Uint8Array));
    oldSwitch();
    assert.equal(await store.get('rows', 'b'), { id: 'b', n: 2 });
    assert.equal((await store.find('rows', { where: { n: 2 } })).map((d) => d.id), ['b']);
    await store.close();
  }),
);
upgrade.run();
