import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { foldingAny, ProjectionTimeoutError, Waiters } from '../../../src/projections/runner/waiters.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** Checkpoints by name, counting how often they are looked at. */
const checkpoints = (initial: Record<string, number>) => {
  const at = new Map(Object.entries(initial));
  const looks = { count: 0 };
  return { at, looks, of: (name: string) => (looks.count++, at.get(name) ?? 0) };
};

const test = suite('runner waiters');

test('resolves at once when no named projection is behind', async () => {
  const c = checkpoints({ a: 5, b: 9 });
  await new Waiters().until(5, ['a', 'b'], c.of, 10_000);
});

test('waits until every named projection has reached the position, looking again on each wake', async () => {
  const c = checkpoints({ a: 1, b: 1, unnamed: 0 });
  const waiters = new Waiters();
  let settled = false;
  const waiting = waiters.until(5, ['a', 'b'], c.of, 10_000).then(() => (settled = true));
  c.at.set('a', 5);
  waiters.wake();
  await tick();
  assert.not.ok(settled, 'b is still behind');
  c.at.set('b', 7);
  await tick();
  assert.not.ok(settled, 'nothing looks again before a wake');
  waiters.wake();
  await waiting;
  assert.ok(settled);
});

test('gives up with a typed error naming the projections still behind', async () => {
  const c = checkpoints({ a: 3, b: 1 });
  try {
    await new Waiters().until(3, ['a', 'b'], c.of, 20);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, ProjectionTimeoutError);
    assert.is((e as ProjectionTimeoutError).position, 3);
    assert.equal((e as ProjectionTimeoutError).behind, ['b']);
  }
});

test('a settled waiter is no longer checked', async () => {
  const c = checkpoints({ a: 0, b: 0 });
  const waiters = new Waiters();
  const satisfied = waiters.until(1, ['a'], c.of, 10_000);
  const timedOut = waiters.until(1, ['b'], c.of, 10).catch((e: unknown) => e);
  assert.instance(await timedOut, ProjectionTimeoutError);
  c.at.set('a', 1);
  waiters.wake();
  await satisfied;
  const looks = c.looks.count;
  waiters.wake();
  assert.is(c.looks.count, looks);
});

test('with event types, only projections folding one of them are waited for', () => {
  const projectors = [{ name: 'all' }, { name: 'orders', handles: ['OrderPlaced'] }, { name: 'users', handles: ['UserAdded'] }];
  assert.equal(foldingAny(projectors, ['OrderPlaced']), ['all', 'orders']);
  assert.equal(foldingAny(projectors, ['Unknown']), ['all']);
  assert.equal(foldingAny(projectors), ['all', 'orders', 'users']);
});

test.run();
