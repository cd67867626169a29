import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';

interface Ctx {
  svc: TestService;
  project: string;
}
const test = suite<Ctx>('svc command line', {} as Ctx);

/** Runs bin/svc.mjs against the test service's data directory (the embedded engines, shared). */
const svcCli = (ctx: Ctx, args: string[]) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.mjs', ...args], {
      env: { ...process.env, SVC_DATA_DIR: ctx.svc.dataDir, SVC_ADMIN_TOKEN: ctx.svc.adminToken, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  const person = ((await (await json(ctx.svc, '/api/admin/objects', { type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Grace "Amazing" Hopper, RN' } })).json()) as { ref: string }).ref;
  const res = await json(ctx.svc, '/api/admin/objects', {
    type: 'phd:type:project',
    attributes: { 'dc:attribute:title': 'Compilers', 'phd:attribute:researcher': { type: 'link', ref: person }, 'phd:attribute:exams-done': { type: 'integer', value: 2 } },
  });
  ctx.project = ((await res.json()) as { ref: string }).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('every command has --help, and a bad command is a usage error', async (ctx) => {
  for (const command of ['projections', 'rebuild', 'verify', 'events', 'collection-data', 'projector']) {
    const r = await svcCli(ctx, [command, '--help']);
    assert.is(r.code, 0, command);
    assert.match(r.stdout, `svc ${command}`);
  }
  const bad = await svcCli(ctx, ['frobnicate']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, 'Unknown command: frobnicate');
});

test('--version prints the package version', async (ctx) => {
  const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = await svcCli(ctx, [flag]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, `svc ${version}\n`);
  }
});

test('projections lists checkpoints, head and lag', async (ctx) => {
  const r = await svcCli(ctx, ['projections', '--json']);
  assert.is(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as { name: string; checkpoint: number; head: number; lag: number; state: string }[];
  const objects = rows.find((x) => x.name === 'objects')!;
  assert.is(objects.lag, 0);
  assert.is(objects.state, 'live');
  assert.ok(objects.head > 0);
  const table = await svcCli(ctx, ['projections']);
  assert.is(table.code, 0, table.stderr);
  assert.match(table.stdout, /^projection +state +checkpoint +head +lag +folded by\n/);
  assert.match(table.stdout, /\nobjects +live +\d+ +\d+ +0 +\S+/);
});

test('collection-data prints JSON and CSV', async (ctx) => {
  const asJson = await svcCli(ctx, ['collection-data', 'phd_projects']);
  assert.is(asJson.code, 0, asJson.stderr);
  const data = JSON.parse(asJson.stdout) as { rows: unknown[][]; columns: string[] };
  assert.is(data.rows[0]![0], ctx.project);
  const csv = await svcCli(ctx, ['collection-data', 'people', '--format', 'csv']);
  assert.is(csv.code, 0, csv.stderr);
  const lines = csv.stdout.split('\r\n');
  assert.is(lines[0], 'ref,objectTitle,name,email,jobTitle,department,faculty,labels');
  assert.match(lines[1]!, /^[0-9a-z]{12},"Grace ""Amazing"" Hopper, RN","Grace ""Amazing"" Hopper, RN",,,,,[0-9a-z]{12}$/);
  const badAt = await svcCli(ctx, ['collection-data', 'people', '--at', 'noon']);
  assert.is(badAt.code, 2);
  assert.match(badAt.stderr, '--at must be');
  const unknown = await svcCli(ctx, ['collection-data', 'nope']);
  assert.is(unknown.code, 2);
});

test('events prints JSON lines, filtered', async (ctx) => {
  const r = await svcCli(ctx, ['events', '--stream', `object-${ctx.project}`]);
  assert.is(r.code, 0, r.stderr);
  const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; stream: string });
  assert.equal(events.map((e) => e.type), ['ObjectCreated']);
  const typed = await svcCli(ctx, ['events', '--type', 'ObjectCreated']);
  assert.is(typed.stdout.trim().split('\n').length, 2);
});

test('verify exits non-zero with a diff when a read model is corrupted; rebuild repairs it', async (ctx) => {
  const ok = await svcCli(ctx, ['verify', 'all']);
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  const doc = (await ctx.svc.engines.reads.get('objects', ctx.project))!;
  await ctx.svc.engines.reads.upsert('objects', { ...doc, title: 'Corrupted' });
  const bad = await svcCli(ctx, ['verify', 'objects']);
  assert.is(bad.code, 1);
  assert.match(bad.stdout, `DIFF objects`);
  assert.match(bad.stdout, `different objects/${ctx.project}`);
  const rebuilt = await svcCli(ctx, ['rebuild', 'objects']);
  assert.is(rebuilt.code, 0, rebuilt.stderr);
  assert.match(rebuilt.stderr, 'done');
  const again = await svcCli(ctx, ['verify', 'objects']);
  assert.is(again.code, 0, again.stdout);
});

test.run();
