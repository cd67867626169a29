/**
 * FailureThrottle over a real embedded read store, two throttles on one store file standing for
 * two processes: counts are shared, the check of a request never waits for the store (the view of
 * other processes' blocks is refreshed in the background at most every refreshMs), past windows are
 * swept, and a store that cannot be written still slows a guesser down.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUTH_FAILURES, FailureThrottle } from '../../src/http/throttle.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('FailureThrottle shared through the read store');

/** A read store that counts the calls made to it. */
const counting = (inner: ReadStore) => {
  const calls: string[] = [];
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (...args: unknown[]) => (calls.push(String(prop)), v.apply(target, args)) : v;
    },
  });
  return { store, calls };
};

const settle = async (until: () => boolean) => {
  for (let i = 0; i < 200 && !until(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(until(), 'condition reached');
};

const setUp = () => {
  const tmp = tempDir('svc-throttle');
  const file = join(tmp.dir, 'read.db');
  const one = openSqliteReadStore(file);
  const two = openSqliteReadStore(file);
  let now = Date.parse('2024-08-01T12:00:00.000Z');
  const clock = { fn: () => now, advance: (ms: number) => (now += ms) };
  return { one, two, clock, close: async () => (await one.close(), await two.close(), tmp.remove()) };
};

test('checks never wait for the store: one background read per refresh interval, however many requests', async () => {
  const { one, clock, close } = setUp();
  try {
    const { store, calls } = counting(one);
    const throttle = new FailureThrottle(store, { scope: 'api-key', refreshMs: 1000, clock: clock.fn });
    for (let i = 0; i < 500; i++) assert.is(throttle.blockedFor('198.51.100.1'), 0);
    const finds = () => calls.filter((c) => c === 'find').length;
    // The first refresh reads the blocks and sweeps past windows (due once a window).
    await settle(() => finds() === 2);
    await new Promise((r) => setTimeout(r, 20));
    const afterFirst = calls.length;
    for (let i = 0; i < 500; i++) throttle.blockedFor(`198.51.100.${i % 250}`);
    assert.is(calls.length, afterFirst, 'no store call within the refresh interval');
    clock.advance(1000);
    throttle.blockedFor('198.51.100.1');
    await settle(() => finds() >= 3);
    await new Promise((r) => setTimeout(r, 20));
    assert.is(finds(), 3, 'one more read after the interval');
  } finally {
    await close();
  }
});

test('two processes count together; the one that did not see the failures learns of the block at its next failure or refresh', async () => {
  const { one, two, clock, close } = setUp();
  try {
    const a = new FailureThrottle(one, { scope: 'api-key', limit: 10, refreshMs: 1000, clock: clock.fn });
    const b = new FailureThrottle(two, { scope: 'api-key', limit: 10, refreshMs: 1000, clock: clock.fn });
    assert.is(b.blockedFor('203.0.113.7'), 0);
    for (let i = 0; i < 5; i++) assert.equal(await a.fail('203.0.113.7'), { blockedMs: 0, blockedBefore: false });
    for (let i = 0; i < 4; i++) assert.equal(await b.fail('203.0.113.7'), { blockedMs: 0, blockedBefore: false });
    clock.advance(5000);
    assert.equal(await b.fail('203.0.113.7'), { blockedMs: 55_000, blockedBefore: false }, 'the tenth failure blocks until the window ends');
    assert.is(b.blockedFor('203.0.113.7'), 55_000);
    assert.equal(await a.fail('203.0.113.7'), { blockedMs: 55_000, blockedBefore: true }, 'a failure on the other process finds the block');
    assert.is(a.blockedFor('203.0.113.7'), 55_000);

    const c = new FailureThrottle(one, { scope: 'api-key', limit: 10, refreshMs: 1000, clock: clock.fn });
    c.blockedFor('203.0.113.7');
    await settle(() => c.blockedFor('203.0.113.7') > 0);
    assert.is(c.blockedFor('203.0.113.7'), 55_000, 'a third process sees it after a refresh, without failing itself');
    assert.is(c.blockedFor('203.0.113.8'), 0, 'other clients are not blocked');
    const admin = new FailureThrottle(one, { scope: 'admin', limit: 10, clock: clock.fn });
    admin.blockedFor('203.0.113.7');
    await new Promise((r) => setTimeout(r, 50));
    assert.is(admin.blockedFor('203.0.113.7'), 0, 'scopes count apart');

    clock.advance(55_000);
    assert.is(a.blockedFor('203.0.113.7'), 0, 'the window ended');
    assert.is(b.blockedFor('203.0.113.7'), 0);
    await settle(() => c.blockedFor('203.0.113.7') === 0);
    // The refresh after a window has passed sweeps its documents.
    clock.advance(60_000);
    c.blockedFor('x');
    const left = async () => (await one.find(AUTH_FAILURES)).length;
    for (let i = 0; i < 200 && (await left()) > 0; i++) await new Promise((r) => setTimeout(r, 5));
    assert.is(await left(), 0, 'past windows are removed');
  } finally {
    await close();
  }
});

test('a store that cannot be written: failures are still counted in the process', async () => {
  const { one, clock, close } = setUp();
  try {
    await one.close();
    const throttle = new FailureThrottle(one, { scope: 'api-key', limit: 3, clock: clock.fn });
    assert.is((await throttle.fail('192.0.2.1')).blockedMs, 0);
    assert.is((await throttle.fail('192.0.2.1')).blockedMs, 0);
    assert.is((await throttle.fail('192.0.2.1')).blockedMs, 60_000);
    assert.is(throttle.blockedFor('192.0.2.1'), 60_000);
  } finally {
    await close().catch(() => undefined);
  }
});

test.run();
