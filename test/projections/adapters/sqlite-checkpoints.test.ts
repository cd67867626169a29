import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteFile } from '../../../src/drivers/sqlite.ts';
import { checkpointInBackground, FALLBACK_CHECKPOINT_PAGES } from '../../../src/drivers/sqlite-checkpoints.ts';
import { openSqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';

// A read store's commits run on the service's main thread: a commit that checkpoints the WAL
// (copying its pages into the file and syncing it) held every request up for its whole length.
const test = suite('SQLite: WAL checkpoints in a thread of their own');

const PAGE = 4096;
/** About 3,000 pages of WAL in 30 commits: three times SQLite's own checkpoint threshold. */
const writePages = (db: Database.Database) => {
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, b BLOB)');
  const insert = db.prepare('INSERT INTO t (b) VALUES (?)');
  const blob = Buffer.alloc(PAGE - 200, 7);
  for (let c = 0; c < 30; c++) db.transaction(() => {
    for (let i = 0; i < 100; i++) insert.run(blob);
  })();
};

const mb = (file: string) => statSync(file).size / 2 ** 20;

const waitFor = async (what: string, ok: () => boolean, timeoutMs = 20_000) => {
  const started = Date.now();
  while (!ok()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const withFile = async (fn: (file: string) => Promise<void>) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-checkpoints-'));
  try {
    await fn(join(dir, 'read.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test('the writing connection does not checkpoint: its commits leave the pages in the WAL', () =>
  withFile(async (file) => {
    const db = openSqliteFile(file);
    // A thread that would not checkpoint within the test: what the commits do alone is seen.
    const checkpoints = checkpointInBackground(db, file, 3_600_000);
    try {
      assert.is(db.pragma('wal_autocheckpoint', { simple: true }), FALLBACK_CHECKPOINT_PAGES);
      writePages(db);
      assert.ok(mb(`${file}-wal`) > 10, `the WAL holds the commits (${mb(`${file}-wal`).toFixed(1)} MB)`);
      assert.ok(mb(file) < 1, `the file was not written by a checkpoint of the committing connection (${mb(file).toFixed(1)} MB)`);
    } finally {
      await checkpoints.close();
      db.close();
    }
  }),
);

test('the thread copies the commits into the file beside them', () =>
  withFile(async (file) => {
    const db = openSqliteFile(file);
    const checkpoints = checkpointInBackground(db, file, 20);
    try {
      writePages(db);
      // About 3,000 pages of rows, all in the file once the checkpoint is through.
      await waitFor('the pages copied into the file', () => mb(file) > 11.5);
      assert.is((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 3_000);
    } finally {
      await checkpoints.close();
      db.close();
    }
  }),
);

test('once the thread is stopped or could not open the file, the connection checkpoints itself at SQLite\'s threshold again', () =>
  withFile(async (file) => {
    const db = openSqliteFile(file);
    const checkpoints = checkpointInBackground(db, file, 20);
    await checkpoints.close();
    assert.is(db.pragma('wal_autocheckpoint', { simple: true }), FALLBACK_CHECKPOINT_PAGES, 'a stop asked for leaves the bound as it was: the store is closing');
    const unopenable = checkpointInBackground(db, join(file, 'not-a-directory', 'x.db'), 20);
    await waitFor('the setting given back', () => db.pragma('wal_autocheckpoint', { simple: true }) === 1000);
    await unopenable.close();
    writePages(db);
    assert.ok(mb(file) > 5, `the connection checkpointed its own commits (${mb(file).toFixed(1)} MB in the file)`);
    db.close();
  }),
);

test('a read store on a file closes with its thread; one in memory has none', async () => {
  await withFile(async (file) => {
    const store = openSqliteReadStore(file);
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.bulkWrite([{ kind: 'put', collection: 'docs', doc: { id: 'a', text: 'x'.repeat(10_000) } }]);
    await store.close();
    const again = new Database(file);
    assert.is((again.prepare('SELECT count(*) AS n FROM docs').get() as { n: number }).n, 1);
    again.close();
  });
  const memory = openSqliteReadStore(':memory:');
  await memory.close();
});

test.run();
