/**
 * An `at` answer replays onto a view of the kept fold state, not a copy of it: the view reads the
 * kept state for whatever the replay leaves alone, keeps the replay's changes to itself, and reads
 * exactly as a copy would. Copying tens of thousands of entries per answer took about as long as
 * the replay.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import type { Doc } from '../../../src/projections/read-store.ts';
import { LazyDocMap } from '../../../src/projections/reporting/lazy-docs.ts';
import { latestSnapshot, loadSnapshot, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { ParsedSnapshotCache } from '../../../src/projections/reporting/parsed-snapshots.ts';
import { seededRandom } from '../../../bench/support.ts';
import { openSnapshotStore, snapshotStoreSuite } from '../../support/snapshot-store.ts';
import { countingParses } from '../../support/count-parses.ts';

/** Calls of Map.prototype.set (every Map, LazyDocMap's own entries too) while `body` runs. */
const countingMapSets = async <T>(body: () => Promise<T>): Promise<{ result: T; sets: number }> => {
  const original = Map.prototype.set;
  let sets = 0;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    sets++;
    return original.call(this, key, value);
  };
  try {
    return { result: await body(), sets };
  } finally {
    Map.prototype.set = original;
  }
};

const MARK = 'state-view-marker';
const doc = (id: string, version: number): Doc => ({ id, mark: MARK, version });

const stored = snapshotStoreSuite('state views: loading', 'svc-state-views');

stored('an answer from a kept state copies none of its documents, and changes to it stay its own', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const fold: Projector = { name: 'views', collections: [{ name: 'objects' }, { name: 'rows' }], apply: () => undefined };
  const n = 3000;
  const all = Array.from({ length: n }, (_, i) => ({ kind: 'put' as const, collection: i % 3 ? 'objects' : 'rows', doc: doc(`d${i}`, 0) }));
  await withSnapshots(fold, 1).afterBatch!({
    reads,
    last: { position: 10, recordedAt: new Date(Date.UTC(2024, 0, 1)) } as RecordedEvent,
    changes: all,
    state: async (c: string) => [all.filter((op) => op.collection === c).map((op) => op.doc)],
  });
  const meta = (await latestSnapshot(reads, 'views'))!;
  const kept = new ParsedSnapshotCache(64 * 2 ** 20);
  const first = await loadSnapshot(reads, kept, meta);
  // A replay's changes: one document replaced, one removed, one added.
  await first.put('objects', doc('d1', 1));
  first.delete('objects', 'd2');
  first.put('objects', doc('new', 1));

  const { result: second, sets } = await countingMapSets(() => loadSnapshot(reads, kept, meta));
  assert.ok(sets < 20, `${sets} Map entries set to load a kept state of ${n} documents`);
  // The second answer sees the kept state, not the first answer's replay.
  assert.equal(await second.get('objects', 'd1'), doc('d1', 0));
  assert.equal(await second.get('objects', 'd2'), doc('d2', 0));
  assert.is(await second.get('objects', 'new'), null);
  assert.equal(await first.get('objects', 'd1'), doc('d1', 1));
  assert.is(await first.get('objects', 'd2'), null);
  assert.equal(await first.get('objects', 'new'), doc('new', 1));
  assert.is(first.collections.get('objects')!.size, second.collections.get('objects')!.size);
  assert.is(second.collections.get('objects')!.size, 2000);
});

