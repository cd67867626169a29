/**
 * API keys for read clients (issue 3 §4; haplo-behaviour.md §1): HTTP Basic with user name `svc`,
 * 401 with a challenge when credentials are missing, 403 JSON with a namespaced kind for a bad,
 * revoked or path-restricted key and for an inactive user; keys are shown once.
 *
 * Failed attempts count towards the failure throttle (see throttle.test.ts): the clock moves past
 * the throttle window after every test, so that no test is refused because of the ones before it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import {
  basic,
  call,
  createObject,
  createReader,
  createUser,
  errorOf,
  expectError,
  issueKey,
  ManualClock,
  readObject,
  setUser,
  type Reader,
} from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';

interface Ctx {
  svc: TestService;
  clock: ManualClock;
  reader: Reader;
  object: string;
}
const test = suite<Ctx>('API keys', { clock: new ManualClock(Date.parse('2024-04-01T00:00:00.000Z')) } as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({}, ctx.clock.fn);
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.object = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Keyed' })).ref;
});
test.after.each((ctx) => {
  ctx.clock.advance(61_000);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const get = (svc: TestService, path: string, authorization?: string) =>
  call(svc, path, { admin: false, ...(authorization !== undefined ? { headers: { Authorization: authorization } } : {}) });

test('issuing a key: 201 {id, key, path}; 44 URL-safe characters; default path /api/', async ({ svc }) => {
  const user = await createUser(svc);
  const reply = await call(svc, `/api/admin/users/${user.username}/api-keys`, { method: 'POST', body: { name: 'reporting client' } });
  assert.is(reply.status, 201);
  assert.equal(Object.keys(reply.body), ['id', 'key', 'path']);
  assert.match(reply.body.key, /^[A-Za-z0-9_-]{44}$/);
  assert.is(reply.body.path, '/api/');
  const restricted = await issueKey(svc, user.username, { path: '/api/v0-object/' });
  assert.is(restricted.path, '/api/v0-object/');
  assert.is.not(restricted.key, reply.body.key);
});

test('a key is shown once: the admin listings never contain it (nor its hash)', async ({ svc }) => {
  const user = await createUser(svc);
  const key = await issueKey(svc, user.username, { name: 'shown once' });
  const detail = await call(svc, `/api/admin/users/${user.username}`);
  assert.is(detail.status, 200);
  const listed = detail.body.apiKeys as any[];
  assert.is(listed.length, 1);
  assert.is(listed[0].id, key.id);
  assert.is(listed[0].name, 'shown once');
  assert.is(listed[0].revoked, false);
  const all = await call(svc, '/api/admin/api-keys');
  for (const text of [JSON.stringify(detail.body), JSON.stringify(all.body)]) {
    assert.not.match(text, key.key);
    assert.not.match(text, key.key.slice(0, 16), 'not even the lookup prefix');
    assert.not.match(text, /"hash"/);
  }
});

test('issuing: bad path -> 400 naming path; unknown user -> 404', async ({ svc }) => {
  const user = await createUser(svc);
  for (const path of ['api/v0-object/', 'https://x/api', '/api/with space']) {
    expectError(await call(svc, `/api/admin/users/${user.username}/api-keys`, { method: 'POST', body: { path } }), 400, 'svc:api-key:invalid', /^path: /);
  }
  expectError(await call(svc, '/api/admin/users/no-such-user/api-keys', { method: 'POST', body: {} }), 404, 'svc:user:no-such-user');
});

test('no Authorization -> 401 JSON with WWW-Authenticate Basic', async ({ svc, object }) => {
  for (const path of [`/api/v0-object/ref/${object}?sources=NONE`, `/api/v0-object/linked/${object}`]) {
    const reply = await get(svc, path);
    assert.is(reply.status, 401);
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Basic /);
    const e = errorOf(reply);
    assert.match(e.kind, /^svc:auth:/);
  }
});

test('credentials that are not Basic (the admin bearer token, garbage) -> 401', async ({ svc, object }) => {
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  for (const authorization of [`Bearer ${svc.adminToken}`, 'Basic', 'Basic !!!not-base64!!!', 'Digest username="svc"']) {
    const reply = await get(svc, path, authorization);
    assert.is(reply.status, 401, authorization);
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Basic /);
    errorOf(reply);
  }
});

test('a good key works; the scheme name is case-insensitive', async ({ svc, reader, object }) => {
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  assert.is((await get(svc, path, basic(reader.key))).status, 200);
  assert.is((await get(svc, path, basic(reader.key).replace('Basic', 'basic'))).status, 200);
});

test('a user name other than svc -> 403 svc:auth:invalid-api-key "Invalid API Key"', async ({ svc, reader, object }) => {
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  for (const user of ['haplo', 'SVC', reader.username, '']) {
    expectError(await get(svc, path, basic(reader.key, user)), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  }
});

test('a wrong key -> 403 svc:auth:invalid-api-key', async ({ svc, reader, object }) => {
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  const wrongTail = reader.key.slice(0, 16) + 'x'.repeat(28);
  for (const key of [wrongTail, 'A'.repeat(44), 'short', reader.key + 'x', reader.key.slice(0, 43)]) {
    expectError(await get(svc, path, basic(key)), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  }
});

test('a revoked key -> 403 svc:auth:invalid-api-key; other keys of the user keep working', async ({ svc, reader, object }) => {
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  const spare = await issueKey(svc, reader.username);
  const doomed = await issueKey(svc, reader.username);
  assert.is((await get(svc, path, basic(doomed.key))).status, 200);
  const revoked = await call(svc, `/api/admin/api-keys/${doomed.id}`, { method: 'DELETE' });
  assert.is(revoked.status, 200);
  assert.equal(revoked.body, { id: doomed.id, revoked: true });
  expectError(await get(svc, path, basic(doomed.key)), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  assert.is((await get(svc, path, basic(spare.key))).status, 200);
  const listed = (await call(svc, `/api/admin/users/${reader.username}`)).body.apiKeys.find((k: any) => k.id === doomed.id);
  assert.is(listed.revoked, true);
  expectError(await call(svc, '/api/admin/api-keys/zzzzzzzzzzzz', { method: 'DELETE' }), 404, 'svc:api-key:no-such-key');
});

test('a key restricted to /api/v0-object/ works for every Object API path', async ({ svc, reader, object }) => {
  const key = await issueKey(svc, reader.username, { path: '/api/v0-object/' });
  assert.is((await get(svc, `/api/v0-object/ref/${object}?sources=NONE`, basic(key.key))).status, 200);
  assert.is((await get(svc, `/api/v0-object/linked/${object}`, basic(key.key))).status, 200);
  const prefix = await issueKey(svc, reader.username, { path: '/api/v0-' });
  assert.is((await get(svc, `/api/v0-object/ref/${object}?sources=NONE`, basic(prefix.key))).status, 200);
});

test('an exact-path key (=/api/v0-object/ref/<ref>) works for that path only, query string allowed', async ({ svc, reader, object }) => {
  const key = await issueKey(svc, reader.username, { path: `=/api/v0-object/ref/${object}` });
  assert.is(key.path, `=/api/v0-object/ref/${object}`);
  const ok = await get(svc, `/api/v0-object/ref/${object}?sources=NONE`, basic(key.key));
  assert.is(ok.status, 200);
  assert.is(ok.body.object.ref, object);
  assert.is((await get(svc, `/api/v0-object/ref/${object}?sources=ALL`, basic(key.key))).status, 200);
  const other = (await createObject(svc, 'phd:type:project', { [TITLE]: 'Other' })).ref;
  for (const path of [`/api/v0-object/ref/${other}?sources=NONE`, `/api/v0-object/linked/${object}`, `/api/v0-object/ref/${object}/?sources=NONE`]) {
    expectError(await get(svc, path, basic(key.key)), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  }
});

test('a key restricted to another API\'s prefix -> 403 svc:auth:invalid-api-key', async ({ svc, reader, object }) => {
  for (const path of ['/api/reporting/v0/', '/api/v0-file/', '/api/v0-object/linked/', `=/api/v0-object/linked/${object}`]) {
    const key = await issueKey(svc, reader.username, { path });
    expectError(await get(svc, `/api/v0-object/ref/${object}?sources=NONE`, basic(key.key)), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  }
});

test('an inactive user -> 403 svc:auth:not-authorised; reactivated, the key works again', async ({ svc, object }) => {
  const reader = await createReader(svc, { readAll: true });
  const path = `/api/v0-object/ref/${object}?sources=NONE`;
  assert.is((await get(svc, path, basic(reader.key))).status, 200);
  const changed = await setUser(svc, reader.username, { active: false });
  assert.is(changed.active, false);
  expectError(await get(svc, path, basic(reader.key)), 403, 'svc:auth:not-authorised', 'Not authorised');
  expectError(await get(svc, `/api/v0-object/linked/${object}`, basic(reader.key)), 403, 'svc:auth:not-authorised');
  await setUser(svc, reader.username, { active: true });
  assert.is((await readObject(reader, object)).ref, object);
});

test('authentication comes before everything else: a bad key never learns whether a ref exists', async ({ svc, object }) => {
  const bad = basic('B'.repeat(44));
  expectError(await get(svc, `/api/v0-object/ref/${object}?sources=NONE`, bad), 403, 'svc:auth:invalid-api-key');
  expectError(await get(svc, '/api/v0-object/ref/zzzzzzzzzzzz?sources=NONE', bad), 403, 'svc:auth:invalid-api-key');
  expectError(await get(svc, `/api/v0-object/ref/${object}`, bad), 403, 'svc:auth:invalid-api-key');
  const none = await get(svc, '/api/v0-object/ref/zzzzzzzzzzzz?sources=NONE');
  assert.is(none.status, 401);
});

test('the admin API does not take API keys', async ({ svc, reader }) => {
  const reply = await call(svc, '/api/admin/objects', { method: 'POST', admin: false, headers: { Authorization: basic(reader.key) }, body: { type: 'phd:type:project', attributes: {} } });
  expectError(reply, 401, 'svc:api:admin:unauthorised');
});

test('unknown users or groups in user requests -> 400/404 naming them', async ({ svc }) => {
  expectError(
    await call(svc, '/api/admin/users', { method: 'POST', body: { username: 'ok-name', name: { first: 'A', last: 'B' }, groups: ['svc:group:nope'] } }),
    400,
    'svc:group:no-such-group',
    /svc:group:nope/,
  );
  expectError(await call(svc, '/api/admin/users', { method: 'POST', body: { username: 'Bad Name', name: { first: 'A', last: 'B' } } }), 400, 'svc:user:invalid', /^username: /);
  expectError(await call(svc, '/api/admin/users/nobody-here', { method: 'PATCH', body: { active: false } }), 404, 'svc:user:no-such-user');
  const user = await createUser(svc);
  expectError(await call(svc, '/api/admin/users', { method: 'POST', body: { username: user.username, name: { first: 'A', last: 'B' } } }), 409, 'svc:user:exists');
  expectError(await call(svc, '/api/admin/groups', { method: 'POST', body: { code: 'svc:group:x', title: 'X', readLabels: ['svc:label:nope'] } }), 400, 'svc:group:invalid', /readLabels/);
});

test.run();
