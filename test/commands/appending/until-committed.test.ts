/**
 * The retry policy of commands under contention: bounded by time, not by a count; the first
 * retry at once and holding the locks of what it writes; conflicts while holding them (from
 * outside the process) after a jittered, growing back-off; ContentionTimeout past the bound;
 * locks given back whatever happens. And runCommand on it: parallel commands on one stream all land.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { StreamLocks } from '../../../src/commands/appending/stream-locks.ts';
import { ContentionTimeout, untilCommitted, type Attempt } from '../../../src/commands/appending/until-committed.ts';
import { runCommand } from '../../../src/commands/appending/run-command.ts';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../../src/events/event-store.ts';
import type { Decider } from '../../../src/domain/decider.ts';
import type { EventDecoder } from '../../../src/events/decode.ts';
import { tempDir } from '../../support/tmp.ts';

const test = suite('Retrying commands under contention');

const conflict = (stream: string) => new WrongExpectedRevisionError(stream, 1, 2);

/** A fake clock and sleep: sleeping moves the clock; every delay is recorded. */
const fakeTime = (random = () => 1) => {
  const time = { now: 0, slept: [] as number[] };
  return {
    time,
    policy: {
      now: () => time.now,
      sleep: async (ms: number) => {
        time.slept.push(ms);
        time.now += ms;
      },
      random,
    },
  };
};

test('no count bound: 30 conflicts in a row, then the commit lands', async () => {
  const { policy, time } = fakeTime();
  const locks = new StreamLocks();
  let attempts = 0;
  const result = await untilCommitted({ ...policy, locks, timeoutMs: 1_000_000 }, async (attempt) => {
    attempts += 1;
    assert.is(attempt.number, attempts);
    attempt.writes(['object-a']);
    if (attempts <= 30) throw conflict('object-a');
    return 'committed';
  });
  assert.is(result, 'committed');
  assert.is(attempts, 31);
  assert.is(time.slept.length, 29, 'every retry but the first (which took the locks) backed off');
  assert.is(locks.size, 0, 'locks given back');
});

test('the first retry runs at once holding every written stream; later ones back off, jittered, growing, capped', async () => {
  const draws = [0.5, 1, 1, 1, 1, 1, 1, 1, 1, 1];
  const { policy, time } = fakeTime(() => draws.shift() ?? 1);
  const locks = new StreamLocks();
  const held: boolean[] = [];
  let attempts = 0;
  await untilCommitted({ ...policy, locks, timeoutMs: 1_000_000 }, async (attempt) => {
    attempts += 1;
    held.push(locks.isLocked('object-a') && locks.isLocked('dependent-x'));
    attempt.writes(['object-a', 'dependent-x']);
    if (attempts <= 10) throw conflict('dependent-x');
    return undefined;
  });
  assert.equal(held, [false, true, true, true, true, true, true, true, true, true, true], 'optimistic first, then locked');
  // Full jitter over min(250, 2 * 2^n): the first draw was 0.5.
  assert.equal(time.slept, [2, 8, 16, 32, 64, 128, 250, 250, 250]);
  assert.is(locks.size, 0);
});

test('past the time bound a conflict throws ContentionTimeout naming the streams, and the locks are released', async () => {
  const { policy, time } = fakeTime();
  const locks = new StreamLocks();
  let attempts = 0;
  const outcome = await untilCommitted({ ...policy, locks, timeoutMs: 100 }, async (attempt) => {
    attempts += 1;
    attempt.writes(['object-b', 'object-a']);
    throw conflict('object-a');
  }).catch((e: unknown) => e);
  assert.instance(outcome, ContentionTimeout);
  assert.equal((outcome as ContentionTimeout).streams, ['object-b', 'object-a']);
  assert.is((outcome as ContentionTimeout).timeoutMs, 100);
  assert.ok(attempts > 2);
  assert.ok(time.now >= 100 && time.now <= 100, `the last back-off is cut at the bound (${time.now})`);
  assert.is(locks.size, 0);
});

test('any other error ends it at once, and the locks are released', async () => {
  const { policy } = fakeTime();
  const locks = new StreamLocks();
  let attempts = 0;
  const outcome = await untilCommitted({ ...policy, locks, timeoutMs: 1000 }, async (attempt) => {
    attempts += 1;
    attempt.writes(['object-a']);
    if (attempts === 1) throw conflict('object-a');
    throw new Error('boom');
  }).catch((e: unknown) => e);
  assert.is((outcome as Error).message, 'boom');
  assert.is(attempts, 2);
  assert.is(locks.size, 0);
});

