import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BusyError, ReplayLimiter } from '../../src/queries/replay-limit.ts';
import { toHttpError } from '../../src/http/errors.ts';

const test = suite('ReplayLimiter: a bound on replays running and waiting');

const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

test('runs at most `concurrency` at once, queues `queue` more in order, refuses the rest at once', async () => {
  const limiter = new ReplayLimiter(2, 3);
  const gates = Array.from({ length: 8 }, gate);
  const order: number[] = [];
  const results = gates.map((g, i) =>
    limiter.run(async () => {
      order.push(i);
      await g.opened;
      return i;
    }).then((v) => ({ v }), (e: unknown) => ({ e })),
  );
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(limiter.active, 2);
  assert.is(limiter.queued, 3);
  for (const i of [5, 6, 7]) {
    const r = (await results[i]) as { e?: unknown };
    assert.instance(r.e, BusyError);
  }
  assert.equal(order, [0, 1]);
  for (const g of gates) g.open();
  const done = await Promise.all(results.slice(0, 5));
  assert.equal(done.map((r) => (r as { v: number }).v), [0, 1, 2, 3, 4]);
  assert.equal(order, [0, 1, 2, 3, 4]);
  assert.is(limiter.active, 0);
  assert.is(limiter.queued, 0);
});

test('a failing task frees its slot', async () => {
  const limiter = new ReplayLimiter(1, 0);
  await limiter.run(async () => Promise.reject(new Error('boom'))).catch(() => undefined);
  assert.is(await limiter.run(async () => 'next'), 'next');
});

test('a refusal is a 503 with Retry-After, kind svc:api:busy', () => {
  const http = toHttpError(new BusyError('Too many', 1))!;
  assert.is(http.status, 503);
  assert.is(http.kind, 'svc:api:busy');
  assert.equal(http.headers, { 'Retry-After': '1' });
});

test.run();
