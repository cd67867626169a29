/**
 * A projection that has never committed and lies far behind the head catches up by a rebuild of
 * all such projections in one pass (documents in memory, each written once) instead of the live
 * fold's per-window rewrites, then folds live from the rebuilt position. Near the head, or once
 * committed, it folds live as before.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../../../src/projections/projector.ts';
import { readRebuilds, type RebuildProgress } from '../../../src/projections/rebuild.ts';
import { ProjectionRunner, type RebuildLauncher } from '../../../src/projections/runner.ts';
import { rebuildProjections } from '../../../src/projections/rebuild.ts';
import { openSqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../../support/tmp.ts';

const tally = (name: string, collection: string): Projector => ({
  name,
  collections: [{ name: collection }],
  handles: ['Counted'],
  apply: foldDocuments<{ id: string; count: number }>(
    collection,
    (e) => e.stream,
    (doc, e: RecordedEvent) => ({ id: e.stream, count: (doc?.count ?? 0) + 1 }),
  ),
});

const setup = async () => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 10 });
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  for (let s = 0; s < 30; s++) await events.append(`s${s}`, Array.from({ length: 10 }, () => ({ id: randomUUID(), type: 'Counted', data: {} })));
  const projectors = [tally('a', 'tally_a'), tally('b', 'tally_b')];
  const launched: string[][] = [];
  const launch: RebuildLauncher = (ps, o): Promise<RebuildProgress> => {
    launched.push(ps.map((p) => p.name));
    return rebuildProjections({ events, reads, projectors: ps, resumeAfterStop: true, batchSize: 50, ...o });
  };
  return {
    events,
    reads,
    projectors,
    launched,
    launch,
    close: async () => {
      await events.close();
      await reads.close();
      tmp.remove();
    },
  };
};

const counts = async (reads: ReturnType<typeof openSqliteReadStore>, collection: string) =>
  (await reads.find<{ id: string; count: number }>(collection)).reduce((n, d) => n + d.count, 0);

const test = suite('catch-up by rebuild');

test('projections never committed and far behind are rebuilt together, then fold live', async () => {
  const s = await setup();
  const runner = new ProjectionRunner({ events: s.events, reads: s.reads, projectors: s.projectors, launchRebuild: s.launch, catchUpByRebuild: 100, batchSize: 20 });
  try {
    await runner.start();
    await runner.waitFor(300, { timeoutMs: 30_000 });
    assert.equal(s.launched, [['a', 'b']], 'one rebuild of both');
    const records = await readRebuilds(s.reads, ['a', 'b']);
    assert.is(records.get('a')?.phase, 'done');
    assert.is(records.get('b')?.phase, 'done');
    assert.is((await s.reads.getCheckpoint('a'))?.generation, 1, 'switched in');
    assert.is(await counts(s.reads, 'tally_a'), 300);
    assert.is(await counts(s.reads, 'tally_b'), 300);
    // Live from there on.
    await s.events.append('s0', [{ id: randomUUID(), type: 'Counted', data: {} }]);
    await runner.waitFor(301, { timeoutMs: 30_000 });
    assert.is(await counts(s.reads, 'tally_a'), 301);
    assert.is(await counts(s.reads, 'tally_b'), 301);
    assert.is(s.launched.length, 1);
  } finally {
    await runner.stop();
    await s.close();
  }
});

test('near the head, or once committed, a projection folds live', async () => {
  const s = await setup();
  const near = new ProjectionRunner({ events: s.events, reads: s.reads, projectors: s.projectors, launchRebuild: s.launch, catchUpByRebuild: 1000 });
  try {
    await near.start();
    await near.waitFor(300, { timeoutMs: 30_000 });
  } finally {
    await near.stop();
  }
  assert.equal(s.launched, []);
  for (let i = 0; i < 200; i++) await s.events.append('s1', [{ id: randomUUID(), type: 'Counted', data: {} }]);
  const committed = new ProjectionRunner({ events: s.events, reads: s.reads, projectors: s.projectors, launchRebuild: s.launch, catchUpByRebuild: 100 });
  try {
    await committed.start();
    await committed.waitFor(500, { timeoutMs: 30_000 });
    assert.equal(s.launched, [], 'committed projections are never rebuilt to catch up');
    assert.is(await counts(s.reads, 'tally_a'), 500);
  } finally {
    await committed.stop();
    await s.close();
  }
});

test.run();
