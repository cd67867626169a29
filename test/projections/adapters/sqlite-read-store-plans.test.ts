/**
 * Queries on the push path and the `at` path must each use an index that fits them: SQLite, given
 * one index per field, picked the `attribute` index for a parent's links (half the links table at
 * 1M events) and sorted what it matched. The plans are read with EXPLAIN QUERY PLAN on the very SQL
 * the store runs (captured from its prepare calls), so they hold whatever the table holds.
 */
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { objectsProjector } from '../../../src/projections/objects-projector.ts';
import { OBJECT_LINKS } from '../../../src/projections/read-models.ts';
import { latestSnapshot, SNAPSHOTS, snapshotSpec } from '../../../src/projections/reporting/snapshots.ts';
import type { EventDecoder } from '../../../src/events/decode.ts';

const test = suite('SQLite read store: query plans');

/** A store over an in-memory database, with every SQL text it prepares, and every one it executes (`db.exec`). */
const open = () => {
  const db = new Database(':memory:');
  const prepared: string[] = [];
  const executed: string[] = [];
  const prepare = db.prepare.bind(db);
  const exec = db.exec.bind(db);
  db.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  db.exec = ((sql: string) => {
    executed.push(sql);
    return exec(sql);
  }) as typeof db.exec;
  return { db, prepared, executed, store: new SqliteReadStore(db) };
};

const planOf = (db: Database.Database, sql: string, params: unknown[]) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(' | ');

const lastSelect = (prepared: string[], table: string) => prepared.filter((s) => s.startsWith(`SELECT doc, bin FROM "${table}"`)).at(-1)!;

const linksSpec = () => objectsProjector((() => undefined) as unknown as EventDecoder).collections.find((c) => c.name === OBJECT_LINKS)!;

const putLinks = async (store: SqliteReadStore, table: string) => {
  const ops = Array.from({ length: 300 }, (_, i) => ({
    kind: 'put' as const,
    collection: table,
    doc: { id: `l${i}`, from: `o${i}`, to: `p${i % 30}`, attribute: i % 10 === 0 ? 'svc:attribute:parent' : 'svc:attribute:department', qualifier: null, fromType: 't', fromCreated: `2024-01-01T00:00:${String(59 - (i % 60)).padStart(2, '0')}.000Z` },
  }));
  await store.bulkWrite(ops);
};

test("a parent's links through one attribute, oldest first: one index filters and orders them", async () => {
  const { db, prepared, store } = open();
  await store.ensureCollection(linksSpec());
  await putLinks(store, OBJECT_LINKS);
  // The query push-data's findDependent runs.
  const found = await store.find(OBJECT_LINKS, { where: { to: 'p3', attribute: 'svc:attribute:department' }, sort: [['fromCreated', 'asc']] });
  assert.is(found.length, 10);
  const dates = found.map((d) => d.fromCreated as string);
  assert.equal(dates, [...dates].sort());
  const plan = planOf(db, lastSelect(prepared, OBJECT_LINKS), ['p3', 'svc:attribute:department']);
  assert.match(plan, /USING (COVERING )?INDEX \S+ \(f_to=\? AND f_attribute=\?\)/, plan);
  assert.not.match(plan, /TEMP B-TREE/, plan);
  await store.close();
});

test('the compound index is kept when a rebuilt collection is switched in over the live one', async () => {
  const { db, prepared, store } = open();
  await store.ensureCollection(linksSpec());
  await store.ensureCollection({ ...linksSpec(), name: 'object_links_rebuilt' });
  await putLinks(store, 'object_links_rebuilt');
  await store.swapIn([['object_links_rebuilt', OBJECT_LINKS]], 'objects', { position: 1 }, 'objects_rebuild');
  const found = await store.find(OBJECT_LINKS, { where: { to: 'p0', attribute: 'svc:attribute:parent' }, sort: [['fromCreated', 'asc']] });
  assert.is(found.length, 10);
  const plan = planOf(db, lastSelect(prepared, OBJECT_LINKS), ['p0', 'svc:attribute:parent']);
  assert.match(plan, /f_to=\? AND f_attribute=\?/, plan);
  assert.not.match(plan, /TEMP B-TREE/, plan);
  // A new collection under the old name gets its own index, not a clash with the renamed one.
  await store.ensureCollection({ ...linksSpec(), name: 'object_links_rebuilt' });
  await store.close();
});