stored('a document is parsed once for every view of a kept state', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const fold: Projector = { name: 'parse', collections: [{ name: 'objects' }], apply: () => undefined };
  const all = Array.from({ length: 50 }, (_, i) => ({ kind: 'put' as const, collection: 'objects', doc: doc(`d${i}`, 0) }));
  await withSnapshots(fold, 1).afterBatch!({
    reads,
    last: { position: 5, recordedAt: new Date(Date.UTC(2024, 0, 1)) } as RecordedEvent,
    changes: all,
    state: async () => [all.map((op) => op.doc)],
  });
  const meta = (await latestSnapshot(reads, 'parse'))!;
  const kept = new ParsedSnapshotCache(64 * 2 ** 20);
  await countingParses(MARK, async (parsed) => {
    const a = await loadSnapshot(reads, kept, meta);
    const b = await loadSnapshot(reads, kept, meta);
    assert.equal(await a.get('objects', 'd7'), doc('d7', 0));
    assert.equal(await b.get('objects', 'd7'), doc('d7', 0));
    assert.is(parsed(), 1);
    // Iterating a view parses the rest once too, and the next view finds them parsed.
    assert.is([...b.collections.get('objects')!.values()].length, 50);
    const c = await loadSnapshot(reads, kept, meta);
    assert.is([...c.collections.get('objects')!.values()].length, 50);
    assert.is(parsed(), 50);
  });
});

stored.run();

const test = suite('state views: LazyDocMap.view');

/** A kept map of raw and parsed documents, and the same contents as a plain Map. */
const keptMap = (random: () => number) => {
  const kept = new LazyDocMap();
  const expected = new Map<string, Doc>();
  for (let i = 0; i < 200; i++) {
    const d = doc(`k${i}`, 0);
    kept.setRaw(d.id, JSON.stringify(d));
    expected.set(d.id, d);
  }
  // Some parsed already (an earlier answer read them).
  for (let i = 0; i < 200; i++) if (random() < 0.3) kept.get(`k${i}`);
  return { kept, expected };
};

test('a view reads as a copy would through any sequence of changes, and leaves the kept map as it was', () => {
  for (const seed of [1, 2, 3]) {
    const random = seededRandom(seed);
    const { kept, expected: before } = keptMap(random);
    const view = LazyDocMap.view(kept);
    const copy = new Map(before);
    const ids = [...Array(260).keys()].map((i) => `k${i}`);
    for (let step = 0; step < 400; step++) {
      const id = ids[Math.floor(random() * ids.length)]!;
      const r = random();
      if (r < 0.35) {
        const d = doc(id, step + 1);
        view.set(id, d);
        copy.set(id, d);
      } else if (r < 0.55) assert.is(view.delete(id), copy.delete(id), `delete ${id} at ${step}`);
      else if (r < 0.65) {
        const d = doc(id, -step);
        view.setRaw(id, JSON.stringify(d));
        copy.set(id, d);
      } else {
        assert.is(view.has(id), copy.has(id), `has ${id} at ${step}`);
        assert.equal(view.get(id), copy.get(id), `get ${id} at ${step}`);
        assert.equal(view.part(id, (json) => (JSON.parse(json) as Doc).version, (d) => d.version), copy.get(id)?.version, `part ${id} at ${step}`);
      }
    }
    const sorted = (m: Map<string, Doc>) => [...m].sort(([a], [b]) => a.localeCompare(b));
    assert.is(view.size, copy.size);
    assert.equal(sorted(view), sorted(copy));
    assert.equal(sorted(kept), sorted(before), 'the kept map is unchanged');
  }
});

test('copying a view copies what it shows; a cleared view reads nothing of the kept map', async () => {
  const random = seededRandom(9);
  const { kept, expected } = keptMap(random);
  const view = LazyDocMap.view(kept);
  view.delete('k1');
  view.set('k2', doc('k2', 5));
  const copy = await view.copy();
  expected.delete('k1');
  expected.set('k2', doc('k2', 5));
  assert.equal(new Map([...copy].sort(([a], [b]) => a.localeCompare(b))), new Map([...expected].sort(([a], [b]) => a.localeCompare(b))));
  copy.set('k3', doc('k3', 9));
  assert.equal(view.get('k3'), doc('k3', 0), 'the copy is its own');
  view.clear();
  assert.is(view.size, 0);
  assert.is(view.get('k4'), undefined, 'cleared: nothing read from the kept map');
  assert.equal(kept.get('k4'), doc('k4', 0));
});

test.run();
