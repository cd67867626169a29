import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, call } from '../support/fixtures.ts';
import { scrape, type Scrape } from '../support/metrics.ts';
import { defineApi, EXAMPLE_CONTROL, type Api } from '../support/push-data.ts';
import { startTestService, type TestService } from '../support/service.ts';

interface Ctx {
  svc: TestService;
  api: Api;
}
const test = suite<Ctx>('GET /metrics: Prometheus metrics of a service after real requests', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.api = await defineApi(ctx.svc, EXAMPLE_CONTROL);
  const user = await call(ctx.svc, '/api/admin/users', { method: 'POST', body: { username: 'jbloggs', name: { first: 'Joe', last: 'Bloggs' } } });
  assert.is(user.status, 201);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const metrics = (ctx: Ctx): Promise<Scrape> => scrape(ctx.svc.request);
const requests = (s: Scrape, labels: Record<string, string>) => s.value('svc_http_request_duration_seconds_count', labels) ?? 0;
const sum = (s: Scrape, name: string) => s.samples(name).reduce((total, x) => total + x.value, 0);

test('request durations are counted by route template, method and status: ids never become series of their own', async (ctx) => {
  const before = await metrics(ctx);
  const template = { method: 'GET', route: '/api/admin/users/:username', status: '404' };
  assert.is((await call(ctx.svc, '/api/admin/users/nobody-one')).status, 404);
  assert.is((await call(ctx.svc, '/api/admin/users/nobody-two')).status, 404);
  assert.is((await call(ctx.svc, '/api/admin/users/jbloggs')).status, 200);
  assert.is((await ctx.svc.request('/no/such/thing-1', { admin: false })).status, 404);
  assert.is((await ctx.svc.request('/no/such/thing-2', { admin: false })).status, 404);
  assert.is((await ctx.svc.request('/no/such/thing-3', { admin: false, method: 'PROPFIND' })).status, 501);
  const after = await metrics(ctx);
  assert.is(requests(after, template) - requests(before, template), 2);
  assert.is(requests(after, { ...template, status: '200' }) - requests(before, { ...template, status: '200' }), 1);
  const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
  assert.is(requests(after, unmatched) - requests(before, unmatched), 2);
  // A method nobody routes is one series too, whatever a client sends.
  assert.ok(requests(after, { method: 'OTHER', route: 'unmatched', status: '501' }) >= 1);
  const routes = new Set(after.samples('svc_http_request_duration_seconds_count').map((s) => s.labels.route));
  for (const route of routes) assert.not.match(route!, /nobody|jbloggs|thing-/, `a raw path became a label: ${route}`);
  // Buckets are cumulative up to +Inf, which equals the count.
  assert.is(after.value('svc_http_request_duration_seconds_bucket', { ...template, le: '+Inf' }), requests(after, template));
});

test('a push: events appended by type match what the log gained, batch durations are observed, checkpoints reach the head', async (ctx) => {
  const before = await metrics(ctx);
  const headBefore = await ctx.svc.engines.events.headPosition();
  const reply = await ctx.api.push({ username: 'jbloggs', title: 'Measured title' });
  assert.is(reply.status, 200, reply.text);
  const head = await ctx.svc.engines.events.headPosition();
  assert.ok(head > headBefore);
  const byType = new Map<string, number>();
  for await (const e of ctx.svc.engines.events.readAll({ after: headBefore })) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  const after = await metrics(ctx);
  for (const [type, n] of byType) {
    assert.is((after.value('svc_events_appended_total', { type }) ?? 0) - (before.value('svc_events_appended_total', { type }) ?? 0), n, type);
  }
  // Only this service appends to its log: every event in it was counted.
  assert.is(sum(after, 'svc_events_appended_total'), head);
  // Read-your-writes: the push answered once every projection had folded its events.
  assert.is(after.value('svc_projection_checkpoint', { projection: 'objects' }), head);
  assert.is(after.value('svc_projection_head', { projection: 'objects' }), head);
  assert.is(after.value('svc_projection_lag', { projection: 'objects' }), 0);
  assert.is(after.value('svc_projection_state', { projection: 'objects', state: 'live' }), 1);
  assert.is(after.value('svc_projection_lease_here', { projection: 'objects' }), 1);
  const batches = (s: Scrape) => s.value('svc_projection_batch_duration_seconds_count', { projection: 'objects' }) ?? 0;
  assert.ok(batches(after) > batches(before), 'the objects projection folded a batch');
  assert.ok((after.value('svc_projection_batch_events_total', { projection: 'objects' }) ?? 0) >= head - headBefore);
});

test('cache hits and misses: a second push to the same API finds its definition in the cache', async (ctx) => {
  assert.is((await ctx.api.push({ username: 'jbloggs', title: 'Cache one' })).status, 200);
  const before = await metrics(ctx);
  assert.is((await ctx.api.push({ username: 'jbloggs', title: 'Cache two' })).status, 200);
  const after = await metrics(ctx);
  const hits = (s: Scrape, cache: string) => s.value('svc_cache_hits_total', { cache }) ?? 0;
  assert.ok(hits(after, 'rest-apis') > hits(before, 'rest-apis'), 'REST API definition served from the cache');
  assert.ok(hits(after, 'api-key-principals') > hits(before, 'api-key-principals'), 'API key principal served from the cache');
  const ratio = after.value('svc_cache_hit_ratio', { cache: 'rest-apis' });
  assert.ok(ratio !== undefined && ratio > 0 && ratio <= 1, `ratio ${ratio}`);
  assert.ok(after.value('svc_cache_misses_total', { cache: 'rest-apis' }) !== undefined);
});

test('throttle: failed API-key authentications are counted, the one reaching the limit trips it, later ones are refusals', async (ctx) => {
  const before = await metrics(ctx);
  const bad = { Authorization: basic('not-a-key-at-all-0123456789') };
  // The throttle's default limit is 10 failures per window.
  for (let i = 0; i < 10; i++) assert.is((await ctx.svc.request('/api/v0-object/ref/abc', { admin: false, headers: bad })).status, 403);
  assert.is((await ctx.svc.request('/api/v0-object/ref/abc', { admin: false, headers: bad })).status, 403);
  const after = await metrics(ctx);
  const delta = (name: string) => (after.value(name, { scope: 'api-key' }) ?? 0) - (before.value(name, { scope: 'api-key' }) ?? 0);
  assert.is(delta('svc_auth_failures_total'), 10);
  assert.is(delta('svc_auth_throttle_trips_total'), 1);
  assert.ok(delta('svc_auth_throttle_refusals_total') >= 1);
  assert.is(after.value('svc_auth_throttle_trips_total', { scope: 'admin' }), 0);
});

test('default process metrics and the role are there', async (ctx) => {
  const s = await metrics(ctx);
  assert.is(s.value('svc_info', { role: 'all' }), 1);
  assert.ok((s.value('process_resident_memory_bytes') ?? 0) > 0);
  assert.ok(s.samples('nodejs_eventloop_lag_seconds').length > 0);
  assert.match(s.text, '# TYPE svc_http_request_duration_seconds histogram');
});

test('/healthz answers 200 with the projections; /readyz 200 with every check passed', async (ctx) => {
  const health = await ctx.svc.request('/healthz', { admin: false });
  assert.is(health.status, 200);
  const body = (await health.json()) as { status: string; projections: { name: string; state: string; lag: number }[] };
  assert.is(body.status, 'ok');
  assert.ok(body.projections.some((p) => p.name === 'objects'));
  const ready = await ctx.svc.request('/readyz', { admin: false });
  const readyBody = (await ready.json()) as { status: string; failed: string[]; checks: Record<string, { ok: boolean }> };
  assert.is(ready.status, 200, JSON.stringify(readyBody));
  assert.is(readyBody.status, 'ready');
  assert.equal(readyBody.failed, []);
  assert.equal(Object.keys(readyBody.checks), ['eventStore', 'readStore', 'projections']);
  assert.ok(Object.values(readyBody.checks).every((c) => c.ok));
  assert.is(ready.headers.get('cache-control'), 'no-store');
});

test.run();

const guarded = suite('GET /metrics with SVC_METRICS_TOKEN');

guarded('no token or a wrong one is a JSON 401 with a Bearer challenge; the token is answered', async () => {
  const token = 'metrics-token-0123456789abcdef';
  const svc = await startTestService({ SVC_METRICS_TOKEN: token });
  try {
    const missing = await svc.request('/metrics', { admin: false });
    assert.is(missing.status, 401);
    assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
    const body = (await missing.json()) as { success: boolean; kind: string };
    assert.is(body.success, false);
    assert.is(body.kind, 'svc:api:metrics:unauthorised');
    // The admin token is not the metrics token.
    const admin = await svc.request('/metrics');
    assert.is(admin.status, 401);
    const wrong = await svc.request('/metrics', { admin: false, headers: { Authorization: `Bearer ${token}x` } });
    assert.is(wrong.status, 401);
    assert.match(wrong.headers.get('www-authenticate') ?? '', 'invalid_token');
    const s = await scrape(svc.request, { Authorization: `Bearer ${token}` });
    assert.is(s.value('svc_info', { role: 'all' }), 1);
    // Health endpoints stay open: load balancers send no token.
    assert.is((await svc.request('/healthz', { admin: false })).status, 200);
    assert.is((await svc.request('/readyz', { admin: false })).status, 200);
  } finally {
    await svc.stop();
  }
});

guarded.run();
