/**
 * Object API v0, GET /api/v0-object/ref/<ref>?sources=... (interface.md "Get object", "Errors";
 * haplo-behaviour.md §5.2-§5.4): the serialised object, its key order, url and dates, the sources
 * and their additions, the error kinds, and read permission by label.
 *
 * The service runs on a hand-moved clock, so creation and modification dates can be asserted exactly.
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
  expectError,
  ISO_MS,
  ManualClock,
  patchObject,
  readObject,
  REF,
  setUser,
  type Reader,
} from '../support/fixtures.ts';

/** Given with a path and a trailing slash: the service must normalise it. */
const BASE_GIVEN = 'https://svc.example.org/app/';
const BASE = 'https://svc.example.org/app';
const SOURCES_MESSAGE =
  'Sources must be specified as parameter. Use ?sources=NONE for basic object serialisation, ?sources=ALL for everything (discouraged), or ?sources=source1,source2,... to specify exact sources required.';
const TITLE = 'dc:attribute:title';

interface Ctx {
  svc: TestService;
  clock: ManualClock;
  reader: Reader;
  /** A user whose profile other objects link to. */
  user: { username: string; ref: string };
}
const clock = new ManualClock(Date.parse('2024-01-14T17:05:18.123Z'));
const test = suite<Ctx>('object API v0: get object', { clock } as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: BASE_GIVEN }, ctx.clock.fn);
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.user = await createUser(ctx.svc, { first: 'Marie', last: 'Curie', email: 'marie@example.org' });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const workflow = async (svc: TestService, ref: string, body: Record<string, unknown>) => {
  const reply = await call(svc, `/api/admin/objects/${ref}/workflows`, { method: 'POST', body });
  assert.is(reply.status, 201, JSON.stringify(reply.body));
  assert.equal(Object.keys(reply.body), ['id']);
  return reply.body.id as string;
};
const transition = async (svc: TestService, id: string, body: Record<string, unknown>) => {
  const reply = await call(svc, `/api/admin/workflows/${id}/transition`, { method: 'POST', body });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  return reply.body;
};

// ---------------------------------------------------------------------------------------------
// The serialised object
// ---------------------------------------------------------------------------------------------

test('success envelope {success, kind, object} and the complete serialised object, keys in order', async ({ svc, clock, reader }) => {
  clock.set('2024-02-03T04:05:06.789Z');
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Électricité & Magnetism: A Study!' });
  const reply = await reader.object(ref, 'NONE');
  assert.is(reply.status, 200);
  assert.match(reply.contentType, 'application/json');
  assert.equal(Object.keys(reply.body), ['success', 'kind', 'object']);
  assert.is(reply.body.success, true);
  assert.is(reply.body.kind, 'svc:api-v0:object:serialised');
  const o = reply.body.object;
  assert.equal(Object.keys(o), ['kind', 'sources', 'ref', 'url', 'recordVersion', 'title', 'labels', 'deleted', 'creationDate', 'lastModificationDate', 'type', 'attributes']);
  const typeRef = o.attributes['dc:attribute:type']?.[0]?.ref;
  const labelRef = o.labels[0]?.ref;
  assert.match(typeRef, REF);
  assert.match(labelRef, REF);
  assert.equal(o, {
    kind: 'svc:object:0',
    sources: [],
    ref,
    url: `${BASE}/${ref}/electricite-magnetism-a-study`,
    recordVersion: 1,
    title: 'Électricité & Magnetism: A Study!',
    labels: [{ ref: labelRef, title: 'Common', code: 'svc:label:common' }],
    deleted: false,
    creationDate: '2024-02-03T04:05:06.789Z',
    lastModificationDate: '2024-02-03T04:05:06.789Z',
    type: { code: 'phd:type:project', name: 'PhD project', rootCode: 'phd:type:project', annotations: [] },
    attributes: {
      'dc:attribute:type': [{ type: 'link', ref: typeRef, code: 'phd:type:project', title: 'PhD project' }],
      [TITLE]: [{ type: 'text', value: 'Électricité & Magnetism: A Study!' }],
    },
  });
});

test('schema refs are stable: the same label and type refs on every object', async ({ svc, reader }) => {
  const a = await readObject(reader, (await createObject(svc, 'phd:type:project', { [TITLE]: 'A' })).ref);
  const b = await readObject(reader, (await createObject(svc, 'phd:type:project', { [TITLE]: 'B' })).ref);
  assert.is(a.labels[0].ref, b.labels[0].ref);
  assert.is(a.attributes['dc:attribute:type'][0].ref, b.attributes['dc:attribute:type'][0].ref);
  assert.is.not(a.labels[0].ref, a.attributes['dc:attribute:type'][0].ref);
});