/** Indexes on `table` made by CREATE INDEX, as the columns each covers. */
const indexesOn = (db: Database.Database, table: string): string[] =>
  (db.prepare("SELECT name FROM pragma_index_list(?) WHERE origin = 'c'").all(table) as { name: string }[])
    .map((i) => (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(i.name) as { name: string }[]).map((c) => c.name).join(','))
    .sort();

test('a switch renames the rebuilt collection with the indexes built for it: none is built again', async () => {
  // Building an index reads the whole collection (the objects read model's four took over a second at
  // 1M events), under the write lock every other writer of the store waits for.
  const { db, prepared, executed, store } = open();
  await store.ensureCollection(linksSpec());
  await store.ensureCollection({ ...linksSpec(), name: 'object_links_rebuilt' });
  await putLinks(store, 'object_links_rebuilt');
  const built = indexesOn(db, 'object_links_rebuilt');
  executed.length = 0;
  await store.swapIn([['object_links_rebuilt', OBJECT_LINKS]], 'objects', { position: 1 }, 'objects_rebuild');
  assert.equal(executed.filter((sql) => /CREATE INDEX/i.test(sql)), [], executed.join('\n'));
  assert.equal(indexesOn(db, OBJECT_LINKS), built);
  // Three more rebuilds under the same names: each copy gets its own indexes, once, and keeps them when switched in.
  for (let round = 2; round <= 4; round++) {
    await store.ensureCollection({ ...linksSpec(), name: 'object_links_rebuilt' });
    assert.equal(indexesOn(db, 'object_links_rebuilt'), built, `round ${round}: the new copy's indexes`);
    await putLinks(store, 'object_links_rebuilt');
    await store.swapIn([['object_links_rebuilt', OBJECT_LINKS]], 'objects', { position: round }, 'objects_rebuild');
    assert.equal(indexesOn(db, OBJECT_LINKS), built, `round ${round}: the switched-in collection's indexes`);
  }
  // Ensured again (a restart does so): nothing added.
  await store.ensureCollection(linksSpec());
  assert.equal(indexesOn(db, OBJECT_LINKS), built);
  await store.find(OBJECT_LINKS, { where: { to: 'p0', attribute: 'svc:attribute:parent' }, sort: [['fromCreated', 'asc']] });
  const plan = planOf(db, lastSelect(prepared, OBJECT_LINKS), ['p0', 'svc:attribute:parent']);
  assert.match(plan, /f_to=\? AND f_attribute=\?/, plan);
  await store.close();
});

test('the newest snapshot of a fold at or before an instant is found through one index', async () => {
  const { db, prepared, store } = open();
  await store.ensureCollection(snapshotSpec);
  await store.bulkWrite(
    Array.from({ length: 200 }, (_, i) => ({
      kind: 'put' as const,
      collection: SNAPSHOTS,
      doc: { id: `f${i % 4}@${i}`, collection: `fold${i % 4}`, position: i, recordedAt: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(), chunks: 0, chain: [] },
    })),
  );
  const at = new Date(Date.UTC(2024, 0, 1) + 101 * 60_000);
  const meta = await latestSnapshot(store, 'fold1', at);
  assert.is(meta?.id, 'f1@101');
  const plan = planOf(db, lastSelect(prepared, SNAPSHOTS), ['fold1', at.toISOString(), 1]);
  assert.match(plan, /f_collection=\? AND f_recordedAt<\?/, plan);
  await store.close();
});

test('a compound index naming a field that is not declared is refused', async () => {
  const { store } = open();
  const refused = await store.ensureCollection({ name: 'c', indexes: ['a'], compoundIndexes: [['a', 'b']] }).then(() => undefined, (e: Error) => e);
  assert.match(refused?.message ?? 'accepted', /compound index/);
  await store.close();
});

test.run();
