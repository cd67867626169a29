/**
 * State shared between service processes through the store (issue 13 §6): two services on one data
 * directory see each other's authentication failures (API keys, admin token) and each other's admin
 * sessions. Both services run on one hand-moved clock, so throttle windows are the same for both.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, call, createObject, createReader, expectError, ManualClock, type Reader, type Reply } from '../support/fixtures.ts';
import { tempDir } from '../support/tmp.ts';
import { Client } from './admin-ui/client.ts';

interface Ctx {
  dir: { dir: string; remove(): void };
  clock: ManualClock;
  a: TestService;
  b: TestService;
  reader: Reader;
  path: string;
}
const test = suite<Ctx>('Throttle and admin sessions shared by two services on one data directory', {
  clock: new ManualClock(Date.parse('2024-09-01T08:00:00.000Z')),
} as Ctx);

test.before(async (ctx) => {
  ctx.dir = tempDir('svc-shared');
  ctx.a = await startTestService({ SVC_DATA_DIR: ctx.dir.dir }, ctx.clock.fn);
  ctx.b = await startTestService({ SVC_DATA_DIR: ctx.dir.dir }, ctx.clock.fn);
  ctx.reader = await createReader(ctx.a, { readAll: true });
  const { ref } = await createObject(ctx.a, 'phd:type:project', { 'dc:attribute:title': 'Shared' });
  ctx.path = `/api/v0-object/ref/${ref}?sources=NONE`;
});
test.before.each((ctx) => {
  // A fresh throttle window for each test.
  ctx.clock.advance(10 * 60_000);
});
test.after(async (ctx) => {
  await ctx.a?.stop();
  await ctx.b?.stop();
  ctx.dir?.remove();
});

const WRONG = basic('W'.repeat(44));
const get = (svc: TestService, ctx: Ctx, authorization: string) => call(svc, ctx.path, { admin: false, headers: { Authorization: authorization } });

/** Asks until `check` holds (another process's view is refreshed in the background), at most `tries` times. */
const eventually = async (ask: () => Promise<Reply>, check: (r: Reply) => boolean, what: string, tries = 200): Promise<Reply> => {
  let last: Reply | undefined;
  for (let i = 0; i < tries; i++) {
    last = await ask();
    if (check(last)) return last;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.unreachable(`${what}: last answer ${last?.status} ${JSON.stringify(last?.body)}`);
  return last!;
};

test('the good key works on both services, wrong keys count on both', async (ctx) => {
  const readable = await eventually(() => get(ctx.b, ctx, basic(ctx.reader.key)), (r) => r.status === 200, 'the key reaches the second service');
  assert.is(readable.status, 200);
  for (let i = 0; i < 5; i++) expectError(await get(ctx.a, ctx, WRONG), 403, 'svc:auth:invalid-api-key');
  for (let i = 0; i < 4; i++) expectError(await get(ctx.b, ctx, WRONG), 403, 'svc:auth:invalid-api-key');
  assert.is((await get(ctx.a, ctx, basic(ctx.reader.key))).status, 200, '9 failures: not yet blocked');
  // The tenth failure, on the second service, reaches the limit counted over both.
  expectError(await get(ctx.b, ctx, WRONG), 403, 'svc:auth:invalid-api-key');
  const blockedB = await get(ctx.b, ctx, basic(ctx.reader.key));
  expectError(blockedB, 403, 'svc:auth:throttle');
  assert.ok(Number(blockedB.headers.get('retry-after')) > 0, 'Retry-After on the throttle');
  // The first service learns of the block from the store (checked in the background, not per request).
  ctx.clock.advance(2000);
  const blockedA = await eventually(() => get(ctx.a, ctx, basic(ctx.reader.key)), (r) => r.status === 403, 'blocked on the first service too');
  expectError(blockedA, 403, 'svc:auth:throttle');
});

test('failures on one service block a wrong key at once on the other, and a good key once its view is refreshed', async (ctx) => {
  for (let i = 0; i < 10; i++) expectError(await get(ctx.a, ctx, WRONG), 403, 'svc:auth:invalid-api-key');
  expectError(await get(ctx.a, ctx, basic(ctx.reader.key)), 403, 'svc:auth:throttle');
  // A failure on the other service counts into the same window and finds it past the limit.
  expectError(await get(ctx.b, ctx, WRONG), 403, 'svc:auth:throttle');
  ctx.clock.advance(2000);
  const good = await eventually(() => get(ctx.b, ctx, basic(ctx.reader.key)), (r) => r.status === 403, 'blocked on the second service');
  expectError(good, 403, 'svc:auth:throttle');
  // The window ends for both.
  ctx.clock.advance(60_000);
  assert.is((await get(ctx.a, ctx, basic(ctx.reader.key))).status, 200);
  assert.is((await get(ctx.b, ctx, basic(ctx.reader.key))).status, 200);
});

const bearer = (svc: TestService, token: string) => call(svc, '/api/admin/users', { admin: false, headers: { Authorization: `Bearer ${token}` } });

test('wrong admin Bearer tokens are throttled (429, Retry-After, JSON), counted over both services', async (ctx) => {
  for (let i = 0; i < 5; i++) expectError(await bearer(ctx.a, 'not-the-admin-token-at-all'), 401, 'svc:api:admin:unauthorised');
  for (let i = 0; i < 5; i++) expectError(await bearer(ctx.b, 'not-the-admin-token-at-all'), 401, 'svc:api:admin:unauthorised');
  const refused = await bearer(ctx.b, ctx.b.adminToken);
  expectError(refused, 429, 'svc:api:admin:throttle', /Too many failed admin authentication attempts/);
  assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
  expectError(await bearer(ctx.b, 'not-the-admin-token-at-all'), 429, 'svc:api:admin:throttle');
  // API keys are a separate count: the admin token's failures do not block key holders.
  assert.is((await get(ctx.b, ctx, basic(ctx.reader.key))).status, 200);
  ctx.clock.advance(2000);
  await eventually(() => bearer(ctx.a, ctx.a.adminToken), (r) => r.status === 429, 'blocked on the first service too');
  ctx.clock.advance(60_000);
  assert.is((await bearer(ctx.a, ctx.a.adminToken)).status, 200);
  assert.is((await bearer(ctx.b, ctx.b.adminToken)).status, 200);
});

test('wrong tokens on the sign-in form and as Bearer tokens share one count', async (ctx) => {
  const client = new Client(ctx.a);
  const { hiddenField } = await import('./admin-ui/client.ts');
  for (let i = 0; i < 9; i++) expectError(await bearer(ctx.b, 'not-the-admin-token-at-all'), 401, 'svc:api:admin:unauthorised');
  const form = await client.get('/admin/sign-in');
  const wrong = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: 'not-the-admin-token-at-all', next: '/admin/rest-apis' });
  assert.is(wrong.status, 401);
  const right = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: ctx.a.adminToken, next: '/admin/rest-apis' });
  assert.is(right.status, 429, 'the tenth failure (on the form) blocks');
  expectError(await bearer(ctx.a, ctx.a.adminToken), 429, 'svc:api:admin:throttle');
});

