/**
 * Live collection-data answers keep the descriptions (title, labels) of the objects their rows name
 * between versions of the projection: after a write only the objects its events are about are read
 * again, and what a caller may read follows every change at once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { commonReporterKey, created, patch, phdAnswer, PHD_DATA, TITLE, type Answer } from '../support/reporting.ts';
import { collectionNames } from '../../src/projections/reporting/collection-fold.ts';

interface Ctx {
  svc: TestService;
  common: Record<string, string>;
  /** Ids of the collection's object descriptions read from the store since the last reset. */
  infoReads: string[];
}

const test = suite<Ctx>('Reporting API: object descriptions kept between versions', {} as Ctx);

const answer = (ctx: Ctx): Promise<Answer> => phdAnswer(ctx.svc, ctx.common);
const researcherOf = (a: Answer, project: string) => a.rows.find((r) => r[0] === project)?.[a.columns.indexOf('researcher')];

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.common = await commonReporterKey(ctx.svc);
  ctx.infoReads = [];
  const reads = ctx.svc.engines.reads;
  const getMany = reads.getMany.bind(reads);
  const objects = collectionNames('phd_projects').objects;
  reads.getMany = (async (collection: string, ids: readonly string[]) => {
    if (collection === objects) ctx.infoReads.push(...ids);
    return getMany(collection, ids);
  }) as typeof reads.getMany;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('after a write only the objects it is about are read again; titles, labels and new rows show at once', async (ctx) => {
  const people: string[] = [];
  const projects: string[] = [];
  for (let i = 0; i < 12; i++) {
    const person = await created(ctx.svc, { type: 'svc:type:person', attributes: { [TITLE]: `Person ${i}` } });
    people.push(person);
    projects.push(await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: `Project ${i}`, 'phd:attribute:researcher': { type: 'link', ref: person } } }));
  }
  const first = await answer(ctx);
  assert.is(first.rows.length, 12);
  assert.is(first.objects[people[3]!]?.title, 'Person 3');
  assert.ok(ctx.infoReads.length >= 24, `${ctx.infoReads.length} descriptions read for the first answer`);

  ctx.infoReads = [];
  await patch(ctx.svc, people[3]!, { attributes: { [TITLE]: 'Person 3, renamed' } });
  const renamed = await answer(ctx);
  assert.is(renamed.objects[people[3]!]?.title, 'Person 3, renamed');
  // Before: all 24 read again for every answer after a write.
  assert.equal(ctx.infoReads, [people[3]], `read again: ${ctx.infoReads.length}`);

  // Relabelled out of the reader's reach: its ref is null and it leaves the dictionary.
  await patch(ctx.svc, people[5]!, { labels: { add: ['svc:label:confidential'], remove: ['svc:label:common'] } });
  const hidden = await answer(ctx);
  assert.is(researcherOf(hidden, projects[5]!), null);
  assert.not.ok(people[5]! in hidden.objects);
  assert.not.ok(JSON.stringify(hidden).includes('Person 5'));
  const secretProject = projects[7]!;
  await patch(ctx.svc, secretProject, { labels: { add: ['svc:label:confidential'], remove: ['svc:label:common'] } });
  assert.not.ok((await answer(ctx)).rows.some((r) => r[0] === secretProject));

  // Back within reach, and a new row naming an object never seen before.
  await patch(ctx.svc, people[5]!, { labels: { add: ['svc:label:common'], remove: ['svc:label:confidential'] } });
  const person = await created(ctx.svc, { type: 'svc:type:person', attributes: { [TITLE]: 'Newcomer' } });
  const project = await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: 'New project', 'phd:attribute:researcher': { type: 'link', ref: person } } });
  const last = await answer(ctx);
  assert.is(researcherOf(last, projects[5]!), people[5]);
  assert.is(last.objects[people[5]!]?.title, 'Person 5');
  assert.is(researcherOf(last, project), person);
  assert.is(last.objects[person]?.title, 'Newcomer');
  assert.is(last.rows.length, 12);
});

test('an answer at a past instant takes the labels now from the kept descriptions, not from the store', async (ctx) => {
  const person = await created(ctx.svc, { type: 'svc:type:person', attributes: { [TITLE]: 'Then visible' } });
  const project = await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: 'Past project', 'phd:attribute:researcher': { type: 'link', ref: person } } });
  await new Promise((r) => setTimeout(r, 5));
  const instant = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  await patch(ctx.svc, person, { labels: { add: ['svc:label:confidential'], remove: ['svc:label:common'] } });
  await answer(ctx);
  ctx.infoReads = [];
  const res = await ctx.svc.request(`${PHD_DATA}?at=${instant}`, { admin: false, headers: ctx.common });
  assert.is(res.status, 200);
  const past = (await res.json()) as Answer;
  // Relabelled since the instant: hidden from the past too, as the labels are now.
  assert.is(researcherOf(past, project), null);
  assert.not.ok(JSON.stringify(past).includes('Then visible'));
  assert.ok(past.rows.some((r) => r[0] === project));
  // Before: every object the past rows name was read from the store for its labels.
  assert.equal(ctx.infoReads, [], `read from the store: ${ctx.infoReads.length}`);
});

test.run();
