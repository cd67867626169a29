import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../../src/projections/projector.ts';
import { ProjectionRunner, ProjectionTimeoutError } from '../../src/projections/runner.ts';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../support/tmp.ts';

interface Tally {
  id: string;
  count: number;
  seq: number[];
  [k: string]: unknown;
}

/** Counts events per stream and records their `n` in arrival order: duplicates and gaps both show. */
const tally = (options: { poison?: () => boolean; slow?: number } = {}): Projector => ({
  name: 'tally',
  collections: [{ name: 'tallies', indexes: ['count'] }],
  handles: ['Counted'],
  apply: foldDocuments<Tally>(
    'tallies',
    (e) => e.stream,
    (doc, e: RecordedEvent) => {
      const n = (e.data as { n: number; poison?: boolean }).n;
      if ((e.data as { poison?: boolean }).poison && options.poison?.()) throw new Error(`poisoned at ${n}`);
      return { id: e.stream, count: (doc?.count ?? 0) + 1, seq: [...(doc?.seq ?? []), n] };
    },
  ),
});

const counted = (n: number, poison = false) => ({ id: randomUUID(), type: 'Counted', data: { n, ...(poison ? { poison } : {}) } });

interface Ctx {
  events: SqliteEventStore;
  reads: SqliteReadStore;
  remove(): void;
}
const setup = (): Ctx => {
  const tmp = tempDir();
  return {
    events: openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 20 }),
    reads: openSqliteReadStore(join(tmp.dir, 'read.db')),
    remove: tmp.remove,
  };
};
const teardown = async (c: Ctx) => {
  await c.events.close();
  await c.reads.close();
  c.remove();
};

const test = suite('ProjectionRunner');

test('catches up in order over many batches, then follows live appends', async () => {
  const c = setup();
  for (let s = 0; s < 5; s++) {
    await c.events.append(`s${s}`, Array.from({ length: 300 }, (_, i) => counted(i)));
  }
  await c.events.append('other', [{ type: 'Ignored', data: {} }]);
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], batchSize: 64 });
  await runner.start();
  await runner.waitFor(await c.events.headPosition());
  for (let s = 0; s < 5; s++) {
    const doc = await c.reads.get<Tally>('tallies', `s${s}`);
    assert.is(doc?.count, 300);
    assert.equal(doc?.seq, Array.from({ length: 300 }, (_, i) => i));
  }
  const live = await c.events.append('s0', [counted(300)]);
  await runner.waitFor(live.position);
  assert.is((await c.reads.get<Tally>('tallies', 's0'))?.count, 301);
  const [status] = await runner.status();
  assert.equal(
    { ...status, lastError: undefined },
    { name: 'tally', state: 'live', checkpoint: live.position, head: live.position, lag: 0, lastError: undefined, lease: { owner: runner.owner, here: true } },
  );
  await runner.stop();
  assert.is((await runner.status())[0]?.state, 'stopped');
  await teardown(c);
});

test('a failing event leaves neither partial changes nor an advanced checkpoint, and is retried', async () => {
  const c = setup();
  let poisoned = true;
  await c.events.append('a', [counted(0), counted(1)]);
  const first = await c.events.append('b', [counted(0)]);
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally({ poison: () => poisoned })], batchSize: 3, retryDelayMs: 20 });
  await runner.start();
  // A full first batch waits for more to commit with; when none comes it still commits.
  await runner.waitFor(first.position);
  // One batch: a fine event for `c` followed by the poison for `a`.
  await c.events.appendMany([
    { stream: 'c', events: [counted(0)] },
    { stream: 'a', events: [counted(2, true)] },
  ]);
  const deadline = Date.now() + 5000;
  while ((await runner.status())[0]?.state !== 'failed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const failed = (await runner.status())[0]!;
  assert.is(failed.state, 'failed');
  assert.match(failed.lastError ?? '', 'poisoned at 2');
  assert.is(failed.checkpoint, first.position);
  assert.equal(await c.reads.getCheckpoint('tally'), { position: first.position });
  assert.is(await c.reads.get('tallies', 'c'), null, 'the good event of the failed batch must not be visible');
  assert.is((await c.reads.get<Tally>('tallies', 'a'))?.count, 2);

  poisoned = false;
  await runner.waitFor(await c.events.headPosition(), { timeoutMs: 5000 });
  assert.equal((await c.reads.get<Tally>('tallies', 'a'))?.seq, [0, 1, 2]);
  assert.equal((await c.reads.get<Tally>('tallies', 'c'))?.seq, [0]);
  assert.is((await runner.status())[0]?.state, 'live');
  await runner.stop();
  await teardown(c);
});