test('url: base URL + /<ref>/<title-slug>; no slug without a title; long titles are cut', async ({ svc, reader }) => {
  const plain = await createObject(svc, 'svc:type:organisation', { [TITLE]: '  The  Royal   Society -- of London  ' });
  assert.is((await readObject(reader, plain.ref)).url, `${BASE}/${plain.ref}/the-royal-society-of-london`);
  const untitled = await createObject(svc, 'svc:type:organisation', {});
  const o = await readObject(reader, untitled.ref);
  assert.is(o.title, '');
  assert.is(o.url, `${BASE}/${untitled.ref}`);
  const long = await createObject(svc, 'svc:type:organisation', { [TITLE]: 'word '.repeat(40) });
  const url = (await readObject(reader, long.ref)).url as string;
  const slug = url.slice(`${BASE}/${long.ref}/`.length);
  assert.ok(url.startsWith(`${BASE}/${long.ref}/word-word`), url);
  assert.ok(slug.length <= 64 && !slug.endsWith('-'), slug);
});

test('url follows a retitle at once', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'svc:type:organisation', { [TITLE]: 'Old Name' });
  await patchObject(svc, ref, { attributes: { [TITLE]: 'New Name' } });
  assert.is((await readObject(reader, ref)).url, `${BASE}/${ref}/new-name`);
});

test('creationDate and lastModificationDate: ISO 8601 UTC with milliseconds and Z, from the service clock', async ({ svc, clock, reader }) => {
  clock.set('2024-05-06T07:08:09.010Z');
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Clocked' });
  clock.set('2024-05-07T00:00:00.000Z');
  await patchObject(svc, ref, { attributes: { [TITLE]: 'Clocked again' } });
  const o = await readObject(reader, ref);
  assert.match(o.creationDate, ISO_MS);
  assert.match(o.lastModificationDate, ISO_MS);
  assert.is(o.creationDate, '2024-05-06T07:08:09.010Z');
  assert.is(o.lastModificationDate, '2024-05-07T00:00:00.000Z');
  clock.set('2024-05-08T12:00:00.500Z');
  await call(svc, `/api/admin/objects/${ref}`, { method: 'DELETE' });
  const deleted = await readObject(reader, ref);
  assert.is(deleted.lastModificationDate, '2024-05-08T12:00:00.500Z');
  assert.is(deleted.creationDate, '2024-05-06T07:08:09.010Z');
});

test('type: a subtype names its root in rootCode', async ({ svc, reader }) => {
  const part = await createObject(svc, 'phd:type:project-part-time', { [TITLE]: 'Part time' });
  assert.equal((await readObject(reader, part.ref)).type, {
    code: 'phd:type:project-part-time',
    name: 'Part-time PhD project',
    rootCode: 'phd:type:project',
    annotations: [],
  });
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Law' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Law', 'svc:attribute:parent': { type: 'link', ref: faculty.ref } });
  assert.equal((await readObject(reader, dept.ref)).type, { code: 'svc:type:department', name: 'Department', rootCode: 'svc:type:organisation', annotations: [] });
  const org = await createObject(svc, 'svc:type:organisation', { [TITLE]: 'Org' });
  assert.is((await readObject(reader, org.ref)).type.rootCode, 'svc:type:organisation');
});

test('an object with a configured behaviour has behaviour right after url', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'svc:type:faculty', {
    [TITLE]: 'Faculty of Arts',
    'svc:attribute:configured-behaviour': { type: 'configuration-name', value: 'svc:faculty:arts' },
  });
  const o = await readObject(reader, ref);
  assert.equal(Object.keys(o).slice(0, 6), ['kind', 'sources', 'ref', 'url', 'behaviour', 'recordVersion']);
  assert.is(o.behaviour, 'svc:faculty:arts');
});

test('the attributes keep the order of their values', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', {
    [TITLE]: 'Ordered',
    'phd:attribute:notes': [
      { type: 'text-multiline', value: 'third?' },
      { type: 'text-multiline', value: 'first?' },
      { type: 'text-multiline', value: 'second?' },
    ],
  });
  const o = await readObject(reader, ref);
  assert.equal(o.attributes['phd:attribute:notes'].map((v: any) => v.value), ['third?', 'first?', 'second?']);
});

