/**
 * The benchmarks' latency figures hold for any number of samples: a two-worker rebuild at 2M events
 * timed more reads than a spread call takes arguments (Math.max(...samples) overflowed the stack).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { latencySummary } from '../../bench/domain-support.ts';

test('a summary of 2,000,000 samples: count, nearest-rank p50/p99 and max', () => {
  const samples = Array.from({ length: 2_000_000 }, (_, i) => (i * 7919) % 2_000_000);
  assert.equal(latencySummary(samples), { count: 2_000_000, p50Ms: 999_999, p99Ms: 1_979_999, maxMs: 1_999_999 });
});

test('no samples: NaN figures', () => {
  const s = latencySummary([]);
  assert.equal(s.count, 0);
  assert.ok(Number.isNaN(s.p50Ms) && Number.isNaN(s.maxMs));
});

test.run();
