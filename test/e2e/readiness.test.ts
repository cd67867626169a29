import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { scrape } from '../support/metrics.ts';
import { startTestService } from '../support/service.ts';

const test = suite('/readyz and /healthz by role, with projections behind');

interface ReadyBody {
  status: string;
  failed: string[];
  checks: { projections: { ok: boolean; maxLag: number; behind?: { name: string; state: string; lag: number }[] } };
}

test('an api node whose projections nobody folds: lag gauges show it, /readyz is 503 naming them, /healthz stays 200', async () => {
  // Role api folds nothing: events appended beside it stay unfolded, so the lag is exactly what was appended.
  const svc = await startTestService({ SVC_ROLE: 'api', SVC_READY_MAX_LAG: '2' });
  const log = openSqliteEventStore(join(svc.dataDir, 'events.db'));
  try {
    const ready = await svc.request('/readyz', { admin: false });
    assert.is(ready.status, 200, await ready.clone().text());

    await log.append('probe-1', [{ type: 'ProbeHappened', data: {} }, { type: 'ProbeHappened', data: {} }, { type: 'ProbeHappened', data: {} }]);
    const s = await scrape(svc.request);
    assert.is(s.value('svc_projection_head', { projection: 'objects' }), 3);
    assert.is(s.value('svc_projection_checkpoint', { projection: 'objects' }), 0);
    assert.is(s.value('svc_projection_lag', { projection: 'objects' }), 3);
    assert.is(s.value('svc_projection_lease_here', { projection: 'objects' }), 0);
    assert.is(s.value('svc_info', { role: 'api' }), 1);
    // This process appended none of them.
    assert.is(s.value('svc_events_appended_total', { type: 'ProbeHappened' }), undefined);

    const behind = await svc.request('/readyz', { admin: false });
    const body = (await behind.json()) as ReadyBody;
    assert.is(behind.status, 503, JSON.stringify(body));
    assert.is(body.status, 'not-ready');
    assert.equal(body.failed, ['projections']);
    assert.is(body.checks.projections.maxLag, 2);
    assert.ok(body.checks.projections.behind?.some((p) => p.name === 'objects' && p.lag === 3));

    const health = await svc.request('/healthz', { admin: false });
    assert.is(health.status, 200);
    const healthBody = (await health.json()) as { status: string; projections: { name: string; lag: number }[] };
    assert.is(healthBody.status, 'ok');
    assert.is(healthBody.projections.find((p) => p.name === 'objects')?.lag, 3);
  } finally {
    await log.close();
    await svc.stop();
  }
});

test('the projector role serves /metrics, /readyz and /healthz beside /status', async () => {
  const svc = await startTestService({ SVC_ROLE: 'projector' });
  try {
    const s = await scrape(svc.request);
    assert.is(s.value('svc_info', { role: 'projector' }), 1);
    assert.is(s.value('svc_projection_lease_here', { projection: 'objects' }), 1);
    assert.is(s.value('svc_projection_lag', { projection: 'objects' }), 0);
    assert.is((await svc.request('/readyz', { admin: false })).status, 200);
    assert.is((await svc.request('/healthz', { admin: false })).status, 200);
    assert.is((await svc.request('/status', { admin: false })).status, 200);
    assert.is((await svc.request('/api/admin/projections', { admin: false })).status, 404);
    // Its own requests are measured too.
    const again = await scrape(svc.request);
    assert.ok((again.value('svc_http_request_duration_seconds_count', { method: 'GET', route: '/readyz', status: '200' }) ?? 0) >= 1);
  } finally {
    await svc.stop();
  }
});

test.run();