// ---------------------------------------------------------------------------------------------
// Sources
// ---------------------------------------------------------------------------------------------

test('sources missing or empty -> 400 svc:api-v0:object:sources-not-specified with the exact message', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'No sources' });
  expectError(await reader.object(ref, null), 400, 'svc:api-v0:object:sources-not-specified', SOURCES_MESSAGE);
  expectError(await reader.object(ref, ''), 400, 'svc:api-v0:object:sources-not-specified', SOURCES_MESSAGE);
});

test('sources=NONE: no source additions', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'None', 'phd:attribute:researcher': { type: 'link', ref: (await createUser(svc)).ref } });
  await workflow(svc, ref, { workType: 'phd:workflow:registration', state: 'open' });
  const o = await readObject(reader, ref, 'NONE');
  assert.equal(o.sources, []);
  assert.not.ok('workflows' in o);
  assert.not.ok('username' in o);
  assert.not.ok('username' in o.attributes['phd:attribute:researcher'][0]);
});

test('sources=ALL: every source, in sort order, with their additions last', async ({ svc, reader, user }) => {
  const o = await readObject(reader, user.ref, 'ALL');
  assert.equal(o.sources, ['std:workunit', 'std:workflow', 'std:username']);
  assert.equal(Object.keys(o).slice(-3), ['attributes', 'workflows', 'username']);
  assert.equal(o.workflows, []);
  assert.is(o.username, user.username);
});

test('sources are listed in sort order, once each, whatever order they are asked in', async ({ reader, user }) => {
  assert.equal((await readObject(reader, user.ref, 'std:username,std:workunit,std:username')).sources, ['std:workunit', 'std:username']);
  assert.equal((await readObject(reader, user.ref, 'std:workflow,std:workunit')).sources, ['std:workunit', 'std:workflow']);
});

test('std:workunit adds workflows {workType, createdAt, openedAt, deadline, closed, data, tags}', async ({ svc, clock, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'With workflows' });
  clock.set('2024-06-01T09:00:00.250Z');
  const first = await workflow(svc, ref, {
    workType: 'phd:workflow:registration',
    state: 'submitted',
    deadline: '2024-07-01T00:00:00Z',
    data: { supervisorApproved: true, notes: ['a'] },
    tags: { faculty: 'arts' },
  });
  clock.set('2024-06-02T09:00:00.000Z');
  await workflow(svc, ref, { workType: 'phd:workflow:progress', state: 'open' });
  const other = await createObject(svc, 'phd:type:project', { [TITLE]: 'Another' });
  await workflow(svc, other.ref, { workType: 'phd:workflow:registration', state: 'open' });

  let o = await readObject(reader, ref, 'std:workunit');
  assert.equal(o.sources, ['std:workunit']);
  assert.is(o.workflows.length, 2, 'only this object\'s work units');
  for (const w of o.workflows) assert.equal(Object.keys(w), ['workType', 'createdAt', 'openedAt', 'deadline', 'closed', 'data', 'tags']);
  const [w1, w2] = o.workflows;
  assert.is(w1.workType, 'phd:workflow:registration');
  assert.is(w1.createdAt, '2024-06-01T09:00:00.250Z');
  assert.match(w1.openedAt, ISO_MS);
  assert.is(w1.deadline, '2024-07-01T00:00:00.000Z');
  assert.is(w1.closed, false);
  assert.equal(w1.data, { supervisorApproved: true, notes: ['a'] });
  assert.equal(w1.tags, { faculty: 'arts' });
  assert.is(w2.workType, 'phd:workflow:progress');
  assert.is(w2.createdAt, '2024-06-02T09:00:00.000Z');
  assert.is(w2.deadline, null);
  assert.equal(w2.data, {});
  assert.equal(w2.tags, {});

  const t = await transition(svc, first, { state: 'finished', closed: true });
  assert.is(t.state, 'finished');
  assert.is(t.closed, true);
  o = await readObject(reader, ref, 'std:workunit');
  assert.is(o.workflows[0].closed, true, 'the transition is visible at once');
  assert.not.ok('state' in o.workflows[0], 'state is added by std:workflow only');
});

