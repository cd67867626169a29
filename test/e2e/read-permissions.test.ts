/**
 * What a read key can see (issue 14, items 1 to 4): an object the caller may not read shows nothing
 * of itself anywhere else either, not in link values, the linked endpoint, reporting rows and
 * `objects`, `at` answers, files reached through objects, nor as a linked user's username.
 * Permissions are those of now, also for answers about the past. Tag writes need a key issued for them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, call, createObject, createReader, createUser, expectError, issueKey, patchObject, readObject, type Reader } from '../support/fixtures.ts';

const TITLE = 'dc:attribute:title';
const COMMON = 'svc:label:common';
const SECRET = 'svc:label:confidential';
const T0 = Date.UTC(2025, 2, 3, 9, 0, 0);

interface Ctx {
  svc: TestService;
  now: number;
  /** Reads objects labelled common only. */
  limited: Reader;
  /** Reads everything. */
  all: Reader;
  faculty: string;
  secretDept: string;
  /** A common project linking to the secret department, with a thesis file. */
  project: string;
  /** A user whose profile is confidential. */
  hidden: { username: string; ref: string };
  file: { digest: string; fileSize: number };
  /** A file only the secret department carries. */
  secretFile: { digest: string; fileSize: number };
}

const test = suite<Ctx>('read permissions: what a read key can see', {} as Ctx);
const link = (ref: string) => ({ type: 'link', ref });
const minutes = (ctx: Ctx, m: number) => {
  ctx.now = T0 + m * 60_000;
};

const upload = async (svc: TestService, text: string, filename: string) => {
  const res = await svc.request(`/api/admin/files?filename=${filename}`, { method: 'POST', body: text, headers: { 'Content-Type': 'text/plain' } });
  assert.is(res.status, 201, await res.clone().text());
  return (await res.json()) as { digest: string; fileSize: number };
};

