/**
 * Answers `at` past instants take each row's text and each object's dictionary entry from the
 * answers made before them where nothing the text depends on changed (the row document, its
 * object's title then, and which refs the caller may read), as live answers do: two instants
 * answered from one kept fold state share its row documents, all but those replayed onto it. A
 * caller who may read less never gets a text made for one who may read more.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { commonReporterKey, created, json, PHD_DATA, TITLE, type Answer } from '../support/reporting.ts';

interface Ctx {
  svc: TestService;
  now: number;
  common: Record<string, string>;
  everything: Record<string, string>;
}

const test = suite<Ctx>('Reporting API: texts of past answers made once', { now: Date.UTC(2026, 0, 5, 9) } as Ctx);

const auditorKey = async (svc: TestService): Promise<Record<string, string>> => {
  await json(svc, '/api/admin/groups', { code: 'svc:group:audit', title: 'Audit', readLabels: ['svc:label:common', 'svc:label:confidential'] });
  await json(svc, '/api/admin/users', { username: 'auditor', name: { first: 'Au', last: 'Ditor' }, groups: ['svc:group:audit'] });
  const key = (await (await json(svc, '/api/admin/users/auditor/api-keys', { path: '/api/reporting/v0/' })).json()) as { key: string };
  return { Authorization: `Basic ${Buffer.from(`svc:${key.key}`).toString('base64')}` };
};

const answerAt = async (ctx: Ctx, at: number, headers: Record<string, string>): Promise<Answer> => {
  const res = await ctx.svc.request(`${PHD_DATA}?at=${new Date(at).toISOString()}`, { admin: false, headers });
  assert.is(res.status, 200, await res.clone().text());
  return (await res.json()) as Answer;
};

/** Runs `body` counting the JSON texts made of arrays whose first item is one of `refs` (a row of an answer). */
const countingRowTexts = async <T>(refs: ReadonlySet<string>, body: () => Promise<T>): Promise<{ result: T; made: number }> => {
  const stringify = JSON.stringify;
  let made = 0;
  JSON.stringify = ((value: unknown, ...rest: unknown[]) => {
    if (Array.isArray(value) && refs.has(value[0] as string)) made++;
    return (stringify as (...a: unknown[]) => string)(value, ...rest);
  }) as typeof JSON.stringify;
  try {
    return { result: await body(), made };
  } finally {
    JSON.stringify = stringify;
  }
};

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: '1' }, () => ctx.now);
  ctx.common = await commonReporterKey(ctx.svc);
  ctx.everything = await auditorKey(ctx.svc);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('a second past instant from the same kept state makes no row again, and no caller gets a text made for another access', async (ctx) => {
  const tick = () => (ctx.now += 1000);
  const secret = await created(ctx.svc, { type: 'svc:type:department', attributes: { [TITLE]: 'Secret department' }, labels: ['svc:label:confidential'] });
  tick();
  const open = await created(ctx.svc, { type: 'svc:type:department', attributes: { [TITLE]: 'Open department' } });
  const projects: string[] = [];
  for (let i = 0; i < 12; i++) {
    tick();
    const department = i % 3 === 0 ? secret : open;
    projects.push(await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: `Project ${i}`, 'svc:attribute:department': { type: 'link', ref: department } } }));
  }
  const first = tick();
  const second = tick();
  // Recorded after both instants: neither answer is "now".
  tick();
  await created(ctx.svc, { type: 'phd:type:project', attributes: { [TITLE]: 'Later project' } });
  tick();
  const refs = new Set(projects);

  const everything = await countingRowTexts(refs, () => answerAt(ctx, first, ctx.everything));
  assert.is(everything.result.rows.length, 12);
  assert.is(everything.made, 12, 'the first past answer makes every row');
  const department = everything.result.columns.indexOf('department');
  assert.is(everything.result.rows.find((r) => r[0] === projects[0])![department], secret);

  // Another instant answered from the same kept state (a snapshot after every batch: nothing replayed).
  const again = await countingRowTexts(refs, () => answerAt(ctx, second, ctx.everything));
  assert.equal(again.result.rows, everything.result.rows);
  assert.is(again.made, 0, `${again.made} row texts made again`);

  // A caller who may not read the secret department: its rows naming it are made for that caller (the
  // ref hidden), the others taken as they were.
  const common = await countingRowTexts(refs, () => answerAt(ctx, first, ctx.common));
  assert.is(common.result.rows.length, 12);
  for (const row of common.result.rows) {
    assert.is.not(row[department], secret, 'a confidential ref never reaches a caller who may not read it');
    assert.not.ok(JSON.stringify(row).includes('Secret department'));
  }
  assert.not.ok(secret in common.result.objects);
  assert.is(common.made, 4, 'only the rows whose shown refs differ are made again');
  assert.is((await answerAt(ctx, second, ctx.everything)).rows.find((r) => r[0] === projects[0])![department], secret);
});

test.run();
