/**
 * The per-stream lock table and the locks one command holds: first come first served per stream,
 * several locks taken in sorted order (crossing sets never deadlock), loads that wait only when the
 * command holds nothing, lock waits bounded by a deadline, everything given back on release.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LockHolder, LockWaitTimeout, StreamLocks } from '../../../src/commands/appending/stream-locks.ts';

const test = suite('Stream locks');

/** Lets every pending promise continuation and immediate run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Fails instead of hanging when `promise` does not settle (a deadlock) within a generous bound. */
const within = <T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: did not settle within ${ms} ms`)), ms);
    }),
  ]);
};

test('one holder per stream; waiters get it in the order they came', async () => {
  const locks = new StreamLocks();
  const order: string[] = [];
  const first = new LockHolder(locks);
  await first.lockAll(['s']);
  const waiting = ['second', 'third', 'fourth'].map(async (name) => {
    const holder = new LockHolder(locks);
    await holder.lockAll(['s']);
    order.push(name);
    await turn();
    holder.release();
  });
  await turn();
  assert.equal(order, [], 'nobody gets it while it is held');
  first.release();
  await within(Promise.all(waiting), 'waiters');
  assert.equal(order, ['second', 'third', 'fourth']);
  assert.is(locks.size, 0, 'free once the last holder released it');
});

test('several locks are taken in sorted order, whatever order they are asked in', async () => {
  const locks = new StreamLocks();
  const blocker = new LockHolder(locks);
  await blocker.lockAll(['b']);
  const holder = new LockHolder(locks);
  const taking = holder.lockAll(['c', 'b', 'a', 'c']);
  await turn();
  assert.ok(holder.holds('a'), 'a first');
  assert.not.ok(holder.holds('b'));
  assert.not.ok(locks.isLocked('c'), 'c is not touched while waiting for b');
  blocker.release();
  await within(taking, 'lockAll');
  assert.ok(['a', 'b', 'c'].every((s) => holder.holds(s)));
  holder.release();
  assert.is(locks.size, 0);
});

test('crossing stream sets never deadlock, and no two holders ever hold one stream together', async () => {
  const locks = new StreamLocks();
  const streams = ['s0', 's1', 's2', 's3', 's4', 's5'];
  const inside = new Map<string, number>();
  let overlaps = 0;
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const worker = async (n: number) => {
    for (let round = 0; round < 40; round++) {
      // Each worker asks for a different, reversed or shuffled subset: sets cross all the time.
      const wanted = streams.filter(() => random() < 0.5);
      if (n % 2 === 0) wanted.reverse();
      const holder = new LockHolder(locks);
      await holder.lockAll(wanted);
      for (const s of wanted) {
        if ((inside.get(s) ?? 0) > 0) overlaps += 1;
        inside.set(s, (inside.get(s) ?? 0) + 1);
      }
      await turn();
      for (const s of wanted) inside.set(s, inside.get(s)! - 1);
      holder.release();
    }
  };
  await within(Promise.all(Array.from({ length: 12 }, (_, n) => worker(n))), '12 workers x 40 rounds');
  assert.is(overlaps, 0);
  assert.is(locks.size, 0);
});

test('a holder that holds nothing waits for a locked stream before loading it, and then holds it', async () => {
  const locks = new StreamLocks();
  const retrying = new LockHolder(locks);
  await retrying.lockAll(['object-a']);
  const loader = new LockHolder(locks);
  assert.is(loader.beforeLoad('object-b'), undefined, 'a free stream: no wait, no lock');
  assert.not.ok(loader.holds('object-b'));
  let loaded = false;
  const waiting = loader.beforeLoad('object-a')!.then(() => {
    loaded = true;
  });
  await turn();
  assert.not.ok(loaded, 'waits while the other holds it');
  retrying.release();
  await within(waiting, 'beforeLoad');
  assert.ok(loaded);
  assert.ok(loader.holds('object-a'));
  assert.ok(locks.isLocked('object-a'));
  loader.release();
  assert.is(locks.size, 0);
});

test('a holder that holds a lock never waits while loading (it loads optimistically)', async () => {
  const locks = new StreamLocks();
  const other = new LockHolder(locks);
  await other.lockAll(['object-b']);
  const holder = new LockHolder(locks);
  await holder.lockAll(['object-a']);
  assert.is(holder.beforeLoad('object-b'), undefined);
  assert.not.ok(holder.holds('object-b'));
  holder.release();
  other.release();
  assert.is(locks.size, 0);
});

test('a wait past the deadline fails with LockWaitTimeout, leaves the queue, and holds nothing', async () => {
  let now = 1000;
  const locks = new StreamLocks(() => now);
  const first = new LockHolder(locks);
  await first.lockAll(['s']);
  const late = new LockHolder(locks, now + 5);
  const patient = new LockHolder(locks);
  const lateTaking = late.lockAll(['a', 's']).then(
    () => 'taken',
    (e: unknown) => e,
  );
  const patientTaking = patient.lockAll(['s']);
  now += 10;
  const outcome = await within(lateTaking, 'deadline');
  assert.instance(outcome, LockWaitTimeout);
  assert.is((outcome as LockWaitTimeout).stream, 's');
  assert.not.ok(late.holds('a'), 'what it had taken is given back');
  assert.not.ok(locks.isLocked('a'));
  first.release();
  await within(patientTaking, 'the next waiter');
  assert.ok(patient.holds('s'), 'the lock went to the waiter after the one that left');
  patient.release();
  assert.is(locks.size, 0);
});

test('lockAll holding exactly the wanted streams keeps them; another set releases first', async () => {
  const locks = new StreamLocks();
  const holder = new LockHolder(locks);
  await holder.lockAll(['a', 'b']);
  const waiter = new LockHolder(locks);
  const waiting = waiter.lockAll(['a']);
  await holder.lockAll(['b', 'a']);
  await turn();
  assert.ok(holder.holds('a'), 'kept: the same set');
  await holder.lockAll(['b', 'c']);
  await within(waiting, 'the waiter');
  assert.ok(waiter.holds('a'), 'a new set: a was released and went to its waiter');
  assert.ok(holder.holds('b') && holder.holds('c'));
  assert.not.ok(holder.holds('a'));
  holder.release();
  waiter.release();
  assert.is(locks.size, 0);
});

test.run();
