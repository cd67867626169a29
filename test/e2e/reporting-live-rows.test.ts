/**
 * Live collection-data answers keep the collection's rows between versions of the projection:
 * after a write only the rows of the objects its events are about, and the rows that read those
 * objects through links, are read again; every change shows at once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { commonReporterKey, created, patch, phdAnswer, TITLE, type Answer } from '../support/reporting.ts';
import { collectionNames } from '../../src/projections/reporting/collection-fold.ts';

interface Ctx {
  svc: TestService;
  common: Record<string, string>;
  /** Rows read from the store since the last reset (by id, or a page of the whole collection). */
  rowReads: string[];
}

const test = suite<Ctx>('Reporting API: rows kept between versions', {} as Ctx);
const answer = (ctx: Ctx): Promise<Answer> => phdAnswer(ctx.svc, ctx.common);
const cell = (a: Answer, row: string, column: string) => a.rows.find((r) => r[0] === row)?.[a.columns.indexOf(column)];

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.common = await commonReporterKey(ctx.svc);
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
