/**
 * Routes match case-insensitively (@koa/router's default), so authentication must too: a path in
 * another case (`/API/ADMIN/...`, `/API/V0-OBJECT/...`, `/API/REPORTING/V0/...`) reaches the same
 * handlers and must pass the same checks. (It once did not: the admin gate compared the path
 * case-sensitively, and the read APIs' router-level key check was a case-sensitive layer.)
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, call, createObject, createReader, createUser, expectError, type Reader } from '../support/fixtures.ts';

interface Ctx {
  svc: TestService;
  reader: Reader;
  object: string;
}
const test = suite<Ctx>('path case and authentication', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.object = (await createObject(ctx.svc, 'phd:type:project', { 'dc:attribute:title': 'Cased' })).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('admin API paths in any case need the admin token', async ({ svc }) => {
  const victim = await createUser(svc);
  for (const [method, path] of [
    ['GET', '/API/ADMIN/USERS'],
    ['GET', '/Api/Admin/api-keys'],
    ['POST', `/API/ADMIN/USERS/${victim.username}/API-KEYS`],
    ['GET', '/api/ADMIN/projections'],
    ['POST', '/API/ADMIN/FILES?filename=x.txt'],
    ['GET', '/API/ADMIN'],
  ] as const) {
    expectError(await call(svc, path, { method, admin: false }), 401, 'svc:api:admin:unauthorised');
  }
  const keys = (await call(svc, `/api/admin/users/${victim.username}`)).body.apiKeys;
  assert.equal(keys, [], 'no key was issued');
  const withToken = await call(svc, '/API/ADMIN/USERS');
  assert.is(withToken.status, 200);
  assert.ok(Array.isArray(withToken.body.users));
});

test('Object API paths in any case need an API key; a key\'s path restriction is case-sensitive', async ({ svc, reader, object }) => {
  const upper = `/API/V0-OBJECT/REF/${object}?sources=NONE`;
  expectError(await call(svc, upper, { admin: false }), 401, 'svc:auth:credentials-required');
  expectError(await call(svc, upper, { admin: false, headers: { Authorization: basic('B'.repeat(44)) } }), 403, 'svc:auth:invalid-api-key');
  // The reader's key covers /api/, which /API/... is not.
  expectError(await reader.get(upper), 403, 'svc:auth:invalid-api-key');
  const lower = await reader.get(`/api/v0-object/ref/${object}?sources=NONE`);
  assert.is(lower.status, 200);
  const mixed = await reader.get(`/api/V0-OBJECT/ref/${object}?sources=NONE`);
  assert.equal([mixed.status, mixed.body], [200, lower.body], 'a path the key covers is served whatever the case of the rest');
});

test('Reporting API paths in any case need an API key', async ({ svc, reader }) => {
  for (const path of ['/API/REPORTING/V0/COLLECTIONS', '/Api/Reporting/v0/collection/people']) {
    expectError(await call(svc, path, { admin: false }), 401, 'svc:auth:credentials-required');
  }
  expectError(await reader.get('/API/REPORTING/V0/COLLECTIONS'), 403, 'svc:auth:invalid-api-key');
  assert.is((await reader.get('/api/reporting/v0/collections')).status, 200);
});

test('File API paths in any case need an API key', async ({ svc }) => {
  expectError(await call(svc, `/API/V0-FILE/METADATA/${'a'.repeat(64)}`, { admin: false }), 401, 'svc:auth:credentials-required');
});

test.run();
