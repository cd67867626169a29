import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';

interface Ctx {
  svc: TestService;
  auth: Record<string, string>;
  now: number;
  faculty: string;
  dept: string;
  dept2: string;
  person: string;
}

const test = suite<Ctx>('Reporting API v0', {} as Ctx);
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
const create = async (ctx: Ctx, type: string, attributes: Record<string, unknown>, labels?: string[]) => {
  const res = await json(ctx.svc, '/api/admin/objects', { type, attributes, ...(labels ? { labels } : {}) });
  assert.is(res.status, 201, await res.clone().text());
  return ((await res.json()) as { ref: string }).ref;
};
const get = async (ctx: Ctx, path: string) => {
  const res = await ctx.svc.request(path, { admin: false, headers: ctx.auth });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** Moves the service clock: every command is recorded at a known instant. */
const at = (ctx: Ctx, minutes: number) => {
  ctx.now = T0 + minutes * 60_000;
};
const iso = (minutes: number, extraMs = 0) => new Date(T0 + minutes * 60_000 + extraMs).toISOString().replace('Z', '');

test.before(async (ctx) => {
  ctx.now = T0;
  ctx.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: '3' }, () => ctx.now);
  await json(ctx.svc, '/api/admin/groups', { code: 'svc:group:reporting', title: 'Reporting', readLabels: ['svc:label:common'] });
  await json(ctx.svc, '/api/admin/users', { username: 'reporter', name: { first: 'Re', last: 'Porter' }, groups: ['svc:group:reporting'] });
  const key = (await (await json(ctx.svc, '/api/admin/users/reporter/api-keys', { path: '/api/reporting/v0/' })).json()) as { key: string };
  ctx.auth = { Authorization: `Basic ${Buffer.from(`svc:${key.key}`).toString('base64')}` };
  at(ctx, 1);
  ctx.faculty = await create(ctx, 'svc:type:faculty', { 'dc:attribute:title': 'Faculty of Science', 'svc:attribute:configured-behaviour': { type: 'configuration-name', value: 'fac:science' } });
  ctx.dept = await create(ctx, 'svc:type:department', { 'dc:attribute:title': 'Physics', 'svc:attribute:parent': { type: 'link', ref: ctx.faculty } });
  ctx.dept2 = await create(ctx, 'svc:type:department', { 'dc:attribute:title': 'Chemistry', 'svc:attribute:parent': { type: 'link', ref: ctx.faculty } });
  ctx.person = await create(ctx, 'svc:type:person', { 'dc:attribute:title': 'Ada Lovelace' });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('collections are listed by name with their info paths', async (ctx) => {
  const { status, body } = await get(ctx, '/api/reporting/v0/collections');
  assert.is(status, 200);
  assert.equal(body, {
    collections: [
      { name: 'people', description: 'People: researchers, supervisors and staff', categories: ['People'], info: '/api/reporting/v0/collection/people' },
      {
        name: 'phd_projects',
        description: 'PhD projects with their researcher, department, faculty and progress',
        categories: ['Research', 'Doctoral'],
        info: '/api/reporting/v0/collection/phd_projects',
      },
    ],
  });
});

test('a collection describes its facts, ref first, and where its data is', async (ctx) => {
  const { body } = await get(ctx, '/api/reporting/v0/collection/phd_projects');
  assert.is(body.status, 'ready');
  assert.is(body.data, '/api/reporting/v0/collection-data/phd_projects');
  const facts = body.facts as { name: string; type: string }[];
  assert.equal(facts[0], { name: 'ref', type: 'ref', description: 'Reporting object' });
  assert.equal(facts.map((f) => f.name), ['ref', 'researcher', 'title', 'department', 'faculty', 'startDate', 'isFunded', 'examsDone', 'progress', 'progressPercent']);
});

test('rows follow changes; at answers as things were before, between and after them', async (ctx) => {
  at(ctx, 10);
  const project = await create(ctx, 'phd:type:project', {
    'dc:attribute:title': 'Quantum widgets',
    'phd:attribute:researcher': { type: 'link', ref: ctx.person },
    'svc:attribute:department': { type: 'link', ref: ctx.dept },
    'phd:attribute:start-date': { type: 'datetime', start: '2024-10-01' },
    'phd:attribute:exams-done': { type: 'integer', value: 1 },
    'phd:attribute:progress': { type: 'number', value: 0.25 },
  });
  at(ctx, 20);
  const patched = await json(ctx.svc, `/api/admin/objects/${project}`, { attributes: { 'dc:attribute:title': 'Quantum gadgets', 'phd:attribute:funded': { type: 'configuration-name', value: 'epsrc' }, 'svc:attribute:department': { type: 'link', ref: ctx.dept2 } } }, 'PATCH');
  assert.is(patched.status, 200);
  at(ctx, 30);

  const now = await get(ctx, '/api/reporting/v0/collection-data/phd_projects');
  assert.is(now.status, 200);
  assert.is(now.body.at, new Date(T0 + 30 * 60_000).toISOString());
  assert.equal(now.body.columns, ['ref', 'objectTitle', 'researcher', 'title', 'department', 'faculty', 'startDate', 'isFunded', 'examsDone', 'progress', 'progressPercent']);
  assert.equal(now.body.rows, [[project, 'Quantum gadgets', ctx.person, 'Quantum gadgets', ctx.dept2, ctx.faculty, '2024-10-01T00:00:00.000Z', true, 1, 0.25, 25]]);
  assert.equal(now.body.objects, {
    ...{ [ctx.person]: { title: 'Ada Lovelace' } },
    ...{ [ctx.dept2]: { title: 'Chemistry', parent: ctx.faculty } },
    ...{ [ctx.faculty]: { title: 'Faculty of Science', behaviour: 'fac:science' } },
  });

  const before = await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(5)}`);
  assert.equal(before.body.rows, []);
  assert.is(before.body.at, new Date(T0 + 5 * 60_000).toISOString());

  const between = await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(15)}`);
  assert.equal(between.body.rows, [[project, 'Quantum widgets', ctx.person, 'Quantum widgets', ctx.dept, ctx.faculty, '2024-10-01T00:00:00.000Z', false, 1, 0.25, 25]]);
  assert.equal(Object.keys(between.body.objects as object).sort(), [ctx.person, ctx.dept, ctx.faculty].sort());

  const exactly = await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(20)}Z`);
  assert.is((exactly.body.rows as unknown[][])[0]![3], 'Quantum gadgets', 'a change recorded at the instant asked for is included');
  const justBefore = await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(20, -1)}`);
  assert.is((justBefore.body.rows as unknown[][])[0]![3], 'Quantum widgets');

  const future = await get(ctx, '/api/reporting/v0/collection-data/phd_projects?at=2999-01-01T00:00:00');
  assert.equal(future.body.rows, now.body.rows);
  assert.is(future.body.at, now.body.at);
});

