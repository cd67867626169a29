import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import { ProjectionRunner } from '../../../src/projections/runner.ts';
import { countedReadStore } from '../../support/counted-transactions.ts';
import { tempDir } from '../../support/tmp.ts';

// A push's event changes the objects projection and the reporting collections that show the object:
// each commits its documents and checkpoint. They now ask for their commits in one turn, and the
// embedded read store commits them as one transaction instead of one each.
const test = suite('runner: the projections a live batch changes commit in one transaction');

/** Counts events per stream, from memory when it holds the document (as the app's projections do): no promise. */
const counter = (name: string): Projector => ({
  name,
  collections: [{ name: `${name}_counts`, indexes: [] }],
  handles: ['Counted'],
  apply(event, docs) {
    const put = (doc: { count?: number } | null) => void docs.put(`${name}_counts`, { id: event.stream, count: (doc?.count ?? 0) + 1 });
    const held = docs.peek?.<{ id: string; count: number }>(`${name}_counts`, event.stream);
    if (held !== undefined) return put(held);
    return docs.get<{ id: string; count: number }>(`${name}_counts`, event.stream).then(put);
  },
});

test('three projections, one live event: one BEGIN and one COMMIT, every checkpoint moved', async () => {
  const tmp = tempDir('svc-one-transaction');
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 20 });
  const { store: reads, counts } = countedReadStore(join(tmp.dir, 'read.db'));
  const runner = new ProjectionRunner({ events, reads, projectors: [counter('a'), counter('b'), counter('c')], batchSize: 64, leaseTtlMs: 600_000, leaseRenewMs: 300_000 });
  // (Leases renewed only every five minutes: no renewal's transaction among the ones counted.)
  try {
    await events.append('s', [{ type: 'Counted', data: {} }]);
    await runner.start();
    await runner.waitFor(await events.headPosition());
    // Let the runner's timers (idle commits, checkpoint flushes) settle before counting.
    await new Promise((resolve) => setTimeout(resolve, 200));
    counts.begins = counts.commits = 0;
    const live = await events.append('s', [{ type: 'Counted', data: {} }]);
    await runner.waitFor(live.position);
    assert.equal(counts, { begins: 1, commits: 1 });
    for (const name of ['a', 'b', 'c']) assert.equal(await reads.get(`${name}_counts`, 's'), { id: 's', count: 2 });
    for (const status of await runner.status()) assert.is(status.checkpoint, live.position);
  } finally {
    await runner.stop();
    await events.close();
    await reads.close();
    tmp.remove();
  }
});

test.run();
