/**
 * Object API v0, GET /api/v0-object/linked/<ref> (haplo-behaviour.md §5.2): refs (or serialised
 * objects) of the objects linking to a ref, filtered by type (subtypes included) and attribute,
 * paged with start, and the bad-query errors.
 *
 * The service clock ticks one millisecond per reading, so creation order (the result order) is strict.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { call, createObject, createReader, expectError, patchObject, REF, type Reader } from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';
const KIND = 'svc:api-v0:object:store-query-results';

interface Ctx {
  svc: TestService;
  reader: Reader;
  /** The person the projects link to. */
  person: string;
  /** full-time project linking as researcher */
  a: string;
  /** part-time project linking as researcher and supervisor */
  b: string;
  /** full-time project linking as supervisor */
  c: string;
  /** a department (not a project) unrelated to the person, linking to the faculty */
  dept: string;
  faculty: string;
}
const test = suite<Ctx>('object API v0: linked objects', {} as Ctx);

let tick = Date.parse('2024-03-01T00:00:00.000Z');

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: 'https://svc.example.org' }, () => (tick += 1));
  const { svc } = ctx;
  ctx.reader = await createReader(svc, { readAll: true });
  ctx.person = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Linked Person' })).ref;
  const link = (ref: string) => ({ type: 'link', ref });
  ctx.a = (await createObject(svc, 'phd:type:project', { [TITLE]: 'A', 'phd:attribute:researcher': link(ctx.person) })).ref;
  ctx.b = (await createObject(svc, 'phd:type:project-part-time', { [TITLE]: 'B', 'phd:attribute:researcher': link(ctx.person), 'phd:attribute:supervisor': link(ctx.person) })).ref;
  ctx.c = (await createObject(svc, 'phd:type:project', { [TITLE]: 'C', 'phd:attribute:supervisor': link(ctx.person) })).ref;
  ctx.faculty = (await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty' })).ref;
  ctx.dept = (await createObject(svc, 'svc:type:department', { [TITLE]: 'Dept', 'svc:attribute:parent': link(ctx.faculty) })).ref;
  await createObject(svc, 'phd:type:project', { [TITLE]: 'Unrelated' });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const linked = (reader: Reader, ref: string, query = '') => reader.get(`/api/v0-object/linked/${ref}${query ? `?${query}` : ''}`);

const refsOf = async (reader: Reader, ref: string, query = '') => {
  const reply = await linked(reader, ref, query);
  assert.is(reply.status, 200, `${query}: ${JSON.stringify(reply.body)}`);
  assert.is(reply.body.success, true);
  assert.is(reply.body.kind, KIND);
  return reply.body as { results: { count: number; start: number; end: number; more: boolean }; refs: string[] };
};

test('refs of every object linking to the ref, oldest first, each once, with {count, start, end, more}', async ({ reader, person, a, b, c }) => {
  const body = await refsOf(reader, person);
  assert.equal(Object.keys(body), ['success', 'kind', 'results', 'refs']);
  assert.equal(body.results, { count: 3, start: 0, end: 3, more: false });
  assert.equal(body.refs, [a, b, c]);
});

test('an object nothing links to: count 0, no refs', async ({ reader, a }) => {
  const body = await refsOf(reader, a);
  assert.equal(body.results, { count: 0, start: 0, end: 0, more: false });
  assert.equal(body.refs, []);
});

test('type filter includes subtypes', async ({ reader, person, a, b, c, faculty, dept }) => {
  assert.equal((await refsOf(reader, person, 'type=phd:type:project')).refs, [a, b, c]);
  assert.equal((await refsOf(reader, person, 'type=phd:type:project-part-time')).refs, [b]);
  assert.equal((await refsOf(reader, person, 'type=svc:type:person')).refs, []);
  assert.equal((await refsOf(reader, faculty, 'type=svc:type:organisation')).refs, [dept]);
});

test('attribute filter, alone and with type', async ({ reader, person, a, b, c }) => {
  assert.equal((await refsOf(reader, person, 'attribute=phd:attribute:researcher')).refs, [a, b]);
  assert.equal((await refsOf(reader, person, 'attribute=phd:attribute:supervisor')).refs, [b, c]);
  const both = await refsOf(reader, person, 'attribute=phd:attribute:supervisor&type=phd:type:project-part-time');
  assert.equal(both.refs, [b]);
  assert.equal(both.results, { count: 1, start: 0, end: 1, more: false });
  assert.equal((await refsOf(reader, person, 'attribute=svc:attribute:department')).refs, []);
});

test('results=objects returns serialised objects and needs sources', async ({ reader, person, a, b, c }) => {
  const reply = await linked(reader, person, 'results=objects&sources=NONE');
  assert.is(reply.status, 200);
  assert.equal(Object.keys(reply.body), ['success', 'kind', 'results', 'objects']);
  assert.equal(reply.body.results, { count: 3, start: 0, end: 3, more: false });
  assert.equal(reply.body.objects.map((o: any) => o.ref), [a, b, c]);
  for (const o of reply.body.objects) {
    assert.is(o.kind, 'svc:object:0');
    assert.equal(o.sources, []);
  }
  const withSource = await linked(reader, person, 'results=objects&sources=std:workunit');
  assert.equal(withSource.body.objects[0].sources, ['std:workunit']);
  assert.equal(withSource.body.objects[0].workflows, []);
  expectError(await linked(reader, person, 'results=objects'), 400, 'svc:api-v0:object:sources-not-specified');
  expectError(await linked(reader, person, 'results=objects&sources=std:workflow'), 400, 'svc:api-v0:generic:exception');
});

test('results=refs is the default and may be given', async ({ reader, person, a, b, c }) => {
  assert.equal((await refsOf(reader, person, 'results=refs')).refs, [a, b, c]);
});

test('start pages through the results', async ({ reader, person, b, c }) => {
  const page = await refsOf(reader, person, 'start=1');
  assert.equal(page.results, { count: 3, start: 1, end: 3, more: false });
  assert.equal(page.refs, [b, c]);
  const last = await refsOf(reader, person, 'start=2');
  assert.equal(last.refs, [c]);
  assert.equal(last.results, { count: 3, start: 2, end: 3, more: false });
});

test('objects pages are 24 long: more is true until the last page', async ({ svc, reader }) => {
  const target = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Popular' })).ref;
  const linkers: string[] = [];
  for (let i = 0; i < 26; i++) {
    linkers.push((await createObject(svc, 'phd:type:project', { [TITLE]: `P${i}`, 'phd:attribute:researcher': { type: 'link', ref: target } })).ref);
  }
  const first = await linked(reader, target, 'results=objects&sources=NONE');
  assert.equal(first.body.results, { count: 26, start: 0, end: 24, more: true });
  assert.equal(first.body.objects.map((o: any) => o.ref), linkers.slice(0, 24));
  const second = await linked(reader, target, 'results=objects&sources=NONE&start=24');
  assert.equal(second.body.results, { count: 26, start: 24, end: 26, more: false });
  assert.equal(second.body.objects.map((o: any) => o.ref), linkers.slice(24));
  const refs = await refsOf(reader, target);
  assert.equal(refs.results, { count: 26, start: 0, end: 26, more: false }, 'refs pages are longer (256)');
  assert.equal(refs.refs, linkers);
  expectError(await linked(reader, target, 'start=26'), 400, 'svc:api-v0:object:bad-query', 'Requested start after end of results, count=26');
});

test('bad queries: unknown type, attribute, qualifier, results option; bad start', async ({ reader, person }) => {
  expectError(await linked(reader, person, 'type=phd:type:nope'), 400, 'svc:api-v0:object:bad-query', 'Unknown type: phd:type:nope');
  expectError(await linked(reader, person, 'attribute=phd:attribute:nope'), 400, 'svc:api-v0:object:bad-query', 'Unknown attribute: phd:attribute:nope');
  expectError(await linked(reader, person, 'qualifier=svc:qualifier:nope'), 400, 'svc:api-v0:object:bad-query', 'Unknown qualifier: svc:qualifier:nope');
  expectError(await linked(reader, person, 'results=xml'), 400, 'svc:api-v0:object:bad-query', 'Unknown results option: xml');
  for (const start of ['abc', '-1', '1.5', '', '1e2']) {
    expectError(await linked(reader, person, `start=${start}`), 400, 'svc:api-v0:object:bad-query', 'start is not a number');
  }
  expectError(await linked(reader, person, 'start=3'), 400, 'svc:api-v0:object:bad-query', 'Requested start after end of results, count=3');
  expectError(await linked(reader, person, 'start=99999'), 400, 'svc:api-v0:object:bad-query', 'Requested start after end of results, count=3');
});

test('unknown ref -> no-such-object; malformed ref -> JSON 400', async ({ reader }) => {
  expectError(await linked(reader, 'zzzzzzzzzzzz'), 400, 'svc:api-v0:object:no-such-object', 'Object zzzzzzzzzzzz does not exist');
  const bad = await linked(reader, 'NOT-A-REF');
  assert.is(bad.status, 400);
  assert.match(bad.contentType, 'application/json');
});

test('deleted linking objects are left out; undeleted ones come back', async ({ svc, reader }) => {
  const target = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Target' })).ref;
  const x = (await createObject(svc, 'phd:type:project', { [TITLE]: 'X', 'phd:attribute:researcher': { type: 'link', ref: target } })).ref;
  const y = (await createObject(svc, 'phd:type:project', { [TITLE]: 'Y', 'phd:attribute:researcher': { type: 'link', ref: target } })).ref;
  await call(svc, `/api/admin/objects/${x}`, { method: 'DELETE' });
  assert.equal((await refsOf(reader, target)).refs, [y]);
  await call(svc, `/api/admin/objects/${x}/undelete`, { method: 'POST' });
  assert.equal((await refsOf(reader, target)).refs, [x, y]);
});

test('objects the reader may not read are left out, and count does not reveal them', async ({ svc }) => {
  const common = await createReader(svc, { readLabels: ['svc:label:common'] });
  const target = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Shared' })).ref;
  const open = (await createObject(svc, 'phd:type:project', { [TITLE]: 'Open', 'phd:attribute:researcher': { type: 'link', ref: target } })).ref;
  await createObject(svc, 'phd:type:project', { [TITLE]: 'Hidden', 'phd:attribute:researcher': { type: 'link', ref: target } }, ['svc:label:confidential']);
  const body = await refsOf(common, target);
  assert.equal(body.refs, [open]);
  assert.is(body.results.count, 1);
  const hiddenTarget = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Hidden target' }, ['svc:label:confidential'])).ref;
  expectError(await linked(common, hiddenTarget), 400, 'svc:api-v0:object:no-such-object');
});

test('read-your-writes: links added and removed by PATCH show at once; the type filter follows a type change', async ({ svc, reader }) => {
  const target = (await createObject(svc, 'svc:type:person', { [TITLE]: 'Moving target' })).ref;
  const p = (await createObject(svc, 'phd:type:project', { [TITLE]: 'Mover' })).ref;
  assert.equal((await refsOf(reader, target)).refs, []);
  await patchObject(svc, p, { changes: [{ op: 'append', attribute: 'phd:attribute:supervisor', values: [{ type: 'link', ref: target }] }] });
  assert.equal((await refsOf(reader, target, 'attribute=phd:attribute:supervisor')).refs, [p]);
  assert.equal((await refsOf(reader, target, 'type=phd:type:project-part-time')).refs, []);
  const typeRef = (await call(svc, `/api/admin/objects/${p}`)).body.object.attributes['dc:attribute:type'][0].ref;
  assert.match(typeRef, REF);
  const partTime = (await call(svc, `/api/admin/objects/${(await createObject(svc, 'phd:type:project-part-time', { [TITLE]: 'pt' })).ref}`)).body.object.attributes['dc:attribute:type'][0].ref;
  await patchObject(svc, p, { attributes: { 'dc:attribute:type': { type: 'link', ref: partTime } } });
  assert.equal((await refsOf(reader, target, 'type=phd:type:project-part-time')).refs, [p], 'the linking object is now part-time');
  await patchObject(svc, p, { changes: [{ op: 'remove', attribute: 'phd:attribute:supervisor' }] });
  assert.equal((await refsOf(reader, target)).refs, []);
});

test.run();