test('a restarted runner resumes from its checkpoint without applying anything twice', async () => {
  const c = setup();
  await c.events.append('s', Array.from({ length: 100 }, (_, i) => counted(i)));
  const one = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], batchSize: 7 });
  await one.start();
  await one.waitFor(await c.events.headPosition());
  await one.stop();
  await c.events.append('s', Array.from({ length: 50 }, (_, i) => counted(100 + i)));
  const two = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], batchSize: 7 });
  await two.start();
  await two.waitFor(await c.events.headPosition());
  assert.equal((await c.reads.get<Tally>('tallies', 's'))?.seq, Array.from({ length: 150 }, (_, i) => i));
  await two.stop();
  await teardown(c);
});

test('a failure in a catch-up window commits nothing of the window, later either', async () => {
  const c = setup();
  let poisoned = true;
  // Two full batches of 3: the second fails after folding its first event.
  await c.events.append('a', [counted(0), counted(1)]);
  await c.events.append('b', [counted(0)]);
  await c.events.appendMany([
    { stream: 'c', events: [counted(0)] },
    { stream: 'a', events: [counted(2, true)] },
    { stream: 'd', events: [counted(0)] },
  ]);
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally({ poison: () => poisoned })], batchSize: 3, retryDelayMs: 1000 });
  await runner.start();
  const deadline = Date.now() + 5000;
  while ((await runner.status())[0]?.state !== 'failed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.is((await runner.status())[0]?.state, 'failed');
  // Longer than the idle commit of an open window: still nothing committed.
  await new Promise((r) => setTimeout(r, 500));
  assert.is(await c.reads.getCheckpoint('tally'), null);
  assert.is(await c.reads.get('tallies', 'c'), null);
  assert.is(await c.reads.get('tallies', 'a'), null);
  poisoned = false;
  await runner.waitFor(await c.events.headPosition(), { timeoutMs: 5000 });
  assert.equal((await c.reads.get<Tally>('tallies', 'a'))?.seq, [0, 1, 2]);
  assert.equal((await c.reads.get<Tally>('tallies', 'c'))?.seq, [0]);
  await runner.stop();
  await teardown(c);
});

test('catch-up batches commit together: each document is written once per window, and the result is the same', async () => {
  const c = setup();
  for (let round = 0; round < 40; round++) {
    for (let s = 0; s < 3; s++) await c.events.append(`s${s}`, [counted(round)]);
  }
  let reads = 0;
  const counting = new Proxy(c.reads, {
    get: (target, prop, receiver) => {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'get') return (...args: unknown[]) => (reads++, (value as (...a: unknown[]) => unknown).apply(target, args));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const runner = new ProjectionRunner({ events: c.events, reads: counting, projectors: [tally()], batchSize: 10 });
  await runner.start();
  await runner.waitFor(await c.events.headPosition());
  for (let s = 0; s < 3; s++) assert.equal((await c.reads.get<Tally>('tallies', `s${s}`))?.seq, Array.from({ length: 40 }, (_, i) => i));
  // The three documents are read from the store once each, not once per batch of 10.
  assert.is(reads, 3);
  await runner.stop();
  await teardown(c);
});

test('stop lets the batch in progress commit', async () => {
  const c = setup();
  await c.events.append('s', Array.from({ length: 20 }, (_, i) => counted(i)));
  let entered: () => void = () => undefined;
  const inBatch = new Promise<void>((r) => (entered = r));
  const slow: Projector = {
    ...tally(),
    async apply(event, docs) {
      entered();
      await new Promise((r) => setTimeout(r, 5));
      await tally().apply(event, docs);
    },
  };
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [slow], batchSize: 20 });
  await runner.start();
  await inBatch;
  await runner.stop();
  const checkpoint = (await c.reads.getCheckpoint('tally'))?.position;
  assert.is(checkpoint, await c.events.headPosition());
  assert.is((await c.reads.get<Tally>('tallies', 's'))?.count, 20);
  await teardown(c);
});

test('waitFor gives up with a typed error naming the projections that lag', async () => {
  const c = setup();
  const stuck: Projector = { ...tally(), apply: () => new Promise(() => undefined) };
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [stuck] });
  await runner.start();
  const r = await c.events.append('s', [counted(0)]);
  try {
    await runner.waitFor(r.position, { timeoutMs: 50 });
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ProjectionTimeoutError);
    assert.equal((e as ProjectionTimeoutError).behind, ['tally']);
  }
  await c.events.close();
  await c.reads.close();
  c.remove();
});

test.run();
