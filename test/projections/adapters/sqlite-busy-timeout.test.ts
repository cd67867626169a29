import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';

// A rebuild worker's writes wait behind other connections' long commits (seconds each at a million
// events) instead of failing after the interactive 5 s: a service's catch-up by rebuild failed so.
const test = suite('SQLite read store: how long a write waits for another connection');

const HOLD_MS = 6_500;

/** Another process holding the write lock for HOLD_MS; resolves once it holds it. */
const holdWriteLock = (file: string) =>
  new Promise<{ done: Promise<void> }>((resolve, reject) => {
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(${JSON.stringify(file)});
      db.pragma('journal_mode = WAL');
      db.exec('BEGIN IMMEDIATE');
      process.stdout.write('held\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${HOLD_MS});
      db.exec('COMMIT');
      db.close();
    `;
    const child = spawn(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    const done = new Promise<void>((ok) => child.on('exit', () => ok()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve({ done });
    });
    child.on('error', reject);
  });

test('a store opened with a long busy timeout writes once the other commit ends; the default gives up', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-busy-'));
  const file = join(dir, 'read.db');
  try {
    const setup = openSqliteReadStore(file);
    await setup.ensureCollection({ name: 'docs', indexes: [] });
    await setup.close();

    const first = await holdWriteLock(file);
    const interactive = openSqliteReadStore(file);
    let failed: unknown;
    try {
      await interactive.upsert('docs', { id: 'a' });
    } catch (error) {
      failed = error;
    }
    await interactive.close();
    assert.match(String((failed as Error | undefined)?.message), /locked|busy/i, 'the default 5 s wait gives up before the other commit ends');
    await first.done;

    const second = await holdWriteLock(file);
    const patient = openSqliteReadStore(file, { busyTimeoutMs: 60_000 });
    await patient.upsert('docs', { id: 'b' });
    assert.equal((await patient.get('docs', 'b'))?.id, 'b');
    await patient.close();
    await second.done;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
