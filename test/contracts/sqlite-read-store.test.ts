import { statSync } from 'node:fs';
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
upgrade('a store that wrote to a table of the earlier form writes the columns of the table another store switched in over it', () =>
  onFile(
    `CREATE TABLE _collections (name TEXT PRIMARY KEY, indexes TEXT NOT NULL);
     INSERT INTO _collections VALUES ('rows', '["n"]');
     CREATE TABLE rows (id TEXT PRIMARY KEY, doc TEXT NOT NULL, bin BLOB, "f_n" GENERATED ALWAYS AS (json_extract(doc, '$.n')) VIRTUAL);
     CREATE INDEX ix_rows__n ON rows ("f_n");`,
    async (file) => {
      const [a, b] = [openSqliteReadStore(file), openSqliteReadStore(file)];
      await a.bulkWrite([{ kind: 'put', collection: 'rows', doc: { id: 'old', n: 1 } }]);
      // Another process rebuilds the collection in this version's form and switches it in.
      await b.ensureCollection({ name: 'rows_next', indexes: ['n'] });
      await b.bulkWrite([{ kind: 'put', collection: 'rows_next', doc: { id: 'rebuilt', n: 2 } }]);
      await b.swapIn([['rows_next', 'rows']], 'rows-projection', { position: 1 }, 'rows-retired');
      await a.bulkWrite([{ kind: 'put', collection: 'rows', doc: { id: 'after', n: 3 } }]);
      assert.equal((await b.find('rows', { where: { n: 3 } })).map((d) => d.id), ['after']);
      assert.equal((await a.find('rows', { where: { n: { $gte: 2 } } })).map((d) => d.id), ['after', 'rebuilt']);
      await a.close();
      await b.close();
    },
  ),
);
upgrade.run();

const columns = suite('embedded SQLite read store: declared fields');

/** Pages a write transaction put in the write-ahead log (the log emptied first from another connection). */
const pagesWritten = async (file: string, write: () => Promise<void>): Promise<number> => {
  const other = new Database(file);
  other.pragma('wal_checkpoint(TRUNCATE)');
  other.close();
  await write();
  const size = statSync(`${file}-wal`).size;
  return (size - 32) / (24 + 4096);
};

