/**
 * API keys with the principal cache in place (issue 3): a key that has been used is checked by its
 * hash alone while the users read model stays unchanged. Every change to what a key resolves to —
 * a revoked key, a deactivated user, changed group membership, a changed group — must take effect
 * for the very next request after the command that made it has answered (read-your-writes).
 *
 * Each test first uses the key (so its principal is cached), then changes something, then asks again.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { groupStream } from '../../src/domain/users/events.ts';
import { startTestService, type TestService } from '../support/service.ts';
import {
  basic,
  call,
  createGroup,
  createObject,
  createReader,
  createUser,
  expectError,
  issueKey,
  ManualClock,
  readObject,
  setUser,
} from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';
const COMMON = 'svc:label:common';
const CONFIDENTIAL = 'svc:label:confidential';

interface Ctx {
  svc: TestService;
  clock: ManualClock;
  common: string;
  confidential: string;
}
const test = suite<Ctx>('API keys: cached principals', { clock: new ManualClock(Date.parse('2024-05-01T00:00:00.000Z')) } as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({}, ctx.clock.fn);
  ctx.common = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Common' }, [COMMON])).ref;
  ctx.confidential = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Confidential' }, [CONFIDENTIAL])).ref;
});
test.after.each((ctx) => {
  // Past the failure throttle's window: no test is refused because of another's failed attempts.
  ctx.clock.advance(61_000);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const get = (svc: TestService, path: string, key: string) => call(svc, path, { admin: false, headers: { Authorization: basic(key) } });
const objectPath = (ref: string) => `/api/v0-object/ref/${ref}?sources=NONE`;

/** Appends a GroupChanged event behind the commands' back and waits as a command would. */
const changeGroup = async (svc: TestService, code: string, change: { title?: string; readAll?: boolean; readLabels?: readonly string[] }) => {
  const { position } = await svc.engines.events.append(groupStream(code), [{ type: 'GroupChanged', data: { code, ...change } }], 'any');
  await svc.runner.waitFor(position);
};

test('the users read model has a version, so principals are cached', ({ svc }) => {
  assert.ok(svc.runner.version('users') >= 0);
});

test('a used key keeps working, request after request', async ({ svc, common }) => {
  const reader = await createReader(svc, { readAll: true });
  for (let i = 0; i < 5; i++) assert.is((await readObject(reader, common)).ref, common);
});

test('a revoked key is refused by the next request after DELETE answers', async ({ svc, common }) => {
  const reader = await createReader(svc, { readAll: true });
  const other = await issueKey(svc, reader.username);
  assert.is((await get(svc, objectPath(common), reader.key)).status, 200);
  assert.is((await get(svc, objectPath(common), other.key)).status, 200);
  assert.is((await call(svc, `/api/admin/api-keys/${reader.keyId}`, { method: 'DELETE' })).status, 200);
  expectError(await get(svc, objectPath(common), reader.key), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  expectError(await get(svc, `/api/v0-object/linked/${common}`, reader.key), 403, 'svc:auth:invalid-api-key');
  assert.is((await get(svc, objectPath(common), other.key)).status, 200, 'the user\'s other key is unaffected');
});

test('a deactivated user is refused at once; reactivated, at once again served', async ({ svc, common }) => {
  const reader = await createReader(svc, { readAll: true });
  assert.is((await reader.object(common)).status, 200);
  await setUser(svc, reader.username, { active: false });
  expectError(await reader.object(common), 403, 'svc:auth:not-authorised', 'Not authorised');
  expectError(await reader.object(common), 403, 'svc:auth:not-authorised', 'Not authorised');
  await setUser(svc, reader.username, { active: true });
  assert.is((await readObject(reader, common)).ref, common);
});

test('changed group membership changes what a key may read, at once, both ways', async ({ svc, common, confidential }) => {
  const commonOnly = await createGroup(svc, { readLabels: [COMMON] });
  const everything = await createGroup(svc, { readAll: true });
  const reader = await createReader(svc, { readLabels: [COMMON] });
  assert.is((await reader.object(common)).status, 200);
  expectError(await reader.object(confidential), 400, 'svc:api-v0:object:no-such-object');
  await setUser(svc, reader.username, { groups: [commonOnly, everything] });
  assert.is((await readObject(reader, confidential)).ref, confidential);
  await setUser(svc, reader.username, { groups: [commonOnly] });
  expectError(await reader.object(confidential), 400, 'svc:api-v0:object:no-such-object');
  await setUser(svc, reader.username, { groups: [] });
  expectError(await reader.object(common), 400, 'svc:api-v0:object:no-such-object');
});

test('a changed group (labels, read-all) changes what its members may read, at once', async ({ svc, common, confidential }) => {
  const group = await createGroup(svc, { readLabels: [COMMON] });
  const user = await createUser(svc, { groups: [group] });
  const key = await issueKey(svc, user.username);
  assert.is((await get(svc, objectPath(common), key.key)).status, 200);
  expectError(await get(svc, objectPath(confidential), key.key), 400, 'svc:api-v0:object:no-such-object');
  await changeGroup(svc, group, { readLabels: [CONFIDENTIAL] });
  assert.is((await get(svc, objectPath(confidential), key.key)).status, 200);
  expectError(await get(svc, objectPath(common), key.key), 400, 'svc:api-v0:object:no-such-object');
  await changeGroup(svc, group, { readAll: true });
  assert.is((await get(svc, objectPath(common), key.key)).status, 200);
  await changeGroup(svc, group, { readAll: false, readLabels: [] });
  expectError(await get(svc, objectPath(confidential), key.key), 400, 'svc:api-v0:object:no-such-object');
});

test('the key\'s path restriction is checked on every request, cached or not', async ({ svc, common }) => {
  const reader = await createReader(svc, { readAll: true });
  const exact = await issueKey(svc, reader.username, { path: `=/api/v0-object/ref/${common}` });
  assert.is((await get(svc, objectPath(common), exact.key)).status, 200);
  expectError(await get(svc, `/api/v0-object/linked/${common}`, exact.key), 403, 'svc:auth:invalid-api-key');
  assert.is((await get(svc, objectPath(common), exact.key)).status, 200);
  expectError(await get(svc, '/api/reporting/v0/collections', exact.key), 403, 'svc:auth:invalid-api-key');
});

test('a wrong key sharing a cached key\'s lookup prefix is refused', async ({ svc, common }) => {
  const reader = await createReader(svc, { readAll: true });
  assert.is((await reader.object(common)).status, 200);
  const forged = reader.key.slice(0, 16) + (reader.key[16] === 'A' ? 'B' : 'A') + reader.key.slice(17);
  expectError(await get(svc, objectPath(common), forged), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  expectError(await get(svc, objectPath(common), reader.key + 'x'), 403, 'svc:auth:invalid-api-key', 'Invalid API Key');
  assert.is((await reader.object(common)).status, 200);
});

test('the principal cache is shared by the read APIs and follows each change there too', async ({ svc }) => {
  const reader = await createReader(svc, { readAll: true });
  assert.is((await reader.get('/api/reporting/v0/collections')).status, 200);
  await setUser(svc, reader.username, { active: false });
  expectError(await reader.get('/api/reporting/v0/collections'), 403, 'svc:auth:not-authorised');
  await setUser(svc, reader.username, { active: true });
  assert.is((await reader.get('/api/reporting/v0/collections')).status, 200);
  assert.is((await call(svc, `/api/admin/api-keys/${reader.keyId}`, { method: 'DELETE' })).status, 200);
  expectError(await reader.get('/api/reporting/v0/collections'), 403, 'svc:auth:invalid-api-key');
});

test.run();