test('a load of a stream another command holds waits for it; a lock not had within the bound is ContentionTimeout', async () => {
  const locks = new StreamLocks();
  let release!: () => void;
  const holding = untilCommitted({ locks, timeoutMs: 60_000 }, async (attempt: Attempt) => {
    if (attempt.number === 1) {
      attempt.writes(['object-a']);
      throw conflict('object-a');
    }
    // Second attempt: holds object-a until released.
    await new Promise<void>((r) => (release = r));
    return 'first';
  });
  while (!locks.isLocked('object-a')) await new Promise((r) => setImmediate(r));
  const impatient = await untilCommitted({ locks, timeoutMs: 1 }, async (attempt) => {
    const waiting = attempt.beforeLoad('object-a');
    assert.ok(waiting, 'told to wait');
    await waiting;
    return 'loaded';
  }).catch((e: unknown) => e);
  assert.instance(impatient, ContentionTimeout);
  const order: string[] = [];
  const patient = untilCommitted({ locks, timeoutMs: 60_000 }, async (attempt) => {
    await attempt.beforeLoad('object-a');
    order.push('patient loads');
    return 'second';
  });
  await new Promise((r) => setImmediate(r));
  order.push('holder commits');
  release();
  assert.equal(await Promise.all([holding, patient]), ['first', 'second']);
  assert.equal(order, ['holder commits', 'patient loads']);
  assert.is(locks.size, 0);
});

test('without a lock table every conflict backs off', async () => {
  const { policy, time } = fakeTime();
  let attempts = 0;
  await untilCommitted({ ...policy, timeoutMs: 1000 }, async () => {
    attempts += 1;
    if (attempts <= 3) throw conflict('s');
    return undefined;
  });
  assert.equal(time.slept, [4, 8, 16]);
});

// ---------------------------------------------------------------------------------------------
// runCommand

interface Counted {
  readonly count: number;
}
type Incremented = { readonly type: 'Incremented'; readonly data: { readonly by: string } };
const counter: Decider<{ by: string }, Counted | null, Incremented> = {
  initialState: null,
  decide: (command) => [{ type: 'Incremented', data: { by: command.by } }],
  evolve: (state) => ({ count: (state?.count ?? 0) + 1 }),
};
const decode: EventDecoder = <E extends { type: string; data: unknown }>(e: RecordedEvent) => ({ type: e.type, data: e.data }) as E;

test('runCommand: 40 parallel commands on one stream all land, one event each, in turn', async () => {
  const tmp = tempDir('svc-until-committed');
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  try {
    const locks = new StreamLocks();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => runCommand({ events, decode, locks, waitTimeoutMs: 60_000 }, 'counter-1', counter, { by: `c${i}` }, {})),
    );
    assert.ok(results.every((r) => r.appended === 1));
    const counts = results.map((r) => r.state!.count).sort((a, b) => a - b);
    assert.equal(counts, Array.from({ length: 40 }, (_, i) => i + 1), 'each decided on the state the one before it left');
    let written = 0;
    for await (const _ of events.readStream('counter-1')) written += 1;
    assert.is(written, 40);
    assert.is(locks.size, 0);
  } finally {
    await events.close();
    tmp.remove();
  }
});

test('runCommand: a stream that keeps conflicting ends in ContentionTimeout, having written nothing', async () => {
  const tmp = tempDir('svc-until-committed');
  const store = openSqliteEventStore(join(tmp.dir, 'events.db'));
  let refused = 0;
  const events: EventStore = Object.create(store, {
    append: {
      value: async () => {
        refused += 1;
        throw conflict('counter-2');
      },
    },
  });
  try {
    const outcome = await runCommand({ events, decode, locks: new StreamLocks(), waitTimeoutMs: 50 }, 'counter-2', counter, { by: 'x' }, {}).catch((e: unknown) => e);
    assert.instance(outcome, ContentionTimeout);
    assert.ok(refused >= 2, `retried (${refused})`);
    let written = 0;
    for await (const _ of store.readStream('counter-2')) written += 1;
    assert.is(written, 0);
  } finally {
    await store.close();
    tmp.remove();
  }
});

test.run();
