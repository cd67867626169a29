/**
 * Where snapshot chunks are compressed: on the thread pool (the default, for threads serving
 * requests) or on the calling thread (a rebuild's workers), in the same bytes either way; a model
 * told how compresses every collection fold's snapshots so.
 */
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import { latestSnapshot, loadSnapshot, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { chunkText, deflateHere, deflateOnPool, encodeEntry, type Deflate } from '../../../src/projections/reporting/snapshot-chunks.ts';
import { loadAppModel } from '../../../src/app/app-model.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { openSnapshotStore, snapshotStoreSuite } from '../../support/snapshot-store.ts';

const test = snapshotStoreSuite('snapshot compression', 'svc-snapshot-deflate');

const docs = Array.from({ length: 3000 }, (_, i) => ({
  id: `p${(i * 7919).toString(36).padStart(11, '0')}`,
  title: `Person ${i} ${'Ω'.repeat(i % 3)}`,
  labels: ['svc:label:common'],
  attributes: { 'svc:attribute:job-title': [{ type: 'text', value: ['Reader', 'Lecturer', 'Professor'][i % 3] }] },
}));

const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;

/** A Deflate that counts its calls and compresses as `inner` does. */
const counting = (inner: Deflate) => {
  const calls = { n: 0 };
  const deflate: Deflate = (text) => {
    calls.n++;
    return inner(text);
  };
  return { calls, deflate };
};

test('on the calling thread a chunk is compressed into the same bytes as on the thread pool', async () => {
  const text = chunkText(docs.map((d) => encodeEntry(['objects', d.id, d])));
  const here = await deflateHere(text);
  const pool = await deflateOnPool(text);
  assert.ok(here.length < text.length / 4, `${here.length} bytes for ${text.length}`);
  assert.ok(here.equals(pool), `${here.length} bytes here, ${pool.length} on the pool`);
});

test('snapshots written with a given deflate use it for every chunk, and load back unchanged', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const fold: Projector = { name: 'people', collections: [{ name: 'objects' }], apply: () => undefined };
  const { calls, deflate } = counting(deflateHere);
  await withSnapshots(fold, 1, deflate).afterBatch!({ reads, last: event(10), changes: [], state: async () => [docs] });
  const meta = (await latestSnapshot(reads, 'people'))!;
  assert.ok(meta.chunks >= 1);
  assert.is(calls.n, meta.chunks);
  const state = await loadSnapshot(reads, new Map(), meta);
  assert.equal([...state.collections.get('objects')!.values()], docs);
});

test('a model made with a snapshot deflate compresses every collection fold’s snapshots with it', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const { calls, deflate } = counting(deflateOnPool);
  const folds = loadAppModel(loadConfig({ SVC_DATA_DIR: ctx.dir }), { snapshotDeflate: deflate }).projectors.filter((p) => p.name.startsWith('collection:'));
  assert.ok(folds.length >= 2, `${folds.length} collection folds`);
  for (const fold of folds) {
    const stored = fold.collections[0]!.name;
    await fold.afterBatch!({ reads, last: event(5000), changes: [], state: async (c) => [c === stored ? docs.slice(0, 10) : []] });
  }
  assert.is(calls.n, folds.length);
});

test.run();
