import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceMetrics } from '../../src/app/metrics.ts';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { WrongExpectedRevisionError } from '../../src/events/event-store.ts';
import { parseScrape } from '../support/metrics.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('ServiceMetrics: counting appends, caches and throttles read on scrape');

test('appends through the counting store are counted by type once written; refused ones are not; the store is otherwise the same', async () => {
  const tmp = tempDir('svc-metrics');
  const inner = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const metrics = new ServiceMetrics('all');
  const events = metrics.countAppends(inner);
  try {
    assert.is(events.densePositions, inner.densePositions);
    assert.is(events.atomicAppendMany, inner.atomicAppendMany);
    await events.append('a-1', [{ type: 'Made', data: {} }, { type: 'Made', data: {} }]);
    await events.appendMany([
      { stream: 'a-2', events: [{ type: 'Made', data: {} }] },
      { stream: 'b-1', events: [{ type: 'Linked', data: {} }], expectedRevision: 'no_stream' },
    ]);
    try {
      await events.append('a-1', [{ type: 'Made', data: {} }], 'no_stream');
      assert.unreachable('a conflicting append was written');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
    }
    assert.is(await events.headPosition(), 4);
    const read = [];
    for await (const e of events.readAll()) read.push(e.type);
    assert.equal(read, ['Made', 'Made', 'Made', 'Linked']);
    const s = parseScrape(await metrics.registry.metrics());
    assert.is(s.value('svc_events_appended_total', { type: 'Made' }), 3);
    assert.is(s.value('svc_events_appended_total', { type: 'Linked' }), 1);
  } finally {
    await events.close();
    tmp.remove();
  }
});

test('cache and throttle counts are read when scraped; a cache never looked in has no ratio yet', async () => {
  const metrics = new ServiceMetrics('api');
  const cache = { hits: 0, misses: 0 };
  const idle = { hits: 0, misses: 0 };
  const throttle = { counts: { failures: 0, trips: 0, refusals: 0 } };
  metrics.watchCaches({ docs: cache, idle });
  metrics.watchThrottles({ 'api-key': throttle });
  cache.hits = 3;
  cache.misses = 1;
  throttle.counts.failures = 12;
  throttle.counts.trips = 1;
  throttle.counts.refusals = 2;
  let s = parseScrape(await metrics.registry.metrics());
  assert.is(s.value('svc_cache_hits_total', { cache: 'docs' }), 3);
  assert.is(s.value('svc_cache_misses_total', { cache: 'docs' }), 1);
  assert.is(s.value('svc_cache_hit_ratio', { cache: 'docs' }), 0.75);
  assert.is(s.value('svc_cache_hits_total', { cache: 'idle' }), 0);
  assert.is(s.value('svc_cache_hit_ratio', { cache: 'idle' }), undefined);
  assert.is(s.value('svc_auth_failures_total', { scope: 'api-key' }), 12);
  assert.is(s.value('svc_auth_throttle_trips_total', { scope: 'api-key' }), 1);
  assert.is(s.value('svc_auth_throttle_refusals_total', { scope: 'api-key' }), 2);
  cache.hits = 4;
  s = parseScrape(await metrics.registry.metrics());
  assert.is(s.value('svc_cache_hits_total', { cache: 'docs' }), 4, 'a second scrape reads the counts again (not added twice)');
});

test('projection gauges come from one status read per scrape, including rebuild progress; a failing read leaves them out', async () => {
  const metrics = new ServiceMetrics('projector');
  let reads = 0;
  let failing = false;
  metrics.watchProjections(async () => {
    reads++;
    if (failing) throw new Error('store down');
    return [
      { name: 'objects', state: 'rebuilding', checkpoint: 7, head: 10, lag: 3, lease: { owner: 'me', here: true }, rebuild: { projection: 'objects', processed: 5, position: 5, head: 10, eventsPerSecond: 1, etaSeconds: 5, phase: 'building' } },
      { name: 'users', state: 'live', checkpoint: 10, head: 10, lag: 0, lease: null },
    ];
  });
  metrics.onBatch('objects', 0.02, 4);
  const s = parseScrape(await metrics.registry.metrics());
  assert.is(reads, 1);
  assert.is(s.value('svc_projection_checkpoint', { projection: 'objects' }), 7);
  assert.is(s.value('svc_projection_head', { projection: 'objects' }), 10);
  assert.is(s.value('svc_projection_lag', { projection: 'objects' }), 3);
  assert.is(s.value('svc_projection_state', { projection: 'objects', state: 'rebuilding' }), 1);
  assert.is(s.value('svc_projection_state', { projection: 'objects', state: 'live' }), 0);
  assert.is(s.value('svc_projection_lease_here', { projection: 'users' }), 0);
  assert.is(s.value('svc_projection_rebuild_processed_events', { projection: 'objects' }), 5);
  assert.is(s.value('svc_projection_rebuild_position', { projection: 'objects' }), 5);
  assert.is(s.value('svc_projection_rebuild_head', { projection: 'objects' }), 10);
  assert.is(s.value('svc_projection_rebuild_phase', { projection: 'objects', phase: 'building' }), 1);
  assert.is(s.value('svc_projection_rebuild_phase', { projection: 'objects', phase: 'done' }), 0);
  assert.is(s.value('svc_projection_rebuild_processed_events', { projection: 'users' }), undefined);
  assert.is(s.value('svc_projection_batch_duration_seconds_count', { projection: 'objects' }), 1);
  assert.is(s.value('svc_projection_batch_events_total', { projection: 'objects' }), 4);
  failing = true;
  const down = parseScrape(await metrics.registry.metrics());
  assert.is(down.value('svc_projection_lag', { projection: 'objects' }), undefined);
  assert.ok(down.value('svc_info', { role: 'projector' }) === 1, 'the rest of the scrape is still answered');
});

test.run();
