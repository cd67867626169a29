/**
 * Live collection-data answers keep the collection's rows between versions of the projection:
 * after a write only the rows of the objects its events are about, and the rows that read those
 * objects through links, are read again; every change shows at once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { collectionNames } from '../../src/projections/reporting/collection-fold.ts';

interface Ctx {
  svc: TestService;
  common: Record<string, string>;
  /** Rows read from the store since the last reset (by id, or a page of the whole collection). */
  rowReads: string[];
}

const test = suite<Ctx>('Reporting API: rows kept between versions', {} as Ctx);
const DATA = '/api/reporting/v0/collection-data/phd_projects';
const TITLE = 'dc:attribute:title';

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
const created = async (svc: TestService, body: unknown) => {
  const res = await json(svc, '/api/admin/objects', body);
  assert.is(res.status, 201, await res.clone().text());
  return ((await res.json()) as { ref: string }).ref;
};
const patch = async (svc: TestService, ref: string, body: unknown) => {
  const res = await json(svc, `/api/admin/objects/${ref}`, body, 'PATCH');
  assert.is(res.status, 200, await res.clone().text());
};
type Answer = { columns: string[]; rows: unknown[][]; objects: Record<string, { title: string }> };
const answer = async (ctx: Ctx): Promise<Answer> => {
  const res = await ctx.svc.request(DATA, { admin: false, headers: ctx.common });
  assert.is(res.status, 200);
  return (await res.json()) as Answer;
};
const cell = (a: Answer, row: string, column: string) => a.rows.find((r) => r[0] === row)?.[a.columns.indexOf(column)];

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  await json(ctx.svc, '/api/admin/groups', { code: 'svc:group:reporting', title: 'Reporting', readLabels: ['svc:label:common'] });
  await json(ctx.svc, '/api/admin/users', { username: 'reporter', name: { first: 'Re', last: 'Porter' }, groups: ['svc:group:reporting'] });
  const key = (await (await json(ctx.svc, '/api/admin/users/reporter/api-keys', { path: '/api/reporting/v0/' })).json()) as { key: string };
  ctx.common = { Authorization: `Basic ${Buffer.from(`svc:${key.key}`).toString('base64')}` };
  ctx.rowReads = [];
  const reads = ctx.svc.engines.reads;
  const rows = collectionNames('phd_projects').rows;
  const getMany = reads.getMany.bind(reads);
  reads.getMany = (async (collection: string, ids: readonly string[]) => {
    if (collection === rows) ctx.rowReads.push(...ids);
    return getMany(collection, ids);
  }) as typeof reads.getMany;
  const find = reads.find.bind(reads);
  reads.find = (async (collection: string, query: unknown) => {
    const found = await find(collection, query as never);
    if (collection === rows) ctx.rowReads.push(...found.map((d) => d.id));
    return found;
  }) as typeof reads.find;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('after a write only the rows it touches are read again; changes, new, hidden and linked rows show at once', async (ctx) => {
  const faculty = await created(ctx.svc, { type: 'svc:type:faculty', attributes: { [TITLE]: 'Faculty A' } });
  const other = await created(ctx.svc, { type: 'svc:type:faculty', attributes: { [TITLE]: 'Faculty B' } });
  const dept = await created(ctx.svc, { type: 'svc:type:department', attributes: { [TITLE]: 'Dept', 'svc:attribute:parent': { type: 'link', ref: faculty } } });
  const projects: string[] = [];
  for (let i = 0; i < 10; i++) {
    projects.push(await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: `Project ${i}`, ...(i < 3 ? { 'svc:attribute:department': { type: 'link', ref: dept } } : {}) } }));
  }
  const first = await answer(ctx);
  assert.is(first.rows.length, 10);
  assert.ok(ctx.rowReads.length >= 10);

  ctx.rowReads = [];
  await patch(ctx.svc, projects[4]!, { attributes: { [TITLE]: 'Project 4, renamed' } });
  const renamed = await answer(ctx);
  assert.is(cell(renamed, projects[4]!, 'objectTitle'), 'Project 4, renamed');
  // Before: every row read again for every answer after a write.
  assert.equal(ctx.rowReads, [projects[4]], `read again: ${ctx.rowReads.length}`);

  // A fact read through links (the department's faculty): the rows linking the department are read again.
  const facultyColumn = first.columns.find((c) => c.includes('faculty'))!;
  assert.is(cell(renamed, projects[0]!, facultyColumn), faculty);
  ctx.rowReads = [];
  await patch(ctx.svc, dept, { attributes: { 'svc:attribute:parent': { type: 'link', ref: other } } });
  const moved = await answer(ctx);
  for (const p of projects.slice(0, 3)) assert.is(cell(moved, p, facultyColumn), other);
  assert.equal([...ctx.rowReads].sort(), [...projects.slice(0, 3), dept].sort(), `read again: ${ctx.rowReads.join(' ')}`);

  // Relabelled out of reach, then a new row.
  await patch(ctx.svc, projects[7]!, { labels: { add: ['svc:label:confidential'], remove: ['svc:label:common'] } });
  assert.not.ok((await answer(ctx)).rows.some((r) => r[0] === projects[7]));
  const late = await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: 'Late project' } });
  const last = await answer(ctx);
  assert.is(cell(last, late, 'objectTitle'), 'Late project');
  assert.is(last.rows.length, 10);
  // In id order, as a read of the whole collection gives them.
  const ids = last.rows.map((r) => r[0] as string);
  assert.equal(ids, [...ids].sort());
});

test.run();
