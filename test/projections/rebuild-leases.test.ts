/**
 * A rebuild's leases: every write fenced by them, and kept through long steps. The end of a rebuild of several projections: their switches run one after another, and at 2M
 * events they outlast a lease TTL. The rebuild keeps its leases through them, and a projection
 * already switched in reads as rebuilt at once, not as a rebuild under way: a runner holding it
 * must not start that rebuild over while the others are still switching.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { foldDocuments, type Projector } from '../../src/projections/projector.ts';
import { LeaseLostError, type ReadStore } from '../../src/projections/read-store.ts';
import { keepRebuildLeases, readRebuilds, REBUILD_LEASE_TTLS, rebuildLease, rebuildProjections, rebuildUnderway } from '../../src/projections/rebuild.ts';
import { countedStores } from '../support/counted-stores.ts';

const TTL_MS = 200;
/** A projection lease's TTL, of which a rebuild's lease lasts REBUILD_LEASE_TTLS. */
const LEASE_TTL_MS = 50;

const counter = (name: string, afterRebuild?: (reads: ReadStore) => Promise<void>): Projector => ({
  name,
  collections: [{ name: `${name}_docs`, indexes: ['count'] }],
  handles: ['Counted'],
  apply: foldDocuments<{ id: string; count: number }>(
    `${name}_docs`,
    (e) => e.stream,
    (doc, e: RecordedEvent) => (void e, { id: e.stream, count: (doc?.count ?? 0) + 1 }),
  ),
  ...(afterRebuild ? { afterRebuild } : {}),
});

const setup = () => countedStores(5, 4);

const test = suite('rebuild leases');

test('a projection switched in is recorded done before the next one switches', async () => {
  const c = await setup();
  try {
    let seen: ReturnType<typeof readRebuilds> extends Promise<infer M> ? M : never = new Map();
    const second = counter('second', async (reads) => {
      seen = await readRebuilds(reads, ['first']);
    });
    const done = await rebuildProjections({ events: c.events, reads: c.reads, projectors: [counter('first'), second] });
    assert.is(done.phase, 'done');
    assert.ok(seen.has('first'), 'the first projection has a record');
    assert.not.ok(rebuildUnderway(seen.get('first')), `first reads as under way after its switch: ${JSON.stringify(seen.get('first'))}`);
    assert.is(seen.get('first')!.phase, 'done');
    assert.equal(await c.reads.get('first_docs', 's0'), { id: 's0', count: 4 });
  } finally {
    await c.close();
  }
});

test('a switch that fails part-way records the failure only on the projections whose switch had not ended', async () => {
  const c = await setup();
  try {
    const second = counter('second', async () => {
      throw new Error('retiring the old snapshots failed');
    });
    const outcome = await rebuildProjections({ events: c.events, reads: c.reads, projectors: [counter('first'), second, counter('third')] }).then(
      (p) => p.phase,
      (e: Error) => e.message,
    );
    assert.is(outcome, 'retiring the old snapshots failed');
    const records = await readRebuilds(c.reads, ['first', 'second', 'third']);
    assert.equal([records.get('first')?.phase, records.get('first')?.error], ['done', undefined], 'switched in before the failure');
    assert.is(records.get('second')?.error, 'retiring the old snapshots failed');
    assert.is(records.get('third')?.error, 'retiring the old snapshots failed');
    assert.equal(await c.reads.get('first_docs', 's0'), { id: 's0', count: 4 });
  } finally {
    await c.close();
  }
});

test('the leases are renewed between switches that together outlast their TTL', async () => {
  const c = await setup();
  try {
    let held: unknown = 'not looked';
    // The first switch takes three times a rebuild lease's TTL; the second looks at its own lease.
    const first = counter('first', () => new Promise((resolve) => setTimeout(resolve, 3 * REBUILD_LEASE_TTLS * LEASE_TTL_MS)));
    const second = counter('second', async (reads) => {
      held = (await reads.getLease(rebuildLease('second')))?.owner;
    });
    const done = await rebuildProjections({ events: c.events, reads: c.reads, projectors: [first, second], owner: 'me', leaseTtlMs: LEASE_TTL_MS, leaseRenewMs: LEASE_TTL_MS / 4 });
    assert.is(done.phase, 'done');
    assert.is(held, 'me', 'the second projection was switched in by a rebuild whose lease had lapsed');
  } finally {
    await c.close();
  }
});

