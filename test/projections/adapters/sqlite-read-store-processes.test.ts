/**
 * Several processes opening one embedded read store at once (api and projector processes sharing a
 * data directory start together): every write transaction must take the write lock up front, or a
 * transaction that read first fails at once with "database is locked" instead of waiting its turn.
 */
import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
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

/** Runs `script` in six processes on `file` (each given its number), and answers what each ended with. */
const sixProcesses = async (script: string, file: string): Promise<string[]> => {
  const runs = Array.from({ length: 6 }, (_, k) =>
    new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, file, String(k)], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d) => (err += d));
      child.on('exit', (code) => resolve({ code, err }));
    }),
  );
  const results = await Promise.all(runs);
  return results.map((r) => (r.code === 0 ? 'ok' : r.err.split('\n').find((l) => /Error|locked/.test(l)) ?? `exit ${r.code}`));
};

test('six processes creating collections and writing on one fresh file all succeed', async () => {
  const tmp = tempDir('svc-rs-procs');
  try {
    assert.equal(await sixProcesses(WORKER, join(tmp.dir, 'read.db')), Array(6).fill('ok'));
  } finally {
    tmp.remove();
  }
});

// Each process declares a field of its own on the same collections while the others write to them:
// a writer made before another process added a column must write that column too.
const DECLARING = `
  const { openSqliteReadStore } = await import(${JSON.stringify(join(process.cwd(), 'src/projections/adapters/sqlite-read-store.ts'))});
  const store = openSqliteReadStore(process.argv[1]);
  const k = Number(process.argv[2]);
  for (let round = 0; round < 30; round++) {
    const name = 'shared' + (round % 3);
    // Each collection made once (as a projection does at start), and one field declared by each process later on.
    if (round === 3 * k + (k % 3)) await store.ensureCollection({ name, indexes: ['a', 'p' + k] });
    else if (round < 3) await store.ensureCollection({ name, indexes: ['a'] });
    const doc = (id) => ({ id, a: round, p0: k + round, p1: 'v' + round, p2: round % 2 === 0, p3: null, p4: { n: round }, p5: [k, round] });
    await store.bulkWrite(['x', 'y', 'p' + k].map((id) => ({ kind: 'put', collection: name, doc: doc(id) })));
    await store.upsert(name, doc('z'));
  }
  await store.close();
`;

test('processes declaring fields of the same collections while writing them keep every column equal to its document', async () => {
  const tmp = tempDir('svc-rs-procs');
  const file = join(tmp.dir, 'read.db');
  try {
    assert.equal(await sixProcesses(DECLARING, file), Array(6).fill('ok'));
    const db = new Database(file, { readonly: true });
    let checked = 0;
    for (const table of ['shared0', 'shared1', 'shared2']) {
      const columns = (db.prepare('SELECT name FROM pragma_table_xinfo(?)').all(table) as { name: string }[]).map((c) => c.name).filter((c) => c.startsWith('f_'));
      for (const c of columns) {
        const wrong = db.prepare(`SELECT id FROM "${table}" WHERE "${c}" IS NOT json_extract(doc, '$.${c.slice(2)}')`).all();
        assert.equal(wrong, [], `${table}.${c}`);
        checked++;
      }
    }
    db.close();
    assert.equal(checked, 9, 'a, and two fields of the processes in each table');
  } finally {
    tmp.remove();
  }
});

test.run();