test('a new work unit is opened when it is created: openedAt equals createdAt (service clock)', async ({ svc, clock, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Opened' });
  clock.set('2024-06-10T10:10:10.101Z');
  await workflow(svc, ref, { workType: 'phd:workflow:registration', state: 'open' });
  const [w] = (await readObject(reader, ref, 'std:workunit')).workflows;
  assert.is(w.createdAt, '2024-06-10T10:10:10.101Z');
  assert.is(w.openedAt, w.createdAt);
});

test('std:workflow without std:workunit -> 400 svc:api-v0:generic:exception naming the dependency (as Haplo)', async ({ reader, user }) => {
  expectError(await reader.object(user.ref, 'std:workflow'), 400, 'svc:api-v0:generic:exception', 'Source std:workflow depends on std:workunit which has not been used.');
  expectError(await reader.object(user.ref, 'std:workflow,std:username'), 400, 'svc:api-v0:generic:exception');
});

test('std:workflow,std:workunit adds state, target and url to each workflow', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Examined' });
  const id = await workflow(svc, ref, { workType: 'phd:workflow:examination', state: 'submitted' });
  let o = await readObject(reader, ref, 'std:workflow,std:workunit');
  assert.equal(o.sources, ['std:workunit', 'std:workflow']);
  assert.equal(Object.keys(o.workflows[0]), ['workType', 'createdAt', 'openedAt', 'deadline', 'closed', 'data', 'tags', 'state', 'target', 'url']);
  assert.is(o.workflows[0].target, null, 'no target: null');
  const other = await createObject(svc, 'phd:type:project', { [TITLE]: 'Targeted' });
  const targeted = await workflow(svc, other.ref, { workType: 'phd:workflow:progress', state: 'wait_supervisor', tags: { target: 'supervisor' } });
  const [t] = (await readObject(reader, other.ref, 'std:workunit,std:workflow')).workflows;
  assert.is(t.target, 'supervisor', 'the work unit\'s target tag');
  assert.match(t.url, targeted);
  assert.is(o.workflows[0].state, 'submitted');
  assert.is(o.workflows[0].closed, false);
  assert.ok(o.workflows[0].url.startsWith(`${BASE}/`), o.workflows[0].url);
  assert.match(o.workflows[0].url, id);

  await transition(svc, id, { state: 'finished', closed: true });
  o = await readObject(reader, ref, 'std:workflow,std:workunit');
  assert.is(o.workflows[0].state, 'finished');
  assert.is(o.workflows[0].closed, true);
  await transition(svc, id, { state: 'reopened', closed: false });
  o = await readObject(reader, ref, 'std:workunit,std:workflow');
  assert.is(o.workflows[0].state, 'reopened');
  assert.is(o.workflows[0].closed, false);
});

test('workflow admin errors: bad workType/state/deadline -> 400, unknown workflow -> 404', async ({ svc }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Workflow errors' });
  const post = (body: unknown) => call(svc, `/api/admin/objects/${ref}/workflows`, { method: 'POST', body });
  expectError(await post({ workType: 'not namespaced', state: 'open' }), 400, 'svc:workflow:invalid', /workType/);
  expectError(await post({ workType: 'phd:workflow:x', state: 'Has Spaces' }), 400, 'svc:workflow:invalid', /state/);
  expectError(await post({ workType: 'phd:workflow:x', state: 'open', deadline: 'next week' }), 400, 'svc:api:bad-request', /deadline/);
  expectError(await post({ workType: 'phd:workflow:x' }), 400, 'svc:api:bad-request', /state/);
  expectError(await call(svc, '/api/admin/workflows/zzzzzzzzzzzz/transition', { method: 'POST', body: { state: 'finished', closed: true } }), 404, 'svc:workflow:no-such-workflow');
});

test('std:username adds username to links to a user\'s profile, and top-level on the profile itself', async ({ svc, reader, user }) => {
  const notAUser = await createObject(svc, 'svc:type:person', { [TITLE]: 'Pierre Curie' });
  const { ref } = await createObject(svc, 'phd:type:project', {
    [TITLE]: 'Radioactivity',
    'phd:attribute:researcher': { type: 'link', ref: user.ref },
    'phd:attribute:supervisor': { type: 'link', ref: notAUser.ref },
  });
  const o = await readObject(reader, ref, 'std:username');
  assert.equal(o.sources, ['std:username']);
  assert.equal(o.attributes['phd:attribute:researcher'], [{ type: 'link', ref: user.ref, title: 'Marie Curie', username: user.username }]);
  assert.equal(o.attributes['phd:attribute:supervisor'], [{ type: 'link', ref: notAUser.ref, title: 'Pierre Curie' }]);
  assert.not.ok('username' in o, 'the project is not a user\'s profile');

  const profile = await readObject(reader, user.ref, 'std:username');
  assert.is(profile.username, user.username);
  assert.is(Object.keys(profile).at(-1), 'username');
  const without = await readObject(reader, user.ref, 'NONE');
  assert.not.ok('username' in without);
});

