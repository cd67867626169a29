/**
 * A rebuild cut short by a crash (recorded as under way, with its checkpoint and copies in the
 * store) is resumed and switched in by the runner that takes the projection; copies left by one
 * that never committed anything are dropped; one the operator interrupted is left for them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { foldDocuments, type Projector } from '../../src/projections/projector.ts';
import { readRebuilds, rebuildCheckpoint, rebuildProjection } from '../../src/projections/rebuild.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { verifyProjection } from '../../src/projections/verify.ts';
import { countedStores } from '../support/counted-stores.ts';

const tally = (): Projector => ({
  name: 'tally',
  collections: [{ name: 'tallies', indexes: ['count'] }],
  handles: ['Counted'],
  apply: foldDocuments<{ id: string; count: number }>(
    'tallies',
    (e) => e.stream,
    (doc, e: RecordedEvent) => (void e, { id: e.stream, count: (doc?.count ?? 0) + 1 }),
  ),
});

const setup = () => countedStores(20, 10);

const until = async (what: string, check: () => Promise<boolean>) => {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** A rebuild stopped after its first page, as a service shutting down (or dying) leaves it. */
const halfDone = async (c: Awaited<ReturnType<typeof setup>>, resumeAfterStop: boolean) => {
  const controller = new AbortController();
  const first = await rebuildProjection({ events: c.events, reads: c.reads, projector: tally(), batchSize: 30, signal: controller.signal, resumeAfterStop, onProgress: () => controller.abort() });
  assert.is(first.phase, 'interrupted');
  assert.ok((await c.reads.getCheckpoint(rebuildCheckpoint('tally')))!.position > 0);
  assert.ok((await c.reads.listCollections()).includes('tallies__rebuild'));
};

const test = suite('Rebuilds left half-done');

test('one left under way is resumed and switched in when a runner takes the projection', async () => {
  const c = await setup();
  await halfDone(c, true);
  assert.is((await readRebuilds(c.reads, ['tally'])).get('tally')?.phase, 'building');
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], leaseTtlMs: 1000, leaseRenewMs: 100 });
  await runner.start();
  await until('the rebuild is done', async () => (await readRebuilds(c.reads, ['tally'])).get('tally')?.phase === 'done');
  assert.is(await c.reads.getCheckpoint(rebuildCheckpoint('tally')), null);
  assert.not.ok((await c.reads.listCollections()).includes('tallies__rebuild'));
  await runner.waitFor(await c.events.headPosition());
  assert.ok((await verifyProjection(c.events, c.reads, tally())).ok);
  assert.is((await runner.status())[0]?.state, 'live');
  await runner.stop();
  await c.close();
});

test('copies left by a rebuild that committed nothing are dropped; one the operator interrupted stays for them to resume', async () => {
  const c = await setup();
  await c.reads.ensureCollection({ name: 'tallies__rebuild', indexes: ['count'] });
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], leaseTtlMs: 1000, leaseRenewMs: 100 });
  await runner.start();
  assert.not.ok((await c.reads.listCollections()).includes('tallies__rebuild'), 'dropped at start');
  await runner.stop();

  await halfDone(c, false);
  const again = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [tally()], leaseTtlMs: 1000, leaseRenewMs: 100 });
  await again.start();
  await new Promise((r) => setTimeout(r, 400));
  assert.is((await readRebuilds(c.reads, ['tally'])).get('tally')?.phase, 'interrupted');
  assert.ok(await c.reads.getCheckpoint(rebuildCheckpoint('tally')), 'left for the operator');
  assert.is((await again.status())[0]?.state, 'rebuilding');
  await again.stop();
  await c.close();
});

test.run();
