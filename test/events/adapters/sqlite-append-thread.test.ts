/**
 * The embedded event store commits appends in a writer thread of its own: the event loop goes on
 * while a commit waits for the disk (or for another connection's lock), an acknowledged append is
 * committed and visible to every connection, concurrency and idempotency rules hold across many
 * callers, a stopped thread fails what it had not answered and the next append starts a new one,
 * and close() ends it.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DuplicateEventIdError, WrongExpectedRevisionError, type NewEvent } from '../../../src/events/event-store.ts';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { AppendThreadStoppedError, SqliteAppendThread } from '../../../src/events/adapters/sqlite-append-thread.ts';
import { tempDir } from '../../support/tmp.ts';
import { collect } from '../../support/async-iterables.ts';
import { until } from '../../support/wait.ts';

const ev = (type = 'E', id = randomUUID()): NewEvent => ({ id, type, data: { n: Math.random() } });

const childScript = fileURLToPath(new URL('./sqlite-append-child.ts', import.meta.url));
const runChild = (file: string, mode: string) => {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, file, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => out, err: () => err };
};

const test = suite('SQLite event store: appends committed in a writer thread');

test('while an append waits for the write lock the event loop keeps turning; once acknowledged another connection sees it', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  const store = openSqliteEventStore(file);
  await store.append('warm', [ev()]);
  // Another connection holds the write lock: the commit has to wait for it.
  const blocker = new Database(file);
  blocker.exec('BEGIN IMMEDIATE');
  const e = ev('Waited');
  let settled = false;
  const appending = store.append('s', [e]).finally(() => (settled = true));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  try {
    await until(() => ticks >= 10, 'ten timer ticks while the append waits');
    assert.not.ok(settled, 'not acknowledged while it cannot be committed');
    assert.is(await store.headPosition(), 1, 'nor visible');
  } finally {
    clearInterval(timer);
    blocker.exec('COMMIT');
  }
  const result = await appending;
  const other = new Database(file, { readonly: true });
  const row = other.prepare('SELECT position, stream, revision FROM events WHERE id = ?').get(e.id) as { position: number; stream: string; revision: number } | undefined;
  assert.equal(row, { position: result.position, stream: 's', revision: 0 }, 'another connection sees it as soon as the promise resolved');
  assert.is(await store.headPosition(), 2, "and so does the store's own read connection");
  other.close();
  blocker.close();
  await store.close();
  tmp.remove();
});

test('many callers at once: expected revisions still serialise each stream, idempotent retries answer the first result', async () => {
  const tmp = tempDir();
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const STREAMS = 6;
  const WRITERS = 5;
  const EACH = 4;
  const written: string[] = [];
  let conflicts = 0;
  // Each writer appends EACH events to its stream, one at a time, on the revision it read.
  const writer = async (stream: string) => {
    for (let i = 0; i < EACH; i++) {
      const e = ev();
      for (;;) {
        const [last] = await collect(store.readStream(stream, { direction: 'backwards', maxCount: 1 }));
        try {
          await store.append(stream, [e], last ? last.revision : 'no_stream');
          written.push(e.id!);
          break;
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError)) throw error;
          conflicts++;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: STREAMS * WRITERS }, (_, i) => writer(`w-${i % STREAMS}`)));
  assert.ok(conflicts > 0, 'writers of one stream did race');
  for (let s = 0; s < STREAMS; s++) {
    const events = await collect(store.readStream(`w-${s}`));
    assert.equal(events.map((e) => e.revision), Array.from({ length: WRITERS * EACH }, (_, i) => i), `w-${s}: dense revisions`);
  }
  const all = await collect(store.readAll());
  assert.is(all.length, STREAMS * WRITERS * EACH);
  assert.equal(new Set(all.map((e) => e.id)), new Set(written), 'every acknowledged append once, nothing else');

  // Ten callers create one stream at once: one wins, the others get the typed conflict.
  const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => store.append('created-once', [ev()], 'no_stream')));
  assert.is(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
  for (const o of outcomes) if (o.status === 'rejected') assert.instance(o.reason, WrongExpectedRevisionError);

  // The same append retried by several callers at once (same ids): every answer is the first one's.
  const batch = [ev('A'), ev('B')];
  const first = await store.append('retried', batch, 'no_stream');
  const head = await store.headPosition();
  const retries = await Promise.all(Array.from({ length: 8 }, () => store.append('retried', batch, 'no_stream')));
  for (const r of retries) assert.equal(r, first);
  assert.is(await store.headPosition(), head, 'a retry writes nothing');
  try {
    await store.append('elsewhere', [batch[0]!]);
    assert.unreachable('an id reused elsewhere is refused');
  } catch (error) {
    assert.instance(error, DuplicateEventIdError);
  }
  await store.close();
  tmp.remove();
});

test('a writer thread that stops fails the appends it had not answered; the next append starts a new one', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  const thread = new SqliteAppendThread(file);
  const store = openSqliteEventStore(file, { appendThread: thread });
  await store.append('before', [ev()]);
  assert.ok(thread.running);
  // Held by another connection, the lock keeps the thread inside its commit until it is killed.
  const blocker = new Database(file);
  blocker.exec('BEGIN IMMEDIATE');
  const lost = [ev('Lost'), ev('Lost')];
  const pending = [store.append('lost', lost), store.appendMany([{ stream: 'lost-too', events: [ev()] }])];
  const killed = thread.terminate();
  blocker.exec('COMMIT');
  await killed;
  for (const outcome of await Promise.allSettled(pending)) {
    assert.is(outcome.status, 'rejected');
    assert.instance((outcome as PromiseRejectedResult).reason, AppendThreadStoppedError);
  }
  assert.not.ok(thread.running);
  assert.is(await store.headPosition(), 1, 'the killed commit left nothing');
  // The store goes on: a new thread, and the failed append retried with its ids lands once.
  const retried = await store.append('lost', lost, 'no_stream');
  assert.equal(retried, { revision: 1, position: 3 });
  assert.ok(thread.running);
  assert.equal((await collect(store.readAll())).map((e) => e.stream), ['before', 'lost', 'lost']);
  blocker.close();
  await store.close();
  tmp.remove();
});

test('close() lets the thread answer what was posted, then ends it; later appends are refused', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  const thread = new SqliteAppendThread(file);
  const store = openSqliteEventStore(file, { appendThread: thread });
  const posted = Array.from({ length: 20 }, (_, i) => store.append(`c-${i}`, [ev()]));
  await store.close();
  assert.is((await Promise.all(posted)).length, 20, 'every append posted before close() was answered');
  assert.not.ok(thread.running);
  try {
    await thread.append([], []);
    assert.unreachable();
  } catch (error) {
    assert.match(String(error), /closed/);
  }
  const check = new Database(file, { readonly: true });
  assert.is((check.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n, 20);
  check.close();
  tmp.remove();
});

test('a process ends after close(), and after its last append even without close()', async () => {
  const tmp = tempDir();
  for (const mode of ['close', 'unclosed']) {
    const run = runChild(join(tmp.dir, `${mode}.db`), mode);
    const timeout = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
    const code = await run.exited;
    clearTimeout(timeout);
    assert.is(code, 0, `${mode}: exited by itself (${run.err()})`);
    assert.is(run.out(), `${mode} done\n`);
  }
  tmp.remove();
});

test('kill -9 while appends are in flight: every acknowledged append is in the file', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  const run = runChild(file, 'forever');
  try {
    await until(() => run.out().split('\n').length > 300, 'three hundred acknowledged appends', 60_000);
  } finally {
    run.child.kill('SIGKILL');
  }
  await run.exited;
  const acknowledged = run.out().split('\n').slice(0, -1);
  const db = new Database(file);
  const has = db.prepare('SELECT 1 FROM events WHERE id = ?');
  const missing = acknowledged.filter((id) => has.get(id) === undefined);
  assert.equal(missing, [], `${acknowledged.length} acknowledged`);
  db.close();
  tmp.remove();
});

test.run();