columns('a document written again rewrites only the indexes of the declared fields that changed', () =>
  onFile(null, async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'things', indexes: ['kind', 'title', 'created', 'owner.name'] });
    const doc = (i: number, title: string, note: string) => ({ id: `t${String(i).padStart(4, '0')}`, kind: `k${i % 7}`, title, created: 1_700_000_000 + i, owner: { name: `o${i % 13}` }, note });
    await store.bulkWrite(Array.from({ length: 400 }, (_, i) => ({ kind: 'put' as const, collection: 'things', doc: doc(i, `Title ${i}`, 'first') })));
    // Each of the four indexes spans several pages, and the table many more: one page each if rewritten.
    const unchanged = await pagesWritten(file, () => store.bulkWrite([{ kind: 'put', collection: 'things', doc: doc(200, 'Title 200', 'second') }]));
    assert.equal(unchanged, 1, 'the table page alone');
    const retitled = await pagesWritten(file, () => store.bulkWrite([{ kind: 'put', collection: 'things', doc: doc(200, 'Title 200a', 'third') }]));
    assert.equal(retitled, 2, 'the table page and the title index page');
    assert.equal((await store.find('things', { where: { title: 'Title 200a' } })).map((d) => d.note), ['third']);
    assert.equal((await store.find('things', { where: { title: 'Title 200' } })).length, 0);
    assert.equal((await store.find('things', { where: { 'owner.name': 'o5', kind: 'k4' } })).map((d) => d.id), ['t0018', 't0109', 't0200', 't0291', 't0382']);
    await store.close();
  }),
);
columns('fields are kept as SQLite reads them from the JSON: numbers, booleans, nulls, absent and nested values, bytes', () =>
  onFile(null, async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'mixed', indexes: ['v', 'deep.v'] });
    const values: [string, unknown][] = [['int', 5], ['real', 2.5], ['yes', true], ['no', false], ['nil', null], ['text', '5'], ['list', [1, 'a']], ['object', { b: 1 }]];
    await store.bulkWrite(values.map(([id, v]) => ({ kind: 'put' as const, collection: 'mixed', doc: { id, v, deep: { v } } })));
    await store.bulkWrite([
      { kind: 'put', collection: 'mixed', doc: { id: 'absent' } },
      { kind: 'put', collection: 'mixed', doc: { id: 'bytes', v: Buffer.from([1]), deep: [{ v: 1 }] } },
    ]);
    const raw = new Database(file, { readonly: true });
    const asSqlite = raw.prepare(`SELECT id, "f_v" IS json_extract(doc, '$.v') AS top, "f_deep__v" IS json_extract(doc, '$.deep.v') AS deep FROM mixed ORDER BY id`).all();
    raw.close();
    assert.equal(asSqlite, [...values.map(([id]) => id), 'absent', 'bytes'].sort().map((id) => ({ id, top: 1, deep: 1 })));
    assert.equal((await store.find('mixed', { where: { v: 5 } })).map((d) => d.id), ['int']);
    assert.equal((await store.find('mixed', { where: { 'deep.v': true } })).map((d) => d.id), ['yes']);
    await store.close();
  }),
);
columns('a field declared on a collection that holds documents already is filled in from them', () =>
  onFile(null, async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'late', indexes: [] });
    await store.bulkWrite([{ kind: 'put', collection: 'late', doc: { id: 'a', n: 1 } }, { kind: 'put', collection: 'late', doc: { id: 'b', n: 2 } }]);
    await store.ensureCollection({ name: 'late', indexes: ['n'] });
    assert.equal((await store.find('late', { where: { n: 2 } })).map((d) => d.id), ['b']);
    await store.bulkWrite([{ kind: 'put', collection: 'late', doc: { id: 'a', n: 2 } }]);
    assert.equal((await store.find('late', { where: { n: 2 } })).map((d) => d.id), ['a', 'b']);
    await store.close();
  }),
);
columns('fields declared together on a collection that holds documents are all filled in from them', () =>
  onFile(null, async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'wide', indexes: ['a'] });
    await store.bulkWrite(Array.from({ length: 40 }, (_, i) => ({ kind: 'put' as const, collection: 'wide', doc: { id: `w${i}`, a: i, b: i % 7, c: `c${i % 11}`, d: { e: i % 2 === 0 } } })));
    // Three new fields at once (set in one pass over the table), besides the one declared before.
    await store.ensureCollection({ name: 'wide', indexes: ['a', 'b', 'c', 'd.e'] });
    const raw = new Database(file, { readonly: true });
    const mismatched = raw.prepare(`SELECT count(*) AS n FROM wide WHERE "f_a" IS NOT json_extract(doc, '$.a') OR "f_b" IS NOT json_extract(doc, '$.b') OR "f_c" IS NOT json_extract(doc, '$.c') OR "f_d__e" IS NOT json_extract(doc, '$.d.e')`).get() as { n: number };
    raw.close();
    assert.is(mismatched.n, 0);
    assert.equal((await store.find('wide', { where: { b: 3, c: 'c2' } })).map((d) => d.id), ['w24']);
    assert.equal((await store.find('wide', { where: { 'd.e': false, a: { $lt: 4 } } })).map((d) => d.id).sort(), ['w1', 'w3']);
    await store.close();
  }),
);
columns('a store writes the column of a field another store declared after it began writing the collection', () =>
  onFile(null, async (file) => {
    const [a, b] = [openSqliteReadStore(file), openSqliteReadStore(file)];
    await a.ensureCollection({ name: 'shared', indexes: ['n'] });
    await a.bulkWrite([{ kind: 'put', collection: 'shared', doc: { id: 'one', n: 1, m: 'x' } }]);
    await b.ensureCollection({ name: 'shared', indexes: ['n', 'm'] });
    await a.bulkWrite([{ kind: 'put', collection: 'shared', doc: { id: 'one', n: 1, m: 'y' } }]);
    await a.increment('shared', 'two', 'n', 5, { m: 'z' });
    assert.equal((await b.find('shared', { where: { m: 'y' } })).map((d) => d.id), ['one']);
    assert.equal((await b.find('shared', { where: { m: 'z', n: 5 } })).map((d) => d.id), ['two']);
    await a.close();
    await b.close();
  }),
);
columns.run();

const following = suite('embedded SQLite read store: other processes\' commits');

following('othersCommitted is true once after another connection commits, and never for this connection\'s own commits', () =>
  onFile(null, async (file) => {
    const [a, b] = [openSqliteReadStore(file), openSqliteReadStore(file)];
    await a.ensureCollection({ name: 'notes', indexes: [] });
    a.othersCommitted();
    assert.is(a.othersCommitted(), false, 'nothing since the last look');
    await a.upsert('notes', { id: 'own' });
    assert.is(a.othersCommitted(), false, 'its own commit');
    await b.upsert('notes', { id: 'theirs' });
    assert.is(a.othersCommitted(), true, 'another connection committed');
    assert.is(a.othersCommitted(), false, 'told once');
    await b.commitBatch('p', [], null, { position: 1 });
    assert.is(a.othersCommitted(), true, 'a checkpoint moved by another connection');
    await a.close();
    await b.close();
  }),
);
following.run();
