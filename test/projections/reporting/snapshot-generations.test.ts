/**
 * Snapshots belong to one generation of their projection (each rebuild switched in starts the
 * next): an `at` answer never starts from a snapshot of a state that a switch replaced, whether the
 * process that switched died before handing the rebuilt snapshots over, or a live fold saw the switch
 * between two of its snapshots; and a rebuild started over from nothing hands over nothing of what an
 * abandoned run of it snapshotted.
 */
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import type { Doc, WriteOp } from '../../../src/projections/read-store.ts';
import { rebuildProjections } from '../../../src/projections/rebuild.ts';
import { SNAPSHOTS, latestSnapshot, loadSnapshot, snapshotSpec, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { countedStores } from '../../support/counted-stores.ts';
import { openSnapshotStore, snapshotStoreSuite } from '../../support/snapshot-store.ts';

const test = snapshotStoreSuite('snapshot generations', 'svc-snapshot-generations');

const fold: Projector = { name: 'collection:things', collections: [{ name: 'things' }], apply: () => undefined };
const rebuilding = { physical: (c: string) => `${c}__rebuild` };

const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;
const things = (version: string, ids: readonly string[]): Doc[] => ids.map((id) => ({ id, version }));
const puts = (docs: readonly Doc[]): WriteOp[] => docs.map((doc) => ({ kind: 'put', collection: 'things', doc }));

/** A fold counting the events it folds (one document: `all`). */
const counter: Projector = {
  name: 'collection:counted',
  collections: [{ name: 'counts' }],
  apply: async (_, docs) => {
    const doc = await docs.get<{ id: string; n: number }>('counts', 'all');
    docs.put('counts', { id: 'all', n: (doc?.n ?? 0) + 1 });
  },
};

/** A switch of the projection with nothing to rename: its checkpoint moves to `position`, with the next generation. */
const switchIn = (reads: SqliteReadStore, position: number) => reads.swapIn([], fold.name, { position }, `rebuild:${fold.name}`);

const loaded = async (reads: SqliteReadStore, at: Date) => {
  const meta = await latestSnapshot(reads, fold.name, at);
  assert.ok(meta, 'a snapshot to start from');
  const state = await loadSnapshot(reads, new Map(), meta!);
  return [...(state.collections.get('things')?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id));
};

test('a rebuild switched in whose process died before handing its snapshots over: `at` starts from the rebuilt snapshots, not the replaced ones', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const ids = ['a', 'b', 'c'];
  // The live fold (generation 0) and the rebuild that replaces it (generation 1) both snapshot position 10.
  await withSnapshots(fold, 1).afterBatch!({ reads, last: event(10), changes: [], generation: 0, state: async () => [things('old', ids)] });
  await withSnapshots(fold, 1).afterBatch!({ reads, last: event(10), changes: [], generation: 1, rebuild: rebuilding, state: async () => [things('rebuilt', ids)] });
  await switchIn(reads, 10);
  // afterRebuild never ran: the replaced snapshots are still under the projection's own name.
  assert.equal(await loaded(reads, event(15).recordedAt), things('rebuilt', ids));

  // Once handed over, the same answer.
  await withSnapshots(fold, 1).afterRebuild!(reads);
  assert.equal(await loaded(reads, event(15).recordedAt), things('rebuilt', ids));
});

test('a live fold that sees its projection switched between two snapshots starts a new chain: never a delta on the replaced state', async (ctx) => {
  const reads = await openSnapshotStore(ctx);
  const live = withSnapshots(fold, 10);
  const before = things('old', ['a', 'b', 'c', 'd']);
  await live.afterBatch!({ reads, after: 0, last: event(10), changes: puts(before), generation: 0, state: async () => [before] });
  const changed = things('old', ['a']).map((d) => ({ ...d, n: 2 }));
  await live.afterBatch!({ reads, after: 10, last: event(20), changes: puts(changed), generation: 0, state: async () => [[...changed, ...before.slice(1)]] });
  assert.equal((await reads.get<{ id: string; chain: string[] }>(SNAPSHOTS, `${fold.name}@20`))?.chain.length, 2, 'a delta while nothing was switched');

  // A rebuild switched in at the position the live fold had reached: its next batch follows on from
  // the last it saw, but folds the rebuilt state (here: two documents, of another version).
  await switchIn(reads, 20);
  const rebuilt = things('rebuilt', ['a', 'e']);
  await live.afterBatch!({ reads, after: 20, last: event(30), changes: puts(rebuilt.slice(1)), generation: 1, state: async () => [rebuilt] });
  const meta = await reads.get<{ id: string; chain: string[] }>(SNAPSHOTS, `${fold.name}@30`);
  assert.equal(meta?.chain, [`${fold.name}@30`], 'a full copy');
  assert.equal(await loaded(reads, event(35).recordedAt), rebuilt);
});

test('a rebuild snapshots the generation it switches in: found by `at` before they are handed over', async () => {
  const c = await countedStores(3, 4);
  try {
    await c.reads.ensureCollection(snapshotSpec);
    // The process dies after the switch, before the hand-over.
    const { afterRebuild: _, ...snapshotted } = withSnapshots(counter, 4);
    await rebuildProjections({ events: c.events, reads: c.reads, projectors: [snapshotted], batchSize: 4 });
    const meta = await latestSnapshot(c.reads, counter.name);
    assert.ok(meta?.id.startsWith(`rebuild:${counter.name}@`), meta?.id);
    const state = await loadSnapshot(c.reads, new Map(), meta!);
    assert.equal([...state.collections.get('counts')!.values()], [{ id: 'all', n: 12 }]);
  } finally {
    await c.close();
  }
});

test('a rebuild that starts from nothing drops what an abandoned run of it snapshotted: none of it is handed over', async () => {
  // One event a second: an instant names one position.
  let clock = Date.UTC(2024, 0, 1);
  const c = await countedStores(12, 1, () => (clock += 1000));
  const { events, reads } = c;
  try {
    await reads.ensureCollection(snapshotSpec);
    const positionAt = async (p: number) => (await events.readAll({ after: p - 1, maxCount: 1 })[Symbol.asyncIterator]().next()).value as RecordedEvent;
    // An earlier run (another version of the fold) snapshotted position 8 and died before committing anything.
    await withSnapshots(counter, 4).afterBatch!({ reads, last: await positionAt(8), changes: [], generation: 1, rebuild: rebuilding, state: async () => [[{ id: 'all', n: 999 }]] });
    await rebuildProjections({ events, reads, projectors: [withSnapshots(counter, 4)], batchSize: 2 });
    const at = (await positionAt(10)).recordedAt;
    const meta = await latestSnapshot(reads, counter.name, at);
    const state = meta ? await loadSnapshot(reads, new Map(), meta) : undefined;
    assert.equal([...(state?.collections.get('counts')?.values() ?? [])], [{ id: 'all', n: meta?.position }], `${meta?.id}`);
  } finally {
    await c.close();
  }
});

test.run();