test('the user\'s profile: a person titled with the name, with name and email attributes', async ({ reader, user }) => {
  const o = await readObject(reader, user.ref, 'NONE');
  assert.is(o.type.code, 'svc:type:person');
  assert.is(o.title, 'Marie Curie');
  assert.equal(o.attributes['svc:attribute:name'], [{ type: 'person-name', value: { first: 'Marie', last: 'Curie', culture: 'western' }, readable: 'Marie Curie' }]);
  assert.equal(o.attributes['svc:attribute:email'], [{ type: 'email-address', value: 'marie@example.org' }]);
});

test('unknown source names are ignored, as Haplo does: they are not listed in sources', async ({ reader, user }) => {
  assert.equal((await readObject(reader, user.ref, 'svc:nope')).sources, []);
  assert.equal((await readObject(reader, user.ref, 'none')).sources, []);
  const o = await readObject(reader, user.ref, 'std:workunit,hres:project-journal:dates,std:nope');
  assert.equal(o.sources, ['std:workunit']);
  assert.equal(o.workflows, []);
});

test('svc: aliases of the std: names are accepted and listed under the std: name', async ({ reader, user }) => {
  assert.equal((await readObject(reader, user.ref, 'svc:workunit,svc:workflow,svc:username')).sources, ['std:workunit', 'std:workflow', 'std:username']);
  assert.equal((await readObject(reader, user.ref, 'svc:workunit,std:workunit')).sources, ['std:workunit']);
  expectError(await reader.object(user.ref, 'svc:workflow'), 400, 'svc:api-v0:generic:exception', 'Source std:workflow depends on std:workunit which has not been used.');
});

test('sources of 1,024 characters or more act as NONE; 1,023 are read', async ({ reader, user }) => {
  const padded = (length: number) => `std:username,${'x'.repeat(length - 'std:username,'.length)}`;
  const long = await readObject(reader, user.ref, padded(1024));
  assert.equal(long.sources, []);
  assert.not.ok('username' in long);
  assert.equal((await readObject(reader, user.ref, padded(1023))).sources, ['std:username']);
});

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

test('an unknown ref -> 400 svc:api-v0:object:no-such-object "Object <ref> does not exist"', async ({ reader }) => {
  expectError(await reader.object('zzzzzzzzzzzz', 'NONE'), 400, 'svc:api-v0:object:no-such-object', 'Object zzzzzzzzzzzz does not exist');
  expectError(await reader.object('0123456789ab', 'ALL'), 400, 'svc:api-v0:object:no-such-object', 'Object 0123456789ab does not exist');
});

test('a malformed ref is a JSON 400, never HTML', async ({ reader }) => {
  for (const bad of ['NOT-A-REF', 'abc', 'ZZZZZZZZZZZZ', 'zzzzzzzzzzzzz', 'iiiiiiiiiiii', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', '%E0%A4%A', '..%2F..%2Fetc']) {
    const reply = await reader.get(`/api/v0-object/ref/${bad}?sources=NONE`);
    assert.is(reply.status, 400, `${bad}: ${JSON.stringify(reply.body)}`);
    assert.match(reply.contentType, 'application/json', bad);
    const e = expectError(reply, 400, reply.body.kind);
    assert.match(e.kind, /^svc:/);
  }
});

test('a path without a ref is a JSON error', async ({ reader }) => {
  const reply = await reader.get('/api/v0-object/ref/?sources=NONE');
  assert.ok(reply.status === 400 || reply.status === 404, String(reply.status));
  assert.match(reply.contentType, 'application/json');
});

test('the Object API is read-only: other methods are a JSON 405 with Allow', async ({ svc, reader, user }) => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    const reply = await call(svc, `/api/v0-object/ref/${user.ref}?sources=NONE`, { method, admin: false, headers: { Authorization: basic(reader.key) } });
    expectError(reply, 405, 'svc:api:method-not-allowed');
    assert.match(reply.headers.get('allow') ?? '', 'GET');
  }
});

