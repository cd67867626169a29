/**
 * Objects through time (issue 14, item 17): `GET /api/v0-object/ref/<ref>?at=` answers the object as it
 * was then, by replaying its stream; `GET /api/v0-object/history/<ref>` lists its versions. Both under the
 * read rule of the Object API, applied to the labels as they are now (and, for `at`, as they were then).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { call, createObject, createReader, expectError, patchObject, ManualClock, type Reader } from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';
const COMMON = 'svc:label:common';
const SECRET = 'svc:label:confidential';

interface Ctx {
  svc: TestService;
  clock: ManualClock;
  all: Reader;
  limited: Reader;
  /** Titled 'First' at 10:00, 'Second' at 11:00, 'Third' at 12:00 on 2025-04-01. */
  ref: string;
  /** A department, common until 11:00, then relabelled confidential. */
  relabelled: string;
  /** A common project linking to the relabelled department since 10:00, renamed at 12:00. */
  linker: string;
  /** Confidential until 11:00, then relabelled common. */
  opened: string;
}

const test = suite<Ctx>('objects through time: at and history', {} as Ctx);

const atTime = (reader: Reader, ref: string, at: string, sources = 'NONE') =>
  reader.get(`/api/v0-object/ref/${ref}?sources=${sources}&at=${encodeURIComponent(at)}`);

test.before(async (ctx) => {
  ctx.clock = new ManualClock(Date.parse('2025-04-01T09:00:00Z'));
  ctx.svc = await startTestService({}, ctx.clock.fn);
  ctx.all = await createReader(ctx.svc, { readAll: true });
  ctx.limited = await createReader(ctx.svc, { readLabels: [COMMON] });
  ctx.clock.set('2025-04-01T10:00:00Z');
  ctx.ref = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'First' }, [COMMON])).ref;
  ctx.relabelled = (await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Once open' }, [COMMON])).ref;
  ctx.linker = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Linker', 'svc:attribute:department': { type: 'link', ref: ctx.relabelled } }, [COMMON])).ref;
  ctx.opened = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Secret then open' }, [SECRET])).ref;
  ctx.clock.set('2025-04-01T11:00:00Z');
  assert.is((await patchObject(ctx.svc, ctx.opened, { labels: { add: [COMMON], remove: [SECRET] } })).status, 200);
  const second = await call(ctx.svc, `/api/admin/objects/${ctx.ref}`, {
    method: 'PATCH',
    body: { attributes: { [TITLE]: 'Second' } },
    headers: { 'X-Request-Id': 'change-to-second' },
  });
  assert.is(second.status, 200, JSON.stringify(second.body));
  assert.is((await patchObject(ctx.svc, ctx.relabelled, { labels: { add: [SECRET], remove: [COMMON] } })).status, 200);
  ctx.clock.set('2025-04-01T12:00:00Z');
  assert.is((await patchObject(ctx.svc, ctx.ref, { attributes: { [TITLE]: 'Third' } })).status, 200);
  assert.is((await patchObject(ctx.svc, ctx.linker, { attributes: { [TITLE]: 'Linker renamed' } })).status, 200);
});

test.after(async ({ svc }) => {
  await svc.stop();
});

test('at between the changes answers the middle version, serialised as today', async ({ all, ref }) => {
  const reply = await atTime(all, ref, '2025-04-01T11:30:00Z');
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.is(reply.body.success, true);
  assert.is(reply.body.kind, 'svc:api-v0:object:serialised');
  const o = reply.body.object;
  assert.is(o.ref, ref);
  assert.is(o.title, 'Second');
  assert.is(o.recordVersion, 2);
  assert.equal(o.attributes[TITLE], [{ type: 'text', value: 'Second' }]);
  assert.is(o.creationDate, '2025-04-01T10:00:00.000Z');
  assert.is(o.lastModificationDate, '2025-04-01T11:00:00.000Z');
  // An instant exactly at a change includes it; other `at` forms Haplo accepts work too.
  assert.is((await atTime(all, ref, '2025-04-01T12:00:00Z')).body.object.title, 'Third');
  assert.is((await atTime(all, ref, '2025-04-01 10:59')).body.object.title, 'First');
  // Without `at` the answer is today's.
  assert.is((await all.object(ref)).body.object.title, 'Third');
});

test('at before the object was created: no-such-object', async ({ all, ref }) => {
  expectError(await atTime(all, ref, '2025-04-01T09:59:59Z'), 400, 'svc:api-v0:object:no-such-object');
  expectError(await atTime(all, ref, '2025-03-01'), 400, 'svc:api-v0:object:no-such-object');
});

test('a bad at is a JSON 400', async ({ all, ref }) => {
  for (const bad of ['yesterday', '2025-13-01', '2025-04-01T25:00']) {
    const reply = await atTime(all, ref, bad);
    assert.is(reply.status, 400, bad);
    assert.ok(reply.contentType.includes('json'), bad);
    assert.is(reply.body.success, false, bad);
  }
});