test.before(async (ctx) => {
  ctx.now = T0;
  ctx.svc = await startTestService({ SVC_BASE_URL: 'https://svc.example.org' }, () => ctx.now);
  const { svc } = ctx;
  ctx.limited = await createReader(svc, { readLabels: [COMMON] });
  ctx.all = await createReader(svc, { readAll: true });
  ctx.file = await upload(svc, 'thesis text', 'thesis.txt');
  ctx.secretFile = await upload(svc, 'secret budget', 'budget.txt');
  ctx.faculty = (await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Secrets' }, [SECRET])).ref;
  ctx.secretDept = (
    await createObject(
      svc,
      'svc:type:department',
      { [TITLE]: 'Secret Department', 'svc:attribute:parent': link(ctx.faculty), 'svc:attribute:configured-behaviour': { type: 'configuration-name', value: 'dept:secret' } },
      [SECRET],
    )
  ).ref;
  ctx.hidden = await createUser(svc, { first: 'Hidden', last: 'Person' });
  assert.is((await patchObject(svc, ctx.hidden.ref, { labels: { add: [SECRET], remove: [COMMON] } })).status, 200);
  ctx.project = (
    await createObject(
      svc,
      'phd:type:project',
      {
        [TITLE]: 'Open Project',
        'svc:attribute:department': link(ctx.secretDept),
        'phd:attribute:researcher': link(ctx.hidden.ref),
        'phd:attribute:thesis-file': { type: 'file', digest: ctx.file.digest, fileSize: ctx.file.fileSize, filename: 'thesis.txt', mimeType: 'text/plain' },
      },
      [COMMON],
    )
  ).ref;
  // The secret file hangs off the secret department only (through a second project, also secret).
  await createObject(
    svc,
    'phd:type:project',
    { [TITLE]: 'Secret Project', 'phd:attribute:thesis-file': { type: 'file', digest: ctx.secretFile.digest, fileSize: ctx.secretFile.fileSize, filename: 'budget.txt', mimeType: 'text/plain' } },
    [SECRET],
  );
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const leaks = (body: unknown, ...secrets: string[]) => {
  const text = JSON.stringify(body);
  for (const s of secrets) assert.not.ok(text.includes(s), `answer shows "${s}": ${text}`);
};

test('the caller cannot read the secret objects themselves', async (ctx) => {
  expectError(await ctx.limited.object(ctx.secretDept), 400, 'svc:api-v0:object:no-such-object');
  expectError(await ctx.limited.object(ctx.hidden.ref), 400, 'svc:api-v0:object:no-such-object');
});

test('a link to an unreadable object keeps its ref but shows no title, behaviour or username', async (ctx) => {
  const o = await readObject(ctx.limited, ctx.project, 'svc:username');
  assert.equal(o.attributes['svc:attribute:department'], [{ type: 'link', ref: ctx.secretDept }]);
  assert.equal(o.attributes['phd:attribute:researcher'], [{ type: 'link', ref: ctx.hidden.ref }]);
  leaks(o, 'Secret Department', 'dept:secret', 'Hidden', ctx.hidden.username);
  // A reader who may read them sees all of it.
  const full = await readObject(ctx.all, ctx.project, 'svc:username');
  assert.is(full.attributes['svc:attribute:department'][0].title, 'Secret Department');
  assert.is(full.attributes['svc:attribute:department'][0].behaviour, 'dept:secret');
  assert.is(full.attributes['phd:attribute:researcher'][0].username, ctx.hidden.username);
});

test('linked endpoint with results=objects hides the titles of unreadable link targets', async (ctx) => {
  const reply = await ctx.limited.get(`/api/v0-object/linked/${ctx.project}?results=objects&sources=svc:username`);
  // The project is the target here; nothing links to it, so ask from a readable common object instead.
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const viaPerson = await createObject(ctx.svc, 'svc:type:person', { [TITLE]: 'Open Person' }, [COMMON]);
  await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Second Open', 'phd:attribute:researcher': link(viaPerson.ref), 'svc:attribute:department': link(ctx.secretDept) }, [COMMON]);
  const linked = await ctx.limited.get(`/api/v0-object/linked/${viaPerson.ref}?results=objects&sources=NONE`);
  assert.is(linked.status, 200, JSON.stringify(linked.body));
  assert.is(linked.body.objects.length, 1);
  assert.equal(linked.body.objects[0].attributes['svc:attribute:department'], [{ type: 'link', ref: ctx.secretDept }]);
  leaks(linked.body, 'Secret Department');
});

test('files: a file reachable only through unreadable objects is no-such-file; through a readable one it is there', async (ctx) => {
  const open = await ctx.limited.get(`/api/v0-file/metadata/${ctx.file.digest}`);
  assert.is(open.status, 200, JSON.stringify(open.body));
  expectError(await ctx.limited.get(`/api/v0-file/metadata/${ctx.secretFile.digest}`), 404, 'svc:api-v0:file:no-such-file');
  expectError(await ctx.limited.get(`/api/v0-file/tags/${ctx.secretFile.digest}?fileSize=${ctx.secretFile.fileSize}`), 404, 'svc:api-v0:file:no-such-file');
  // A reader of everything sees every file.
  assert.is((await ctx.all.get(`/api/v0-file/metadata/${ctx.secretFile.digest}`)).status, 200);
});

const tagKey = async (ctx: Ctx, reader: Reader, path: string) => {
  const { key } = await issueKey(ctx.svc, reader.username, { path });
  return (digest: string, tags: Record<string, string | null>) =>
    call(ctx.svc, `/api/v0-file/tags/${digest}`, { method: 'POST', admin: false, body: { tags }, headers: { Authorization: basic(key) } });
};

test('tag writes: a read key is refused with a JSON 403; a key issued for tag writing may change tags', async (ctx) => {
  // The read keys of both readers (path /api/) cover /api/v0-file/ but are not issued for writing.
  for (const reader of [ctx.limited, ctx.all]) {
    const r = await call(ctx.svc, `/api/v0-file/tags/${ctx.file.digest}`, { method: 'POST', admin: false, body: { tags: { x: 'y' } }, headers: { Authorization: basic(reader.key) } });
    expectError(r, 403, 'svc:api-v0:file:not-permitted');
  }
  const fileKeyWrite = await tagKey(ctx, ctx.limited, '/api/v0-file/');
  expectError(await fileKeyWrite(ctx.file.digest, { x: 'y' }), 403, 'svc:api-v0:file:not-permitted');
  assert.equal((await ctx.all.get(`/api/v0-file/tags/${ctx.file.digest}`)).body.tags, {});

  const writer = await tagKey(ctx, ctx.limited, '/api/v0-file/tags/');
  const ok = await writer(ctx.file.digest, { stage: 'final' });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.tags, { stage: 'final' });
  // Even a tag writer cannot touch (or learn of) a file it may not read.
  expectError(await writer(ctx.secretFile.digest, { stage: 'x' }), 404, 'svc:api-v0:file:no-such-file');
});

const reporter = async (ctx: Ctx, access: { readAll?: boolean; readLabels?: readonly string[] } | null) => createReader(ctx.svc, access, '/api/reporting/v0/');

test('reporting: no ref value dangles; unreadable refs are null; their titles are nowhere', async (ctx) => {
  const r = await reporter(ctx, { readLabels: [COMMON] });
  const reply = await r.get('/api/reporting/v0/collection-data/phd_projects');
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const { columns, rows, objects } = reply.body as { columns: string[]; rows: unknown[][]; objects: Record<string, unknown> };
  const row = rows.find((x) => x[0] === ctx.project)!;
  assert.ok(row, 'the open project is a row');
  assert.is(row[columns.indexOf('department')], null);
  assert.is(row[columns.indexOf('faculty')], null);
  assert.is(row[columns.indexOf('researcher')], null);
  leaks(reply.body, 'Secret Department', 'Faculty of Secrets', 'Secret Project', ctx.secretDept, ctx.faculty);
  const refColumns = ['researcher', 'department', 'faculty'].map((c) => columns.indexOf(c));
  for (const x of rows) for (const i of refColumns) if (x[i] !== null) assert.ok((x[i] as string) in objects, `${x[i]} is a key of objects`);
  // Readers of everything see the refs and their objects.
  const full = await (await reporter(ctx, { readAll: true })).get('/api/reporting/v0/collection-data/phd_projects');
  const fullRow = (full.body.rows as unknown[][]).find((x) => x[0] === ctx.project)!;
  assert.is(fullRow[columns.indexOf('department')], ctx.secretDept);
  assert.is(full.body.objects[ctx.secretDept].title, 'Secret Department');
});

test('reporting: a caller who may read nothing gets a JSON 403; with access but no rows, 200 and no rows', async (ctx) => {
  const none = await reporter(ctx, null);
  expectError(await none.get('/api/reporting/v0/collection-data/phd_projects'), 403, 'svc:api:reporting:not-permitted');
  const archived = await reporter(ctx, { readLabels: ['svc:label:archived'] });
  const empty = await archived.get('/api/reporting/v0/collection-data/phd_projects');
  assert.is(empty.status, 200, JSON.stringify(empty.body));
  assert.equal(empty.body.rows, []);
  assert.equal(empty.body.objects, {});
});

test('at: permissions are those of now: an object relabelled confidential is gone from the past too', async (ctx) => {
  const r = await reporter(ctx, { readLabels: [COMMON] });
  minutes(ctx, 10);
  const dept = (await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Soon Secret Dept' }, [COMMON])).ref;
  const project = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Soon Secret Project', 'svc:attribute:department': link(dept) }, [COMMON])).ref;
  minutes(ctx, 20);
  const before = new Date(ctx.now - 60_000).toISOString();
  const past = await r.get(`/api/reporting/v0/collection-data/phd_projects?at=${before}`);
  assert.ok((past.body.rows as unknown[][]).some((x) => x[0] === project), 'visible while common');
  assert.is(past.body.objects[dept]?.title, 'Soon Secret Dept');
  minutes(ctx, 30);
  assert.is((await patchObject(ctx.svc, project, { labels: { add: [SECRET], remove: [COMMON] } })).status, 200);
  assert.is((await patchObject(ctx.svc, dept, { labels: { add: [SECRET], remove: [COMMON] } })).status, 200);
  minutes(ctx, 40);
  const again = await r.get(`/api/reporting/v0/collection-data/phd_projects?at=${before}`);
  assert.is(again.status, 200, JSON.stringify(again.body));
  leaks(again.body, 'Soon Secret', project, dept);
});

test.run();
