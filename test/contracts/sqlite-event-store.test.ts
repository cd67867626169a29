import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { suite } from 'uvu';
import { DuplicateEventIdError, WrongExpectedRevisionError } from '../../src/events/event-store.ts';
import { openSqliteEventStore, SqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { eventStoreContract } from './event-store.contract.ts';
import { tempDir } from '../support/tmp.ts';
import { collect } from '../support/async-iterables.ts';

const openFresh = async () => {
  const tmp = tempDir();
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  return { store, prefix: 'test-', close: async () => (await store.close(), tmp.remove()) };
};

eventStoreContract('embedded SQLite', openFresh, { openEmpty: openFresh, readsByStream: true }).run();

const ev = (type: string, id = randomUUID()) => ({ id, type, data: {} });

const test = suite('SQLite event store specifics');

test('an append is acknowledged only once it is on disk: WAL with synchronous=FULL, whoever opened the connection', async () => {
  const tmp = tempDir();
  const db = new Database(join(tmp.dir, 'events.db'));
  const store = new SqliteEventStore(db);
  await store.append('s', [ev('E0')]);
  assert.is(db.pragma('journal_mode', { simple: true }), 'wal');
  // 2 = FULL: in WAL mode every commit (each group commit of appends) syncs the log before it returns.
  assert.is(db.pragma('synchronous', { simple: true }), 2);
  await store.close();
  const opened = openSqliteEventStore(join(tmp.dir, 'events.db'));
  assert.is((await opened.headPosition()), 1);
  await opened.close();
  tmp.remove();
});

test('appendMany is atomic: a conflict on one stream writes nothing at all', async () => {
  const tmp = tempDir();
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  await store.append('b', [ev('B0')]);
  try {
    await store.appendMany([
      { stream: 'a', events: [ev('A0')], expectedRevision: 'no_stream' },
      { stream: 'b', events: [ev('B1')], expectedRevision: 'no_stream' },
    ]);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
  }
  assert.equal(await collect(store.readStream('a')), []);
  assert.is(await store.headPosition(), 1);
  await store.close();
  tmp.remove();
});

test('an event id reused for different content is refused, not silently dropped', async () => {
  const tmp = tempDir();
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const id = randomUUID();
  await store.append('x', [ev('X', id)]);
  for (const attempt of [
    () => store.append('y', [ev('X', id)]),
    () => store.append('x', [ev('Other', id)]),
    () => store.append('x', [ev('New'), ev('X', id)]),
  ]) {
    try {
      await attempt();
      assert.unreachable();
    } catch (e) {
      assert.instance(e, DuplicateEventIdError);
    }
  }
  assert.is(await store.headPosition(), 1);
  await store.close();
  tmp.remove();
});

test('recorded time never goes backwards, even when the clock does', async () => {
  const tmp = tempDir();
  let now = Date.UTC(2026, 0, 2);
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'), { clock: () => now });
  await store.append('s', [ev('A')]);
  now -= 60_000;
  await store.append('s', [ev('B')]);
  const [a, b] = await collect(store.readStream('s'));
  assert.ok(b!.recordedAt.getTime() >= a!.recordedAt.getTime());
  await store.close();
  tmp.remove();
});

test('each append of an appendMany reads the clock (one recorded time per append, in one transaction), on a file and in memory', async () => {
  const tmp = tempDir();
  for (const open of [() => openSqliteEventStore(join(tmp.dir, 'clock.db'), { clock }), () => openSqliteEventStore(':memory:', { clock })]) {
    ticks = 0;
    const store = open();
    await store.appendMany([0, 1, 2].map((i) => ({ stream: `c-${i}`, events: [ev('A'), ev('B')] })));
    const times = (await collect(store.readAll())).map((e) => e.recordedAt.getTime() - Date.UTC(2026, 0, 1));
    assert.equal(times, [0, 0, 1000, 1000, 2000, 2000]);
    await store.close();
  }
  tmp.remove();
});
let ticks = 0;
const clock = () => Date.UTC(2026, 0, 1) + 1000 * ticks++;

test('a subscription sees events appended by another connection to the same file', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  const reader = openSqliteEventStore(file, { pollIntervalMs: 20 });
  const writer = openSqliteEventStore(file);
  const seen: string[] = [];
  const sub = reader.subscribe({}, async (batch) => {
    seen.push(...batch.map((e) => e.type));
  });
  await writer.append('s', [ev('FromElsewhere')]);
  const deadline = Date.now() + 5000;
  while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  await sub.stop();
  assert.equal(seen, ['FromElsewhere']);
  await reader.close();
  await writer.close();
  tmp.remove();
});

test('a failed import leaves the store empty: one transaction for the whole log', async () => {
  const tmp = tempDir();
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  async function* log() {
    yield { id: randomUUID(), type: 'A', data: {}, metadata: {}, stream: 's', revision: 0, recordedAt: new Date('2024-01-01T00:00:00Z') };
    yield { id: randomUUID(), type: 'B', data: {}, metadata: {}, stream: 's', revision: 5, recordedAt: new Date('2024-01-01T00:00:01Z') };
  }
  try {
    await store.importEvents(log());
    assert.unreachable('the gap must fail the import');
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
  }
  assert.is(await store.headPosition(), 0);
  // Still usable, and still empty enough for a good import.
  const ok = await store.importEvents((async function* () {
    yield { id: randomUUID(), type: 'A', data: {}, metadata: {}, stream: 's', revision: 0, recordedAt: new Date('2024-01-01T00:00:00Z') };
  })());
  assert.equal(ok, { events: 1, head: 1 });
  await store.close();
  tmp.remove();
});

/** The events `store` hands a subscription from the start, once there are `count` (null if not within `ms`). */
const firstEvents = (store: SqliteEventStore, count: number, ms: number): Promise<string[] | null> =>
  new Promise((resolve) => {
    const seen: string[] = [];
    const timer = setTimeout(() => void sub.stop().then(() => resolve(null)), ms);
    const sub = store.subscribe({}, async (batch) => {
      for (const e of batch) seen.push(e.type);
      if (seen.length >= count) {
        clearTimeout(timer);
        // After subscribe has answered (the first batch is handed over before it does).
        setImmediate(() => void sub.stop().then(() => resolve(seen)));
      }
    });
  });

test('a subscription hears of another connection\'s appends as they commit, not at its next poll', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'events.db');
  // Polls far apart: only a cheap look at whether another connection committed can see the appends in time.
  const [reader, writer] = [openSqliteEventStore(file, { pollIntervalMs: 120_000 }), openSqliteEventStore(file)];
  try {
    await writer.append('s', [ev('E0')]);
    const first = firstEvents(reader, 1, 10_000);
    assert.equal(await first, ['E0']);
    // Now idle, with the file read to its end: the next appends come from the other connection only.
    const more = firstEvents(reader, 3, 10_000);
    await new Promise((r) => setTimeout(r, 50));
    await writer.append('s', [ev('E1')]);
    await writer.append('t', [ev('E2')]);
    assert.equal(await more, ['E0', 'E1', 'E2']);
    // And this store's own appends still reach it, with another connection's in between.
    const mixed = firstEvents(reader, 5, 10_000);
    await new Promise((r) => setTimeout(r, 50));
    await reader.append('u', [ev('E3')]);
    await writer.append('u', [ev('E4')], 0);
    assert.equal(await mixed, ['E0', 'E1', 'E2', 'E3', 'E4']);
  } finally {
    await reader.close();
    await writer.close();
    tmp.remove();
  }
});

test.run();
