/**
 * A rebuild worker's heap is bounded in both generations by the service, not by Node's defaults.
 * Node 20 and 22 give a worker thread a 48 MB young generation; Node 24 (V8 13.6) allows 192 MB, and
 * a thread whose objects survive a scavenge or two before they are replaced, as a fold's documents
 * do, grows its new space to 128 MB there (on Node 20 this test passes with or without the bound).
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_REBUILD_CACHE_BYTES, rebuildMemory, REBUILD_YOUNG_GENERATION_MB } from '../../src/projections/rebuild.ts';

// Keeps the last 300,000 of a stream of small objects: most live through a scavenge or two, which
// is what makes V8 grow a young generation. Answers the largest new space (its capacity) seen, in megabytes.
const SURVIVING = `
const { parentPort } = require('node:worker_threads');
const v8 = require('node:v8');
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const kept = new Map();
let peak = 0;
let i = 0;
const step = () => {
  for (const end = i + 100000; i < end; i++) kept.set(i % 300000, { text: 'document ' + i, values: [i, i + 1, { at: i }] });
  peak = Math.max(peak, newSpace());
  if (i < 4000000) setImmediate(step);
  else parentPort.postMessage(peak / 2 ** 20);
};
step();
`;

test("a rebuild worker's young generation stays within its bound", async () => {
  const limits = rebuildMemory(DEFAULT_REBUILD_CACHE_BYTES).heap;
  assert.is(limits.maxYoungGenerationSizeMb, REBUILD_YOUNG_GENERATION_MB);
  const worker = new Worker(SURVIVING, { eval: true, resourceLimits: limits });
  const [peakMb] = (await once(worker, 'message')) as [number];
  await worker.terminate();
  assert.ok(peakMb <= REBUILD_YOUNG_GENERATION_MB, `new space grew to ${peakMb.toFixed(1)} MB on Node ${process.version}`);
});

test.run();
