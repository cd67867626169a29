/**
 * Repeated API-key failures are throttled (issue 3 §4; haplo-behaviour.md §1 "How a key is
 * checked"): after 10 failed attempts from one client, every request of that client, even with a
 * good key, is refused with 403 svc:auth:throttle until the 60 s window ends.
 *
 * A service of its own (the throttle is per service) on a hand-moved clock.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, call, createObject, createReader, expectError, ManualClock, type Reader } from '../support/fixtures.ts';

const THROTTLE_MESSAGE = 'Too many failed API authentication attempts, API usage suspended. Pause requests to wait until restriction lifted.';

interface Ctx {
  svc: TestService;
  clock: ManualClock;
  reader: Reader;
  ref: string;
  path: string;
}
const test = suite<Ctx>('API key failure throttle', { clock: new ManualClock(Date.parse('2024-08-01T12:00:00.000Z')) } as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({}, ctx.clock.fn);
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  const { ref } = await createObject(ctx.svc, 'phd:type:project', { 'dc:attribute:title': 'Throttled' });
  ctx.ref = ref;
  ctx.path = `/api/v0-object/ref/${ref}?sources=NONE`;
});
test.before.each((ctx) => {
  // Each test starts in a fresh throttle window.
  ctx.clock.advance(10 * 60_000);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const get = (ctx: Ctx, authorization?: string) => call(ctx.svc, ctx.path, { admin: false, ...(authorization ? { headers: { Authorization: authorization } } : {}) });
const WRONG = basic('W'.repeat(44));

test('10 failures, then even a good key gets 403 svc:auth:throttle; the block lifts after 60 s', async (ctx) => {
  const start = ctx.clock.now;
  assert.is((await get(ctx, basic(ctx.reader.key))).status, 200, 'a good key works to begin with');
  for (let i = 1; i <= 10; i++) {
    expectError(await get(ctx, WRONG), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
    ctx.clock.advance(1000);
  }
  expectError(await get(ctx, basic(ctx.reader.key)), 403, 'svc:auth:throttle', THROTTLE_MESSAGE);
  expectError(await get(ctx, WRONG), 403, 'svc:auth:throttle', THROTTLE_MESSAGE);
  const none = await get(ctx);
  expectError(none, 403, 'svc:auth:throttle', THROTTLE_MESSAGE);
  expectError(await call(ctx.svc, `/api/v0-object/linked/${ctx.ref}`, { admin: false, headers: { Authorization: basic(ctx.reader.key) } }), 403, 'svc:auth:throttle');

  ctx.clock.now = start + 59_999;
  expectError(await get(ctx, basic(ctx.reader.key)), 403, 'svc:auth:throttle', THROTTLE_MESSAGE);
  ctx.clock.now = start + 60_000;
  const lifted = await get(ctx, basic(ctx.reader.key));
  assert.is(lifted.status, 200, `the block lifts after 60 s: ${JSON.stringify(lifted.body)}`);
  expectError(await get(ctx, WRONG), 403, 'svc:auth:invalid-api-key', 'Invalid API Key'); // failures count afresh
});

test('9 failures are not yet throttled', async (ctx) => {
  for (let i = 0; i < 9; i++) expectError(await get(ctx, WRONG), 403, 'svc:auth:invalid-api-key');
  assert.is((await get(ctx, basic(ctx.reader.key))).status, 200);
});

test('requests without credentials (401) and successes do not count as failures', async (ctx) => {
  for (let i = 0; i < 15; i++) {
    const reply = await get(ctx);
    assert.is(reply.status, 401);
  }
  for (let i = 0; i < 15; i++) assert.is((await get(ctx, basic(ctx.reader.key))).status, 200);
  assert.is((await get(ctx, basic(ctx.reader.key))).status, 200);
});

test('revoked keys, wrong user names and uncovered paths count as failures', async (ctx) => {
  const revoked = await call(ctx.svc, `/api/admin/users/${ctx.reader.username}/api-keys`, { method: 'POST', body: {} });
  await call(ctx.svc, `/api/admin/api-keys/${revoked.body.id}`, { method: 'DELETE' });
  const elsewhere = await call(ctx.svc, `/api/admin/users/${ctx.reader.username}/api-keys`, { method: 'POST', body: { path: '/api/reporting/v0/' } });
  for (let i = 0; i < 4; i++) expectError(await get(ctx, basic(revoked.body.key)), 403, 'svc:auth:invalid-api-key');
  for (let i = 0; i < 3; i++) expectError(await get(ctx, basic(ctx.reader.key, 'admin')), 403, 'svc:auth:invalid-api-key');
  for (let i = 0; i < 3; i++) expectError(await get(ctx, basic(elsewhere.body.key)), 403, 'svc:auth:invalid-api-key');
  expectError(await get(ctx, basic(ctx.reader.key)), 403, 'svc:auth:throttle');
});

test('the admin API is not throttled by API-key failures', async (ctx) => {
  for (let i = 0; i < 10; i++) await get(ctx, WRONG);
  expectError(await get(ctx, basic(ctx.reader.key)), 403, 'svc:auth:throttle');
  const admin = await call(ctx.svc, '/api/admin/users');
  assert.is(admin.status, 200);
});

test.run();
