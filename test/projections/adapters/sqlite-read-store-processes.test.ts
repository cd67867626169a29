/**
 * Several processes opening one embedded read store at once (api and projector processes sharing a
 * data directory start together): every write transaction must take the write lock up front, or a
 * transaction that read first fails at once with "database is locked" instead of waiting its turn.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '../../support/tmp.ts';

const test = suite('SQLite read store: several processes at once');

const WORKER = `
  const { openSqliteReadStore } = await import(${JSON.stringify(join(process.cwd(), 'src/projections/adapters/sqlite-read-store.ts'))});
  const store = openSqliteReadStore(process.argv[1]);
  for (let i = 0; i < 40; i++) {
    await store.ensureCollection({ name: 'c' + i, indexes: ['a', 'b' + (i % 3)] });
    await store.upsert('c' + i, { id: 'x', a: i });
    await store.bulkWrite([{ kind: 'put', collection: 'c' + i, doc: { id: 'y', a: i } }]);
  }
  await store.close();
`;

test('six processes creating collections and writing on one fresh file all succeed', async () => {
  const tmp = tempDir('svc-rs-procs');
  const file = join(tmp.dir, 'read.db');
  try {
    const runs = Array.from({ length: 6 }, () =>
      new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WORKER, file], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        child.on('exit', (code) => resolve({ code, err }));
      }),
    );
    const results = await Promise.all(runs);
    assert.equal(results.map((r) => (r.code === 0 ? 'ok' : r.err.split('\n').find((l) => /Error|locked/.test(l)) ?? `exit ${r.code}`)), Array(6).fill('ok'));
  } finally {
    tmp.remove();
  }
});

test.run();
