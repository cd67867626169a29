/**
 * Loading a snapshot for an `at` answer parses documents only when they are read: an answer reads
 * the rows and the objects they mention, not the whole fold state, and a chain's older versions of
 * a document (overridden by a later delta) are never parsed at all. The state reads the same.
 */
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import type { Doc, WriteOp } from '../../../src/projections/read-store.ts';
import { latestSnapshot, loadSnapshot, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { eachDoc } from '../../../src/projections/reporting/lazy-docs.ts';
import { ParsedSnapshotCache } from '../../../src/projections/reporting/parsed-snapshots.ts';
import { InflateThread } from '../../../src/projections/reporting/inflate-thread.ts';
import { seededRandom } from '../../../bench/support.ts';
import { openSnapshotStore, snapshotStoreSuite } from '../../support/snapshot-store.ts';
import { countingParses, countingTexts } from '../../support/count-parses.ts';

const test = snapshotStoreSuite('snapshot lazy load', 'svc-snapshot-lazy');
const open = openSnapshotStore;

const fold: Projector = { name: 'lazy', collections: [{ name: 'objects' }, { name: 'rows' }], apply: () => undefined };
const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;

/** Test documents carry it; chunk documents hold them compressed. */
const MARK = 'lazy-doc-marker';

const doc = (collection: string, i: number, version: number): Doc => ({ id: `${collection[0]}${i}`, mark: MARK, version, tags: [collection, `t${i % 7}`], note: `naïve "q" \\ ${i}\t\n` });

test('documents are parsed when read, overridden versions never; the state reads as folded', async (ctx) => {
  const reads = await open(ctx);
  const random = seededRandom(5);
  const snapshots = withSnapshots(fold, 1);
  // The fold's state as it stands after each batch, kept in plain maps.
  const state = new Map<string, Map<string, Doc>>(fold.collections.map((c) => [c.name, new Map()]));
  let position = 0;
  const batch = async (changes: WriteOp[]) => {
    for (const op of changes) {
      if (op.kind === 'put') state.get(op.collection)!.set(op.doc.id, op.doc);
      else if (op.kind === 'delete') state.get(op.collection)!.delete(op.id);
    }
    position += 10;
    await snapshots.afterBatch!({ reads, last: event(position), changes, state: async (c: string) => [[...state.get(c)!.values()]] });
  };
  await batch(Array.from({ length: 400 }, (_, i) => ({ kind: 'put', collection: i % 2 ? 'rows' : 'objects', doc: doc(i % 2 ? 'rows' : 'objects', i, 0) }) as WriteOp));
  // Deltas: documents changed again and again, some deleted, a few created.
  for (let v = 1; v <= 6; v++) {
    const changes: WriteOp[] = [];
    for (let k = 0; k < 40; k++) {
      const i = Math.floor(random() * 420);
      const collection = i % 2 ? 'rows' : 'objects';
      if (random() < 0.15) changes.push({ kind: 'delete', collection, id: `${collection[0]}${i}` });
      else changes.push({ kind: 'put', collection, doc: doc(collection, i, v) });
    }
    await batch(changes);
  }
  const meta = (await latestSnapshot(reads, 'lazy'))!;
  assert.ok(meta.chain.length > 3, `a chain of ${meta.chain.length}`);

  await countingParses(MARK, async (parsed) => {
    // Kept for later answers too (weighing what is kept parses nothing either).
    const kept = new ParsedSnapshotCache(64 * 2 ** 20);
    const loaded = await loadSnapshot(reads, kept, meta);
    assert.is(parsed(), 0, 'nothing parsed by loading');
    const some = [...state.get('objects')!.values()].slice(0, 5);
    for (const d of some) assert.equal(await loaded.get('objects', d.id), d);
    assert.is(await loaded.get('objects', 'o999'), null);
    assert.is(parsed(), 5, 'one parse per document read');
    // The next answer from the kept state reads the documents parsed for this one.
    const again = await loadSnapshot(reads, kept, meta);
    for (const d of some) assert.equal(await again.get('objects', d.id), d);
    assert.is(parsed(), 5, 'parsed once for every answer from the kept state');
    // Everything, compared with the state folded in memory.
    for (const [collection, docs] of state) {
      const got = loaded.collections.get(collection)!;
      assert.is(got.size, docs.size, collection);
      assert.equal(new Map([...got].sort(([a], [b]) => a.localeCompare(b))), new Map([...docs].sort(([a], [b]) => a.localeCompare(b))), collection);
    }
    assert.is(parsed(), [...state.values()].reduce((n, m) => n + m.size, 0), 'each document parsed once, older versions never');
  });
});

/**
 * Each document's text stays where the chunk was decompressed to (off the heap) until it is read:
 * as strings, a state's texts were what the collector copied while a chain loaded, for documents
 * an answer mostly never reads.
 */
test("loading makes no string of a document's text; reading one makes its own", async (ctx) => {
  const reads = await open(ctx);
  const snapshots = withSnapshots(fold, 1);
  const docs = Array.from({ length: 300 }, (_, i) => doc('objects', i, 0));
  await snapshots.afterBatch!({ reads, last: event(10), changes: docs.map((d) => ({ kind: 'put', collection: 'objects', doc: d }) as WriteOp), state: async () => [docs] });
  const changed = docs.slice(0, 40).map((d) => ({ ...d, version: 1 }));
  await snapshots.afterBatch!({ reads, last: event(20), changes: [...changed.map((d) => ({ kind: 'put', collection: 'objects', doc: d }) as WriteOp), { kind: 'delete', collection: 'objects', id: 'o299' }], state: async () => [[...changed, ...docs.slice(40, 299)]] });
  const meta = (await latestSnapshot(reads, 'lazy'))!;
  assert.is(meta.chain.length, 2);
  await countingTexts(MARK, async (texts) => {
    const loaded = await loadSnapshot(reads, new ParsedSnapshotCache(64 * 2 ** 20), meta);
    assert.is(texts(), 0, 'no document text made a string by loading');
    assert.equal(await loaded.get('objects', 'o3'), changed[3]);
    assert.equal(await loaded.get('objects', 'o100'), docs[100]);
    assert.is(await loaded.get('objects', 'o299'), null);
    assert.is(texts(), 2, 'one string per document read');
    assert.is(loaded.collections.get('objects')!.size, 299);
  });
});

test('a chain loaded through the decompression thread is the state loaded on the event loop', async (ctx) => {
  const reads = await open(ctx);
  const snapshots = withSnapshots(fold, 1);
  const random = seededRandom(11);
  const state = new Map<string, Map<string, Doc>>(fold.collections.map((c) => [c.name, new Map()]));
  for (let v = 0, position = 10; v < 5; v++, position += 10) {
    const changes: WriteOp[] = [];
    for (let k = 0; k < (v === 0 ? 5000 : 300); k++) {
      const i = v === 0 ? k : Math.floor(random() * 5200);
      const collection = i % 2 ? 'rows' : 'objects';
      if (v > 0 && random() < 0.2) changes.push({ kind: 'delete', collection, id: `${collection[0]}${i}` });
      else changes.push({ kind: 'put', collection, doc: doc(collection, i, v) });
    }
    for (const op of changes) {
      if (op.kind === 'put') state.get(op.collection)!.set(op.doc.id, op.doc);
      else state.get(op.collection)!.delete(op.id);
    }
    await snapshots.afterBatch!({ reads, last: event(position), changes, state: async (c: string) => [[...state.get(c)!.values()]] });
  }
  const meta = (await latestSnapshot(reads, 'lazy'))!;
  assert.ok(meta.chain.length >= 3 && meta.chunks >= 1, `a chain of ${meta.chain.length}`);
  const thread = new InflateThread();
  try {
    const here = await loadSnapshot(reads, new Map(), meta);
    const there = await loadSnapshot(reads, new Map(), meta, undefined, undefined, thread.inflate);
    const sorted = (docs: ReadonlyMap<string, Doc>) => [...docs].sort(([a], [b]) => a.localeCompare(b));
    for (const [collection, docs] of state) {
      assert.equal(sorted(there.collections.get(collection)!), sorted(docs), collection);
      assert.equal(sorted(there.collections.get(collection)!), sorted(here.collections.get(collection)!), collection);
    }
  } finally {
    await thread.close();
  }
});

/**
 * Loading gives the event loop back as it goes (an `at` answer loads while object GETs wait):
 * the chain's entries are applied, a kept state copied and derived documents made a slice at a
 * time, with the answer's pause between slices.
 */
test('loading calls the pause between slices: a slice of entries applied, of rows parsed to derive from', async (ctx) => {
  const reads = await open(ctx);
  const derivedFold: Projector = { ...fold, derived: { collections: [], derive: (state, pause) => eachDoc(state.collections.get('rows') ?? new Map(), () => undefined, pause) } };
  const snapshots = withSnapshots(derivedFold, 1);
  const collectionOf = (i: number) => (i % 2 ? 'rows' : 'objects');
  const docs = Array.from({ length: 6000 }, (_, i) => doc(collectionOf(i), i, 0));
  const changes = docs.map((d, i) => ({ kind: 'put', collection: collectionOf(i), doc: d }) as WriteOp);
  const byCollection = (c: string) => docs.filter((_, i) => collectionOf(i) === c);
  await snapshots.afterBatch!({ reads, last: event(10), changes, state: async (c: string) => [byCollection(c)] });
  const meta = (await latestSnapshot(reads, 'lazy'))!;
  await countingParses(MARK, async (parsed) => {
    let pauses = 0;
    let most = 0;
    let since = 0;
    const pause = async () => {
      pauses++;
      most = Math.max(most, parsed() - since);
      since = parsed();
    };
    const loaded = await loadSnapshot(reads, new ParsedSnapshotCache(64 * 2 ** 20), meta, derivedFold.derived, pause);
    most = Math.max(most, parsed() - since);
    assert.is(parsed(), 3000, 'every row parsed to derive from');
    assert.ok(most <= 128, `${most} rows parsed between two pauses`);
    assert.ok(pauses >= Math.floor(6000 / 1024) + Math.floor(3000 / 128), `${pauses} pauses`);
    assert.equal(await loaded.get('objects', 'o42'), docs[42]);
  });
});

test.run();
