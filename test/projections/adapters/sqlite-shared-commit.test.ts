import Database from 'better-sqlite3';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { CheckpointConflictError } from '../../../src/projections/read-store.ts';
import { countedReadStore, type TransactionCounts } from '../../support/counted-transactions.ts';
import { tempDir } from '../../support/tmp.ts';

// A live batch of the log is committed by each projection it changes (objects and the reporting
// collections a push touches: three transactions a push batch). Writes asked in the same turn now
// share one transaction, each in a savepoint of its own: one BEGIN and one COMMIT between them, and
// one that fails still changes nothing and fails alone.
const test = suite('SQLite read store: writes asked together share one transaction');

/** A store over a file, its `BEGIN IMMEDIATE`s and `COMMIT`s counted, and a second connection to read what is committed. */
const withStore = async (run: (store: SqliteReadStore, counts: TransactionCounts, other: Database.Database) => Promise<void>) => {
  const dir = tempDir('svc-shared-commit');
  const file = join(dir.dir, 'read.db');
  const { store, counts } = countedReadStore(file);
  const other = new Database(file);
  try {
    await store.ensureCollection({ name: 'a', indexes: [] });
    await store.ensureCollection({ name: 'b', indexes: [] });
    counts.begins = counts.commits = 0;
    await run(store, counts, other);
  } finally {
    other.close();
    await store.close();
    dir.remove();
  }
};

const ids = (other: Database.Database, table: string) => (other.prepare(`SELECT id FROM "${table}" ORDER BY id`).all() as { id: string }[]).map((r) => r.id);
const position = (other: Database.Database, projection: string) =>
  (other.prepare('SELECT position FROM _checkpoints WHERE projection = ?').get(projection) as { position: number } | undefined)?.position;

test('two projections committing together: one transaction, both committed when either call resolves', () =>
  withStore(async (store, counts, other) => {
    const first = store.commitBatch('pa', [{ kind: 'put', collection: 'a', doc: { id: 'a1' } }], null, { position: 5 });
    const second = store.commitBatch('pb', [{ kind: 'put', collection: 'b', doc: { id: 'b1' } }], null, { position: 5 });
    await first;
    assert.equal(ids(other, 'a'), ['a1']);
    assert.equal(ids(other, 'b'), ['b1'], 'the other write is committed with it');
    await second;
    assert.is(position(other, 'pa'), 5);
    assert.is(position(other, 'pb'), 5);
    assert.equal(counts, { begins: 1, commits: 1 });
  }),
);

test('a write that fails among them changes nothing and fails alone', () =>
  withStore(async (store, counts, other) => {
    const first = store.commitBatch('pa', [{ kind: 'put', collection: 'a', doc: { id: 'a1' } }], null, { position: 5 });
    // Expects a checkpoint pb does not have.
    const stale = store
      .commitBatch('pb', [{ kind: 'put', collection: 'b', doc: { id: 'b1' } }], { position: 3 }, { position: 5 })
      .then(() => 'committed', (e: unknown) => (e instanceof CheckpointConflictError ? 'conflict' : String(e)));
    const third = store.upsert('b', { id: 'b2' });
    await first;
    assert.is(await stale, 'conflict');
    await third;
    assert.equal(ids(other, 'a'), ['a1']);
    assert.equal(ids(other, 'b'), ['b2']);
    assert.is(position(other, 'pb'), undefined);
    assert.equal(counts, { begins: 1, commits: 1 });
  }),
);

test('writes asked in different turns commit apart, each before its call resolves', () =>
  withStore(async (store, counts, other) => {
    await store.upsert('a', { id: 'a1' });
    assert.equal(ids(other, 'a'), ['a1']);
    await new Promise((resolve) => setImmediate(resolve));
    await store.upsert('a', { id: 'a2' });
    assert.equal(ids(other, 'a'), ['a1', 'a2']);
    assert.equal(counts, { begins: 2, commits: 2 });
  }),
);

test('a read in a later turn sees what was written; one in the same turn (this connection) too', () =>
  withStore(async (store) => {
    const written = store.upsert('a', { id: 'a1', v: 1 });
    assert.equal(await store.get('a', 'a1'), { id: 'a1', v: 1 });
    await written;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await store.get('a', 'a1'), { id: 'a1', v: 1 });
  }),
);

test.run();
