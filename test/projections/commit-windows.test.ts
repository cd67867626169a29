/**
 * Commit windows fit the store's bound of one transaction (ReadStore.maxBatch, in operations and
 * bytes): the runner's catch-up and a rebuild commit in pieces that end at event boundaries, each
 * moving the checkpoint, and the result is the same as in one piece.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../../src/projections/projector.ts';
import { writeOpBytes, type BatchLimit, type ReadStore, type WriteOp } from '../../src/projections/read-store.ts';
import { rebuildProjection } from '../../src/projections/rebuild.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { windowFull } from '../../src/projections/runner/commit-policy.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { verifyProjection } from '../../src/projections/verify.ts';
import { tempDir } from '../support/tmp.ts';

const items = (): Projector => ({
  name: 'items',
  collections: [{ name: 'items', indexes: [] }],
  handles: ['Noted'],
  apply: foldDocuments<{ id: string; notes: string[] }>(
    'items',
    (e) => e.stream,
    (doc, e: RecordedEvent) => ({ id: e.stream, notes: [...(doc?.notes ?? []), (e.data as { note: string }).note] }),
  ),
});

/** The store, with its bound replaced and every commit's operations recorded. */
const bounded = (reads: ReadStore, limit: BatchLimit, commits: { projection: string; ops: readonly WriteOp[] }[]) =>
  new Proxy(reads, {
    get(target, prop, receiver) {
      if (prop === 'maxBatch') return limit;
      // A rebuild writes through a fenced view of the store: bounded and recorded the same way.
      if (prop === 'fenced') return (leases: readonly string[], owner: string) => bounded(target.fenced(leases, owner), limit, commits);
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'commitBatch') {
        return (projection: string, ops: readonly WriteOp[], ...rest: unknown[]) => {
          commits.push({ projection, ops });
          return (value as (...a: unknown[]) => Promise<void>).apply(target, [projection, ops, ...rest]);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

const setup = async () => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 10 });
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  // 300 documents, each written by two events far apart in the log.
  for (const round of [0, 1]) {
    await events.appendMany(Array.from({ length: 300 }, (_, i) => ({ stream: `item-${i}`, events: [{ id: randomUUID(), type: 'Noted', data: { note: `round ${round} ${'x'.repeat(40)}` } }] })));
  }
  return { events, reads, close: async () => (await events.close(), await reads.close(), tmp.remove()) };
};

const test = suite('Commit windows within the store bound');

test('windowFull cuts a piece at half the bound, in operations or in bytes', () => {
  assert.not.ok(windowFull(4, 100, { ops: 10, bytes: 1000 }));
  assert.ok(windowFull(5, 100, { ops: 10, bytes: 1000 }));
  assert.ok(windowFull(1, 500, { ops: 10, bytes: 1000 }));
  assert.not.ok(windowFull(100_000, 1e9, { ops: Infinity, bytes: Infinity }));
});

for (const [label, limit] of [
  ['operations', { ops: 40, bytes: Number.POSITIVE_INFINITY }],
  ['bytes', { ops: Number.POSITIVE_INFINITY, bytes: 4_000 }],
] as const) {
  test(`the runner's catch-up commits in pieces within a bound in ${label}`, async () => {
    const c = await setup();
    const commits: { projection: string; ops: readonly WriteOp[] }[] = [];
    const runner = new ProjectionRunner({ events: c.events, reads: bounded(c.reads, limit, commits), projectors: [items()], batchSize: 500 });
    await runner.start();
    await runner.waitFor(await c.events.headPosition());
    await runner.stop();
    assert.ok(commits.length > 5, `pieces: ${commits.length}`);
    for (const { ops } of commits) {
      assert.ok(ops.length <= limit.ops, `ops ${ops.length}`);
      assert.ok(ops.reduce((n, op) => n + writeOpBytes(op), 0) <= limit.bytes, 'bytes');
    }
    assert.ok((await verifyProjection(c.events, c.reads, items())).ok);
    await c.close();
  });

  test(`a rebuild commits in pieces within a bound in ${label}`, async () => {
    const c = await setup();
    const commits: { projection: string; ops: readonly WriteOp[] }[] = [];
    const done = await rebuildProjection({ events: c.events, reads: bounded(c.reads, limit, commits), projector: items(), batchSize: 500 });
    assert.is(done.phase, 'done');
    const pieces = commits.filter((x) => x.projection === 'rebuild:items');
    assert.ok(pieces.length > 5, `pieces: ${pieces.length}`);
    for (const { ops } of pieces) {
      assert.ok(ops.length <= limit.ops, `ops ${ops.length}`);
      assert.ok(ops.reduce((n, op) => n + writeOpBytes(op), 0) <= limit.bytes, 'bytes');
    }
    assert.ok((await verifyProjection(c.events, c.reads, items())).ok);
    assert.is((await c.reads.get<{ id: string; notes: string[] }>('items', 'item-7'))?.notes.length, 2);
    await c.close();
  });
}

test.run();
