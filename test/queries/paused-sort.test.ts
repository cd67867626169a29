/**
 * Sorting the refs of a large answer gives the event loop back as it goes: at most a run of
 * elements is compared between two pauses, and the order is Array.prototype.sort's.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { byCodeUnits, sortPaused } from '../../src/queries/paused-sort.ts';

const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

test('the order of Array.prototype.sort, for every length around the run size and a large one', async () => {
  const next = random(7);
  for (const n of [0, 1, 2, 511, 512, 513, 1024, 1025, 3000, 40_000]) {
    const items = Array.from({ length: n }, () => `r${Math.floor(next() * 1e9).toString(32)}`);
    const sorted = await sortPaused(items, byCodeUnits, async () => undefined);
    assert.equal(sorted, [...items].sort(), `n = ${n}`);
  }
});

test('equal elements keep their order', async () => {
  const items = Array.from({ length: 5000 }, (_, i) => ({ key: i % 7, i }));
  const sorted = await sortPaused(items, (a, b) => a.key - b.key, async () => undefined);
  for (let k = 1; k < sorted.length; k++) {
    const [a, b] = [sorted[k - 1]!, sorted[k]!];
    assert.ok(a.key < b.key || (a.key === b.key && a.i < b.i), `${JSON.stringify(a)} before ${JSON.stringify(b)}`);
  }
});

test('a bounded number of comparisons between two pauses, however many elements', async () => {
  const next = random(11);
  const items = Array.from({ length: 50_000 }, () => Math.floor(next() * 1e9).toString(36));
  let since = 0;
  let most = 0;
  let pauses = 0;
  const sorted = await sortPaused(
    items,
    (a, b) => {
      since++;
      return byCodeUnits(a, b);
    },
    async () => {
      pauses++;
      most = Math.max(most, since);
      since = 0;
    },
  );
  most = Math.max(most, since);
  assert.equal(sorted, [...items].sort());
  // A run of 512 sorted at once takes about 512 * log2(512) comparisons; a merge one per element.
  assert.ok(most <= 512 * 10, `${most} comparisons between two pauses`);
  assert.ok(pauses >= 50_000 / 512, `${pauses} pauses`);
});

test.run();