test('a deleted object is still served, with deleted: true', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Gone' });
  await call(svc, `/api/admin/objects/${ref}`, { method: 'DELETE' });
  const o = await readObject(reader, ref, 'ALL');
  assert.is(o.deleted, true);
  assert.is(o.title, 'Gone');
});

// ---------------------------------------------------------------------------------------------
// Read permission by label
// ---------------------------------------------------------------------------------------------

test('an object the key\'s user may not read is no-such-object, exactly like a missing one', async ({ svc, reader }) => {
  const common = await createReader(svc, { readLabels: ['svc:label:common'] });
  const secret = await createObject(svc, 'phd:type:project', { [TITLE]: 'Secret project' }, ['svc:label:confidential']);
  const denied = await common.object(secret.ref, 'NONE');
  const e = expectError(denied, 400, 'svc:api-v0:object:no-such-object', `Object ${secret.ref} does not exist`);
  const missing = await common.object('zzzzzzzzzzzz', 'NONE');
  assert.equal(Object.keys(denied.body), Object.keys(missing.body));
  assert.is(e.message.replace(secret.ref, 'X'), (missing.body.error.message as string).replace('zzzzzzzzzzzz', 'X'));
  for (const sources of ['ALL', 'std:workunit', 'std:username']) expectError(await common.object(secret.ref, sources), 400, 'svc:api-v0:object:no-such-object');

  const visible = await createObject(svc, 'phd:type:project', { [TITLE]: 'Open project' });
  assert.is((await readObject(common, visible.ref)).title, 'Open project', 'the common reader reads common objects');
  assert.is((await readObject(reader, secret.ref)).title, 'Secret project', 'a readAll reader reads everything');
});

test('permission changes apply at once: labels of the object, groups of the user', async ({ svc }) => {
  const common = await createReader(svc, { readLabels: ['svc:label:common'] });
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Becomes visible' }, ['svc:label:confidential']);
  expectError(await common.object(ref), 400, 'svc:api-v0:object:no-such-object');
  await patchObject(svc, ref, { labels: { add: ['svc:label:common'] } });
  assert.is((await readObject(common, ref)).title, 'Becomes visible');
  await patchObject(svc, ref, { labels: { remove: ['svc:label:common'] } });
  expectError(await common.object(ref), 400, 'svc:api-v0:object:no-such-object');

  const confidentialGroup = await createReader(svc, { readLabels: ['svc:label:confidential'] });
  await setUser(svc, common.username, { groups: [common.group!, confidentialGroup.group!] });
  assert.is((await readObject(common, ref)).title, 'Becomes visible', 'a new group grants access at once');
  await setUser(svc, common.username, { groups: [common.group!] });
  expectError(await common.object(ref), 400, 'svc:api-v0:object:no-such-object');
});

test('a user in no group reads nothing; an object with no labels is read only by readAll', async ({ svc, reader }) => {
  const nobody = await createReader(svc, null);
  const commonObject = await createObject(svc, 'phd:type:project', { [TITLE]: 'Common' });
  expectError(await nobody.object(commonObject.ref), 400, 'svc:api-v0:object:no-such-object');
  expectError(await nobody.object(nobody.profileRef), 400, 'svc:api-v0:object:no-such-object');
  const unlabelled = await createObject(svc, 'phd:type:project', { [TITLE]: 'Unlabelled' }, []);
  const common = await createReader(svc, { readLabels: ['svc:label:common', 'svc:label:confidential', 'svc:label:archived'] });
  expectError(await common.object(unlabelled.ref), 400, 'svc:api-v0:object:no-such-object');
  const o = await readObject(reader, unlabelled.ref);
  assert.equal(o.labels, []);
});

test('a deleted object the user may read is served deleted; one it may not read stays hidden', async ({ svc }) => {
  const common = await createReader(svc, { readLabels: ['svc:label:common'] });
  const open = await createObject(svc, 'phd:type:project', { [TITLE]: 'Deleted open' });
  const secret = await createObject(svc, 'phd:type:project', { [TITLE]: 'Deleted secret' }, ['svc:label:confidential']);
  await call(svc, `/api/admin/objects/${open.ref}`, { method: 'DELETE' });
  await call(svc, `/api/admin/objects/${secret.ref}`, { method: 'DELETE' });
  assert.is((await readObject(common, open.ref)).deleted, true);
  expectError(await common.object(secret.ref), 400, 'svc:api-v0:object:no-such-object');
});

test.run();