test('a rebuild whose lease another process took over writes nothing more: no commit, no switch, no failure record', async () => {
  const c = await setup();
  try {
    let taken = false;
    // Part-way through the log another process takes the lease (as after a lapse the holder did not see).
    const tally: Projector = {
      ...counter('tally'),
      apply: async (e, docs) => {
        if (!taken && e.position >= 10) {
          taken = true;
          await c.reads.releaseLease(rebuildLease('tally'), 'holder');
          assert.ok(await c.reads.acquireLease(rebuildLease('tally'), 'thief', 60_000));
        }
        return counter('tally').apply(e, docs);
      },
    };
    // Renewing rarely, the holder learns of it only from the refused writes.
    const outcome = await rebuildProjections({ events: c.events, reads: c.reads, projectors: [tally], owner: 'holder', batchSize: 4, leaseTtlMs: 10_000, leaseRenewMs: 60_000 }).then(
      (p) => `went on to ${p.phase}`,
      (e: unknown) => e,
    );
    assert.instance(outcome, LeaseLostError, String(outcome));
    assert.ok(taken);
    assert.is(await c.reads.getCheckpoint('rebuild:tally'), null, 'no commit');
    assert.is(await c.reads.getCheckpoint('tally'), null, 'not switched in');
    assert.not.ok((await c.reads.listCollections()).includes('tally_docs'), 'nothing switched in');
    const record = (await readRebuilds(c.reads, ['tally'])).get('tally');
    assert.is(record?.error, undefined, 'the failure is not recorded over the new holder\'s record');
    assert.is((await c.reads.getLease(rebuildLease('tally')))?.owner, 'thief');
  } finally {
    await c.close();
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('kept from another thread, a rebuild lease outlives its TTL; never taken back from another owner', async () => {
  const c = await setup();
  try {
    assert.ok(await c.reads.acquireLease(rebuildLease('a'), 'me', TTL_MS));
    assert.ok(await c.reads.acquireLease(rebuildLease('b'), 'other', TTL_MS));
    const stop = keepRebuildLeases(c.reads, ['a', 'b', 'c'], 'me', TTL_MS, TTL_MS / 4);
    await sleep(3 * TTL_MS);
    assert.is((await c.reads.getLease(rebuildLease('a')))?.owner, 'me', 'kept past three TTLs');
    assert.is(await c.reads.getLease(rebuildLease('b')), null, "another owner's lease lapses as it would");
    assert.is(await c.reads.getLease(rebuildLease('c')), null, 'a lease never taken is not taken');
    assert.ok(await c.reads.acquireLease(rebuildLease('b'), 'thief', TTL_MS));
    await sleep(TTL_MS / 2);
    assert.is((await c.reads.getLease(rebuildLease('b')))?.owner, 'thief');
    stop();
    await sleep(2 * TTL_MS);
    assert.is(await c.reads.getLease(rebuildLease('a')), null, 'lapses once no longer kept');
  } finally {
    await c.close();
  }
});

test('a rebuild lease lasts REBUILD_LEASE_TTLS projection lease TTLs', async () => {
  const c = await setup();
  try {
    let remaining = -1;
    const probe = counter('probe', async (reads) => {
      remaining = (await reads.getLease(rebuildLease('probe')))?.remainingMs ?? -1;
    });
    await rebuildProjections({ events: c.events, reads: c.reads, projectors: [probe], leaseTtlMs: 1000, leaseRenewMs: 100 });
    assert.ok(remaining > 1000 && remaining <= REBUILD_LEASE_TTLS * 1000, `${remaining} ms left`);
  } finally {
    await c.close();
  }
});

test.run();
