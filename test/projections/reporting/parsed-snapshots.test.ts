import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteReadStore, type SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import type { Doc } from '../../../src/projections/read-store.ts';
import { ParsedSnapshotCache, stateBytes } from '../../../src/projections/reporting/parsed-snapshots.ts';
import { SNAPSHOTS, latestSnapshot, loadSnapshot, snapshotSpec, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { tempDir } from '../../support/tmp.ts';

const test = suite<{ dir: string; remove(): void; reads: SqliteReadStore }>('parsed snapshot cache', {} as never);
test.before.each(async (ctx) => {
  const tmp = tempDir('svc-parsed-snapshots');
  ctx.dir = tmp.dir;
  ctx.remove = tmp.remove;
  ctx.reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  await ctx.reads.ensureCollection(snapshotSpec);
});
test.after.each(async (ctx) => {
  await ctx.reads.close();
  ctx.remove();
});

const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;
const docsOf = (count: number, tag: string): Doc[] => Array.from({ length: count }, (_, i) => ({ id: `${tag}${i}`, text: `${tag} `.repeat(250) }));

test('fold states kept for at answers stay within the bound in bytes, least recently used dropped first; loads stay right', async (ctx) => {
  // Three unrelated full snapshots of about 1.2 MB of JSON each.
  const folds = ['a', 'b', 'c'].map((name): Projector => ({ name, collections: [{ name: 'docs' }], apply: () => undefined }));
  const states = new Map<string, Doc[]>();
  for (const [i, fold] of folds.entries()) {
    const docs = docsOf(2000, fold.name);
    states.set(fold.name, docs);
    await withSnapshots(fold, 1).afterBatch!({ reads: ctx.reads, last: event(10 + i), changes: [], state: async () => [docs] });
  }
  const metas = await ctx.reads.find<{ id: string; collection: string; position: number; recordedAt: string; chunks: number; chain: string[] }>(SNAPSHOTS, { where: { collection: { $in: ['a', 'b', 'c'] } } });
  const bound = 2.5 * 2 ** 20;
  const cache = new ParsedSnapshotCache(bound);
  for (const meta of metas) {
    const state = await loadSnapshot(ctx.reads, cache, meta);
    assert.equal([...state.collections.get('docs')!.values()], states.get(meta.collection));
    assert.ok(cache.bytes <= bound, `${cache.bytes} bytes held`);
  }
  assert.equal([...cache.keys()], metas.slice(1).map((m) => m.id), 'the least recently used state went first');
  // Every document was read (above): the kept state holds them parsed and their texts.
  const one = stateBytes(cache.get(metas[2]!.id)!);
  assert.ok(one > 2 * 2000 * 500 && one < 2 * 2000 * 700, `a state of 2,000 documents of about 580 bytes, read, counts ${one}`);
  // A hit is loaded from the kept state and becomes the most recently used; weighed again (its
  // documents now parsed as well), the bound still holds.
  await loadSnapshot(ctx.reads, cache, metas[1]!);
  assert.is([...cache.keys()].at(-1), metas[1]!.id);
  assert.ok(cache.bytes <= bound, `${cache.bytes} bytes held`);
});

test('a state larger than the bound alone is not kept', async (ctx) => {
  const fold: Projector = { name: 'big', collections: [{ name: 'docs' }], apply: () => undefined };
  const docs = docsOf(3000, 'big');
  await withSnapshots(fold, 1).afterBatch!({ reads: ctx.reads, last: event(10), changes: [], state: async () => [docs] });
  const [meta] = await ctx.reads.find<{ id: string; collection: string; position: number; recordedAt: string; chunks: number; chain: string[] }>(SNAPSHOTS, { where: { collection: 'big' } });
  const cache = new ParsedSnapshotCache(2 ** 20);
  const state = await loadSnapshot(ctx.reads, cache, meta!);
  assert.is(state.collections.get('docs')!.size, 3000);
  assert.is(cache.size, 0);
  assert.is(cache.bytes, 0);
});

test('a state loaded from a chain weighs the texts of the documents it keeps, not the chunks they were read from', async (ctx) => {
  // A full snapshot of 2,000 documents of about 520 characters (1 MB), then a delta on it that
  // replaces all but one of them by documents that are only an id.
  const fold: Projector = { name: 'over', collections: [{ name: 'docs' }], apply: () => undefined };
  const snapshots = withSnapshots(fold, 1);
  const big = docsOf(2000, 'o');
  await snapshots.afterBatch!({ reads: ctx.reads, last: event(10), changes: [], state: async () => [big] });
  const small = big.slice(1).map((d): Doc => ({ id: d.id }));
  const now = [big[0]!, ...small];
  await snapshots.afterBatch!({ reads: ctx.reads, last: event(20), changes: small.map((doc) => ({ kind: 'put', collection: 'docs', doc })), state: async () => [now] });
  const meta = (await latestSnapshot(ctx.reads, 'over'))!;
  assert.is(meta.chain.length, 2, 'a delta on the full snapshot');

  const cache = new ParsedSnapshotCache(64 * 2 ** 20);
  const state = await loadSnapshot(ctx.reads, cache, meta);
  // Nothing read yet: the kept state holds one large text and 1,999 small ones, besides its entries.
  const weight = stateBytes(cache.get(meta.id)!);
  assert.ok(weight < 2000 * 64 + 1999 * 16 + 1000, `the kept state weighs ${weight} bytes: the full snapshot's 1 MB of text is counted`);
  assert.equal(new Map([...state.collections.get('docs')!.entries()]), new Map(now.map((d) => [d.id, d])));
});

test.run();