test('an admin session made on one service works on the other; signing out on either ends it on both', async (ctx) => {
  const onA = new Client(ctx.a);
  const csrf = await onA.signIn();
  const onB = new Client(ctx.b);
  for (const [k, v] of onA.cookies) onB.cookies.set(k, v);
  const page = await onB.get('/admin/rest-apis');
  assert.is(page.status, 200, `a page on the other service: ${page.status} ${page.location}`);
  assert.is(await onB.csrf(), csrf, 'the same session, with its CSRF token');
  const api = await fetch(`${ctx.b.url}/api/admin/users`, { headers: { Cookie: onB.cookieHeader() } });
  assert.is(api.status, 200, 'the admin API on the other service accepts the cookie');
  const write = await fetch(`${ctx.b.url}/api/admin/groups`, {
    method: 'POST',
    headers: { Cookie: onB.cookieHeader(), 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify({ code: 'test:shared-session', title: 'Made through the other service' }),
  });
  assert.ok(write.status < 300, `a write with the session's CSRF token: ${write.status} ${await write.text()}`);

  const out = await onB.post('/admin/sign-out', { csrf });
  assert.is(out.status, 303);
  const after = await onA.get('/admin/rest-apis');
  assert.is(after.status, 303, 'signed out on the other service: the session is gone here too');
  assert.match(after.location ?? '', '/admin/sign-in');
  const apiAfter = await fetch(`${ctx.a.url}/api/admin/users`, { headers: { Cookie: onA.cookieHeader() } });
  assert.is(apiAfter.status, 401);
});

test('a flash message left by a form on one service is shown by the next page on the other', async (ctx) => {
  const onA = new Client(ctx.a);
  const csrf = await onA.signIn();
  const onB = new Client(ctx.b);
  for (const [k, v] of onA.cookies) onB.cookies.set(k, v);
  const made = await onA.post('/admin/groups', { csrf, code: 'test:flash-group', title: 'Flash group' });
  assert.is(made.status, 303, `group form: ${made.status} ${made.text.slice(0, 300)}`);
  const next = await onB.get(made.location!);
  assert.is(next.status, 200);
  assert.match(next.text, 'notice-success', 'the flash is shown on the other service');
  const again = await onA.get(made.location!);
  assert.not.match(again.text, 'notice-success', 'and only once');
});

test.run();