test('a change to a linked object changes the rows that read it', async (ctx) => {
  at(ctx, 40);
  const faculty2 = await create(ctx, 'svc:type:faculty', { 'dc:attribute:title': 'Faculty of Arts' });
  at(ctx, 41);
  await json(ctx.svc, `/api/admin/objects/${ctx.dept2}`, { attributes: { 'svc:attribute:parent': { type: 'link', ref: faculty2 } } }, 'PATCH');
  const rows = (await get(ctx, '/api/reporting/v0/collection-data/phd_projects')).body.rows as unknown[][];
  assert.is(rows[0]![5], faculty2);
  const earlier = (await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(40, 1)}`)).body.rows as unknown[][];
  assert.is(earlier[0]![5], ctx.faculty);
  at(ctx, 42);
  await json(ctx.svc, `/api/admin/objects/${ctx.dept2}`, { attributes: { 'svc:attribute:parent': { type: 'link', ref: ctx.faculty } } }, 'PATCH');
});

test('rows of objects the key cannot read are left out; deleted objects leave the collection', async (ctx) => {
  at(ctx, 50);
  const secret = await create(ctx, 'phd:type:project', { 'dc:attribute:title': 'Secret' }, ['svc:label:confidential']);
  const visible = (await get(ctx, '/api/reporting/v0/collection-data/phd_projects')).body.rows as unknown[][];
  assert.not.ok(visible.some((r) => r[0] === secret));
  at(ctx, 51);
  const doomed = await create(ctx, 'phd:type:project', { 'dc:attribute:title': 'Doomed' });
  assert.ok(((await get(ctx, '/api/reporting/v0/collection-data/phd_projects')).body.rows as unknown[][]).some((r) => r[0] === doomed));
  at(ctx, 52);
  await ctx.svc.request(`/api/admin/objects/${doomed}`, { method: 'DELETE' });
  assert.not.ok(((await get(ctx, '/api/reporting/v0/collection-data/phd_projects')).body.rows as unknown[][]).some((r) => r[0] === doomed));
  const then = (await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${iso(51, 30_000)}`)).body.rows as unknown[][];
  assert.ok(then.some((r) => r[0] === doomed));
});

