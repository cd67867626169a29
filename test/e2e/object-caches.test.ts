/**
 * The Object API keeps objects and the titles of link targets in memory while the objects read
 * model stays unchanged (issue 3). Each test reads first (so the cache holds the object and its
 * link targets), changes something, and reads again: the change must show in the very next answer
 * after the command has returned — through the admin API, push-data style commits and events
 * appended behind the commands' back alike.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { objectStream } from '../../src/domain/objects/events.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, createObject, createReader, expectError, patchObject, readObject, type Reader } from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';
const BEHAVIOUR = 'svc:attribute:configured-behaviour';
const PARENT = 'svc:attribute:parent';

interface Ctx {
  svc: TestService;
  reader: Reader;
}
const test = suite<Ctx>('object API: cached objects and link titles', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.reader = await createReader(ctx.svc, { readAll: true });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const parentLink = async (reader: Reader, ref: string) => (await readObject(reader, ref)).attributes[PARENT][0];

test('the objects read model has a version, so objects and titles are cached', ({ svc }) => {
  assert.ok(svc.runner.version('objects') >= 0);
});

test('a link shows the target\'s new title in the next answer after the retitle', async ({ svc, reader }) => {
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Old' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Dept', [PARENT]: { type: 'link', ref: faculty.ref } });
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Old');
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Old');
  await patchObject(svc, faculty.ref, { attributes: { [TITLE]: 'Faculty of New' } });
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of New');
  assert.is((await readObject(reader, faculty.ref)).title, 'Faculty of New');
});

test('a link shows the target\'s behaviour as soon as it is configured, and loses it when removed', async ({ svc, reader }) => {
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Behaviour' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Dept', [PARENT]: { type: 'link', ref: faculty.ref } });
  assert.equal(Object.keys(await parentLink(reader, dept.ref)), ['type', 'ref', 'title']);
  await patchObject(svc, faculty.ref, { attributes: { [BEHAVIOUR]: { type: 'configuration-name', value: 'svc:faculty:behaviour' } } });
  const link = await parentLink(reader, dept.ref);
  assert.equal(Object.keys(link), ['type', 'ref', 'behaviour', 'title']);
  assert.is(link.behaviour, 'svc:faculty:behaviour');
  await patchObject(svc, faculty.ref, { changes: [{ op: 'remove', attribute: BEHAVIOUR }] });
  assert.is((await parentLink(reader, dept.ref)).behaviour, undefined);
});

test('a deleted link target keeps its title in links; the target itself shows deleted at once', async ({ svc, reader }) => {
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Gone' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Dept', [PARENT]: { type: 'link', ref: faculty.ref } });
  assert.is((await readObject(reader, faculty.ref)).deleted, false);
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Gone');
  assert.is((await call(svc, `/api/admin/objects/${faculty.ref}`, { method: 'DELETE' })).status, 200);
  assert.is((await readObject(reader, faculty.ref)).deleted, true);
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Gone');
  assert.is((await call(svc, `/api/admin/objects/${faculty.ref}/undelete`, { method: 'POST' })).status, 200);
  assert.is((await readObject(reader, faculty.ref)).deleted, false);
});

test('a cached object follows attribute, label and link changes at once (Object API and admin GET)', async ({ svc, reader }) => {
  const common = await createReader(svc, { readLabels: ['svc:label:common'] });
  const one = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'One' });
  const two = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Two' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Moving', [PARENT]: { type: 'link', ref: one.ref } });
  assert.is((await readObject(common, dept.ref)).recordVersion, 1);
  assert.is((await call(svc, `/api/admin/objects/${dept.ref}`)).body.object.recordVersion, 1);
  await patchObject(svc, dept.ref, { attributes: { [PARENT]: { type: 'link', ref: two.ref } } });
  const moved = await readObject(common, dept.ref);
  assert.is(moved.recordVersion, 2);
  assert.equal([moved.attributes[PARENT][0].ref, moved.attributes[PARENT][0].title], [two.ref, 'Two']);
  assert.is((await call(svc, `/api/admin/objects/${dept.ref}`)).body.object.attributes[PARENT][0].title, 'Two');
  await patchObject(svc, dept.ref, { labels: { remove: ['svc:label:common'], add: ['svc:label:confidential'] } });
  expectError(await common.object(dept.ref), 400, 'svc:api-v0:object:no-such-object');
  assert.is((await readObject(reader, dept.ref)).recordVersion, 3);
});

test('an unknown ref answered once is served as soon as an object with it exists', async ({ svc, reader }) => {
  const ref = 'zzzzzzzzzzz0';
  expectError(await reader.object(ref), 400, 'svc:api-v0:object:no-such-object');
  const created = await createObject(svc, 'phd:type:project', { [TITLE]: 'Somewhere else' });
  expectError(await reader.object(ref), 400, 'svc:api-v0:object:no-such-object');
  assert.is((await readObject(reader, created.ref)).title, 'Somewhere else');
});

test('changes appended behind the commands\' back show once the projection has them', async ({ svc, reader }) => {
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Events' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Dept', [PARENT]: { type: 'link', ref: faculty.ref } });
  const before = await readObject(reader, faculty.ref);
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Events');
  // The event a retitle records, appended directly to the store.
  const stream = objectStream(faculty.ref);
  const { position } = await svc.engines.events.append(
    stream,
    [{ type: 'ObjectAttributesChanged', data: { ref: faculty.ref, set: { [TITLE]: [{ type: 'text', value: 'Faculty of Appended' }] } } }],
    before.recordVersion - 1,
  );
  await svc.runner.waitFor(position);
  assert.is((await readObject(reader, faculty.ref)).title, 'Faculty of Appended');
  assert.is((await parentLink(reader, dept.ref)).title, 'Faculty of Appended');
});

test.run();