test('history lists the three versions with time, actor, correlation id and what changed', async ({ all, ref }) => {
  const reply = await all.get(`/api/v0-object/history/${ref}`);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.is(reply.body.success, true);
  assert.is(reply.body.kind, 'svc:api-v0:object:history');
  assert.is(reply.body.ref, ref);
  const versions = reply.body.versions as any[];
  assert.equal(
    versions.map((v) => [v.recordVersion, v.time, v.actor, v.event]),
    [
      [1, '2025-04-01T10:00:00.000Z', 'admin', 'ObjectCreated'],
      [2, '2025-04-01T11:00:00.000Z', 'admin', 'ObjectAttributesChanged'],
      [3, '2025-04-01T12:00:00.000Z', 'admin', 'ObjectAttributesChanged'],
    ],
  );
  assert.is(versions[1].correlationId, 'change-to-second');
  for (const v of versions) assert.type(v.correlationId, 'string');
  assert.ok(versions[0].attributes.includes(TITLE));
  assert.equal(versions[0].labels, { added: [COMMON], removed: [] });
  assert.equal(versions[1].attributes, [TITLE]);
  assert.equal(versions[1].labels, { added: [], removed: [] });
});

test('history shows label changes', async ({ all, relabelled }) => {
  const versions = (await all.get(`/api/v0-object/history/${relabelled}`)).body.versions as any[];
  assert.equal(versions.map((v) => v.event), ['ObjectCreated', 'ObjectLabelsChanged']);
  assert.equal(versions[1].attributes, []);
  assert.equal(versions[1].labels, { added: [SECRET], removed: [COMMON] });
});

test('a reader who may not read the object now gets no-such-object for both, also for a past it could read then', async ({ all, limited, ref, relabelled }) => {
  // Readable now and then: the limited reader sees it.
  assert.is((await atTime(limited, ref, '2025-04-01T11:30:00Z')).body.object.title, 'Second');
  // Relabelled confidential at 11:00: hidden now, so hidden at 10:30 too, when it was common.
  expectError(await atTime(limited, relabelled, '2025-04-01T10:30:00Z'), 400, 'svc:api-v0:object:no-such-object');
  expectError(await atTime(limited, relabelled, '2025-04-01T12:30:00Z'), 400, 'svc:api-v0:object:no-such-object');
  expectError(await limited.get(`/api/v0-object/history/${relabelled}`), 400, 'svc:api-v0:object:no-such-object');
  // One who may read it now sees both.
  assert.is((await atTime(all, relabelled, '2025-04-01T10:30:00Z')).body.object.title, 'Once open');
  assert.is((await all.get(`/api/v0-object/history/${relabelled}`)).status, 200);
});

test('the past is also checked against the labels it had then: confidential then, common now', async ({ limited, all, opened }) => {
  expectError(await atTime(limited, opened, '2025-04-01T10:30:00Z'), 400, 'svc:api-v0:object:no-such-object');
  assert.is((await atTime(limited, opened, '2025-04-01T11:30:00Z')).body.object.title, 'Secret then open');
  assert.is((await atTime(all, opened, '2025-04-01T10:30:00Z')).body.object.title, 'Secret then open');
});

test('links in a past answer follow today\'s read rules: a target relabelled since shows no title', async ({ all, limited, linker, relabelled }) => {
  const before = '2025-04-01T10:30:00Z';
  const seen = (await atTime(limited, linker, before)).body.object;
  assert.is(seen.title, 'Linker');
  const [value] = seen.attributes['svc:attribute:department'];
  assert.is(value.ref, relabelled, 'the ref is kept');
  assert.not.ok('title' in value, JSON.stringify(value));
  assert.not.ok(JSON.stringify(seen).includes('Once open'));
  assert.is((await atTime(all, linker, before)).body.object.attributes['svc:attribute:department'][0].title, 'Once open');
});

test('a reader with no read permission gets no-such-object for both', async ({ svc, ref }) => {
  const none = await createReader(svc, null);
  expectError(await atTime(none, ref, '2025-04-01T11:30:00Z'), 400, 'svc:api-v0:object:no-such-object');
  expectError(await none.get(`/api/v0-object/history/${ref}`), 400, 'svc:api-v0:object:no-such-object');
});

test('history of an object that never existed: no-such-object; without a key: 401', async ({ svc, all }) => {
  expectError(await all.get('/api/v0-object/history/zzzzzzzzzzzz'), 400, 'svc:api-v0:object:no-such-object');
  const reply = await call(svc, '/api/v0-object/history/zzzzzzzzzzzz', { admin: false });
  assert.is(reply.status, 401);
});

test.run();