test('errors: unknown collection 404, bad at 400, both JSON; no key 401', async (ctx) => {
  const unknown = await get(ctx, '/api/reporting/v0/collection-data/nope');
  assert.is(unknown.status, 404);
  assert.is(unknown.body.kind, 'svc:api:reporting:no-such-collection');
  assert.is((unknown.body.error as { message: string }).message, 'Unknown collection: nope');
  assert.is((await get(ctx, '/api/reporting/v0/collection/nope')).status, 404);
  for (const bad of ['yesterday', '2024-13-01T00:00:00', '2024-02-30T00:00:00', '2024-01-01T', '2024-01-01T25:00:00', '2024-01-01T10:00:00+1']) {
    const res = await get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${encodeURIComponent(bad)}`);
    assert.is(res.status, 400, bad);
    assert.is(res.body.kind, 'svc:api:reporting:bad-at');
    assert.match((res.body.error as { message: string }).message, 'YYYY-MM-DD');
  }
  const anonymous = await ctx.svc.request('/api/reporting/v0/collections', { admin: false });
  assert.is(anonymous.status, 401);
});

test('at in every form Haplo accepts (date only, space, hh:mm, offsets, Z) answers as the same UTC instant', async (ctx) => {
  const data = (q: string) => get(ctx, `/api/reporting/v0/collection-data/phd_projects?at=${encodeURIComponent(q)}`);
  const day = new Date(T0).toISOString().slice(0, 10);
  const forms: Array<[string, string]> = [
    [`${day}`, `${day}T00:00:00.000Z`],
    [`${day.slice(0, 7)}`, `${day.slice(0, 7)}-01T00:00:00.000Z`],
    [`${day} 09:10`, `${day}T09:10:00.000Z`],
    [`${day}T10:10+01:00`, `${day}T09:10:00.000Z`],
    [`${day}T04:10:00-0500`, `${day}T09:10:00.000Z`],
    [`${day}T09:10:00Z`, `${day}T09:10:00.000Z`],
    ['0050-06-01', '0050-06-01T00:00:00.000Z'],
  ];
  for (const [form, utc] of forms) {
    const res = await data(form);
    assert.is(res.status, 200, form);
    assert.is(res.body.at, utc, form);
  }
  const utcRows = (await data(`${day}T09:10:00`)).body.rows;
  assert.ok((utcRows as unknown[]).length > 0, 'the instant has rows to compare');
  assert.equal((await data(`${day}T10:10+01:00`)).body.rows, utcRows);
  assert.equal((await data(`${day} 09:10`)).body.rows, utcRows);
  assert.equal((await data('0050-06-01')).body.rows, [], 'year 50, not 1950: before every event');
});

test('output=pretty indents', async (ctx) => {
  const res = await ctx.svc.request('/api/reporting/v0/collections?output=pretty', { admin: false, headers: ctx.auth });
  assert.match(await res.text(), '\n  "collections": [');
});

test.run();
