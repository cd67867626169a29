import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openEngines } from '../../../src/app/engines.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { SqliteCheckpointThread } from '../../../src/drivers/sqlite-checkpoint-thread.ts';
import { openSqliteReadStore, type SqliteReadStore, type SqliteReadStoreOptions } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../../support/tmp.ts';

// SQLite checkpoints the log inside the commit that takes it past 1,000 pages, on the committing
// thread, and syncs the file: a service's projection commit so held every request for 170-410 ms.
// A store serving requests leaves its checkpoints to a thread of its own.
const test = suite('SQLite read store: the log checkpointed by a thread of its own');

/** About 6 MB of documents in one commit: well past the 1,000 pages (4 MB) that make a commit checkpoint. */
const bigCommit = Array.from({ length: 3000 }, (_, i) => ({ kind: 'put' as const, collection: 'docs', doc: { id: `d${i}`, text: `${i}`.padEnd(2000, 'x') } }));

const sizeMb = (file: string) => statSync(file).size / 2 ** 20;

/** A store opened with `options` on a new file, after one `bigCommit`, for `run`; closed and removed afterwards. */
const afterBigCommit = async (options: SqliteReadStoreOptions, run: (store: SqliteReadStore, file: string) => Promise<void>) => {
  const tmp = tempDir('svc-checkpoint');
  const file = join(tmp.dir, 'read.db');
  const store = openSqliteReadStore(file, options);
  try {
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.bulkWrite(bigCommit);
    await run(store, file);
  } finally {
    await store.close();
    tmp.remove();
  }
};

test('a commit past 1,000 pages leaves the log to the thread; the thread copies it all into the file', () =>
  // The thread's own timer never fires here: only the checkpoint asked for below runs.
  afterBigCommit({ checkpointEveryMs: 3_600_000 }, async (store, file) => {
    assert.ok(sizeMb(file) < 1, `the commit copied nothing into the file (${sizeMb(file).toFixed(1)} MB)`);
    const done = await store.checkpointNow();
    assert.is(done.busy, false);
    assert.ok(done.log > 1000, `the log held the commit (${done.log} frames)`);
    assert.is(done.checkpointed, done.log, 'every frame copied');
    assert.ok(sizeMb(file) > 5, `the file holds the documents (${sizeMb(file).toFixed(1)} MB)`);
    assert.is((await store.get<{ id: string; text: string }>('docs', 'd2999'))?.text.length, 2000);
  }),
);

test('on its timer, the thread checkpoints what the store committed', () =>
  afterBigCommit({ checkpointEveryMs: 20 }, async (store, file) => {
    // However slow the machine, the timer gets there: waited for, not timed.
    while (sizeMb(file) < 5) await new Promise((resolve) => setTimeout(resolve, 20));
    const after = await store.checkpointNow();
    assert.is(after.checkpointed, after.log);
  }),
);

test('a store without the option checkpoints in its own commits, as SQLite does', () =>
  afterBigCommit({}, async (_store, file) => {
    assert.ok(sizeMb(file) > 5, 'copied into the file by the commit');
  }),
);

test('engines opened with a checkpoint period (the service and projector give SERVING_CHECKPOINT_MS) leave checkpoints to the thread; without one, the commit checkpoints', async () => {
  for (const every of [3_600_000, undefined]) {
    const tmp = tempDir('svc-checkpoint');
    const engines = await openEngines(loadConfig({ SVC_DATA_DIR: tmp.dir }), every ? { readStoreCheckpointEveryMs: every } : {});
    try {
      await engines.reads.ensureCollection({ name: 'docs', indexes: [] });
      await engines.reads.bulkWrite(bigCommit);
      assert.is(sizeMb(join(tmp.dir, 'read.db')) < 1, every !== undefined, every ? 'left to the thread' : 'copied by the commit');
    } finally {
      await engines.close();
      tmp.remove();
    }
  }
});

test('a thread that cannot open its file says why, once, and answers no checkpoint', async () => {
  const tmp = tempDir('svc-checkpoint');
  try {
    const reasons: string[] = [];
    const stopped = new Promise<void>((resolve) => {
      const thread = new SqliteCheckpointThread(join(tmp.dir, 'missing.db'), 1000, (reason) => {
        reasons.push(reason);
        resolve();
      });
      void thread.now().then(
        () => reasons.push('answered'),
        () => undefined,
      );
    });
    await stopped;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(reasons.length, 1);
    assert.match(reasons[0]!, /CANTOPEN|unable to open|does not exist/i);
  } finally {
    tmp.remove();
  }
});

test('the file stays readable and writable by other connections while the thread checkpoints', () =>
  afterBigCommit({ checkpointEveryMs: 3_600_000 }, async (store, file) => {
    const other = new Database(file);
    try {
      // A reader holding a snapshot: a passive checkpoint copies only what no reader still needs, and does not wait.
      other.exec('BEGIN');
      assert.is((other.prepare('SELECT count(*) AS n FROM docs').get() as { n: number }).n, 3000);
      await store.bulkWrite([{ kind: 'put', collection: 'docs', doc: { id: 'late' } }]);
      const partial = await store.checkpointNow();
      assert.ok(partial.checkpointed < partial.log, 'the frames the reader may still need are left');
      other.exec('COMMIT');
      const full = await store.checkpointNow();
      assert.is(full.checkpointed, full.log);
    } finally {
      other.close();
    }
  }),
);

test.run();
