import Database from 'better-sqlite3';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteReadStore, type SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../../support/tmp.ts';

// A service's lease renewals and commits waited for another process's write (a rebuild committing
// or switching in, seconds at a time) in SQLite's busy handler, which sleeps on the calling thread:
// the service answered nothing meanwhile (object GETs of 0.3-3 s). A write waiting for the lock
// must leave the event loop running.
const test = suite('SQLite read store: a write waiting for another connection leaves the event loop running');

const writes: Record<string, (s: SqliteReadStore) => Promise<unknown>> = {
  upsert: (s) => s.upsert('docs', { id: 'u' }),
  delete: (s) => s.delete('docs', 'a'),
  bulkWrite: (s) => s.bulkWrite([{ kind: 'put', collection: 'docs', doc: { id: 'b' } }]),
  commitBatch: (s) => s.commitBatch('p', [{ kind: 'put', collection: 'docs', doc: { id: 'c' } }], { position: 1 }, { position: 2 }),
  increment: (s) => s.increment('docs', 'n', 'count', 1),
  ensureCollection: (s) => s.ensureCollection({ name: 'more', indexes: ['kind'] }),
  dropCollection: (s) => s.dropCollection('spare'),
  acquireLease: (s) => s.acquireLease('other', 'me', 10_000),
  renewLease: (s) => s.renewLease('held', 'me', 10_000),
  releaseLease: (s) => s.releaseLease('held', 'me'),
  deleteCheckpoint: (s) => s.deleteCheckpoint('p'),
};

/**
 * A store with a `docs` collection, and another connection to its file (to hold the write lock),
 * for `run`; both closed and the file removed afterwards, whatever `run` left open.
 */
const withOtherConnection = async (busyTimeoutMs: number, run: (store: SqliteReadStore, other: Database.Database) => Promise<void>) => {
  const dir = tempDir('svc-write-wait');
  const file = join(dir.dir, 'read.db');
  const store = openSqliteReadStore(file, { busyTimeoutMs });
  const other = new Database(file);
  try {
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await run(store, other);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
    dir.remove();
  }
};

for (const [name, write] of Object.entries(writes)) {
  test(`${name} waits on a timer, then writes once the other connection commits`, () =>
    // Patience longer than the hold, short enough that a blocked thread fails the test quickly.
    withOtherConnection(2_000, async (store, other) => {
      await store.ensureCollection({ name: 'spare', indexes: [] });
      await store.upsert('docs', { id: 'a' });
      await store.commitBatch('p', [], null, { position: 1 });
      assert.ok(await store.acquireLease('held', 'me', 10_000));
      other.pragma('busy_timeout = 0');
      other.exec('BEGIN IMMEDIATE');
      let released = false;
      const release = setTimeout(() => {
        released = true;
        other.exec('COMMIT');
      }, 100);
      try {
        const started = performance.now();
        await write(store);
        assert.ok(released, 'the write finished before the other connection let go of the lock');
        assert.ok(performance.now() - started >= 90, 'the write waited for the other connection');
        assert.not.ok(other.inTransaction);
      } finally {
        clearTimeout(release);
      }
    }));
}

test('writes keep the order they were asked in: one asked while another waits goes after it', () =>
  withOtherConnection(2_000, async (store, other) => {
    other.exec('BEGIN IMMEDIATE');
    const first = store.upsert('docs', { id: 'd', v: 1 });
    // The first write now sleeps tens of milliseconds between its attempts; a write asked now would
    // try again within a few and, on its own, take the lock first once it is let go.
    await new Promise((resolve) => setTimeout(resolve, 80));
    const second = store.upsert('docs', { id: 'd', v: 2 });
    setTimeout(() => other.exec('COMMIT'), 3);
    await Promise.all([first, second]);
    assert.equal((await store.get('docs', 'd'))?.v, 2);
  }));

test('a write gives up after the busy timeout, leaving nothing written, and the store writes again afterwards', () =>
  withOtherConnection(300, async (store, other) => {
    other.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const started = performance.now();
    const failed = await store.upsert('docs', { id: 'x' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    clearInterval(ticker);
    assert.match(String((failed as Error | undefined)?.message), /locked|busy/i);
    assert.ok(performance.now() - started >= 280, 'it waited for its busy timeout');
    assert.ok(ticks >= 5, `timers ran while it waited (${ticks})`);
    other.exec('COMMIT');
    assert.equal(await store.get('docs', 'x'), null);
    await store.upsert('docs', { id: 'y' });
    assert.equal((await store.get('docs', 'y'))?.id, 'y');
  }));

test.run();
