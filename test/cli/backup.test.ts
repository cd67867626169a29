import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, call, createObject, createReader, createUser, type Reader } from '../support/fixtures.ts';
import { defineApi, EXAMPLE_CONTROL, expectSuccess } from '../support/push-data.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';

const TOKEN = 'test-admin-token-0123456789';

const svcCli = (dataDir: string, args: string[], stdin?: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.mjs', ...args], {
      env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: TOKEN },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });

interface Ctx {
  original: TestService;
  reader: Reader;
  refs: string[];
  middle: string;
  work: { dir: string; remove(): void };
}

const test = suite<Ctx>('svc events --export and svc import-events: backup and restore', {} as Ctx);

test.before(async (ctx) => {
  ctx.work = tempDir('svc-backup');
  ctx.original = await startTestService({ SVC_ADMIN_TOKEN: TOKEN });
  const svc = ctx.original;
  ctx.reader = await createReader(svc);
  const person = await createObject(svc, 'svc:type:person', { 'dc:attribute:title': 'Grace Hopper' });
  const project = await createObject(svc, 'phd:type:project', {
    'dc:attribute:title': 'Compilers',
    'phd:attribute:researcher': { type: 'link', ref: person.ref },
    'phd:attribute:exams-done': { type: 'integer', value: 2 },
  });
  // Recorded times a moment apart, so "at" in between tells the states apart.
  await new Promise((r) => setTimeout(r, 50));
  ctx.middle = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 50));
  const renamed = await call(svc, `/api/admin/objects/${project.ref}`, { method: 'PATCH', body: { attributes: { 'dc:attribute:title': 'Optimising compilers' } } });
  assert.is(renamed.status, 200, JSON.stringify(renamed.body));
  const user = await createUser(svc, {});
  const api = await defineApi(svc, EXAMPLE_CONTROL);
  expectSuccess(await api.push({ username: user.username, title: 'Pushed thesis' }, { 'Idempotency-Key': randomUUID() }));
  ctx.refs = [person.ref, project.ref, user.ref];
});

test.after(async (ctx) => {
  await ctx.original?.stop();
  ctx.work?.remove();
});

const objectAnswers = async (svc: TestService, ctx: Ctx) => {
  const get = (path: string) => call(svc, path, { admin: false, headers: { Authorization: basic(ctx.reader.key) } });
  const out: unknown[] = [];
  for (const ref of ctx.refs) {
    for (const path of [`/api/v0-object/ref/${ref}?sources=ALL`, `/api/v0-object/history/${ref}`, `/api/v0-object/ref/${ref}?sources=ALL&at=${encodeURIComponent(ctx.middle)}`]) {
      const reply = await get(path);
      out.push({ path, status: reply.status, body: reply.body });
    }
  }
  for (const name of ['phd_projects', 'people']) {
    for (const at of ['', `?at=${encodeURIComponent(ctx.middle)}`]) {
      const reply = await get(`/api/reporting/v0/collection-data/${name}${at}`);
      // A live answer says when it was given: now, which differs between any two answers.
      const { at: _answeredAt, ...body } = reply.body as Record<string, unknown>;
      out.push({ name, at, status: reply.status, body: at ? reply.body : body });
    }
  }
  return out;
};

test('the whole log round-trips: a service on the restored store answers as the original', async (ctx) => {
  const file = join(ctx.work.dir, 'backup.ndjson');
  const exported = await svcCli(ctx.original.dataDir, ['events', '--export', file]);
  assert.is(exported.code, 0, exported.stderr);
  assert.is(exported.stdout, '');
  const lines = readFileSync(file, 'utf8');
  const head = await ctx.original.engines.events.headPosition();
  assert.is(lines.trim().split('\n').length, head);
  assert.match(exported.stderr, `Exported ${head} events`);
  assert.not.ok(existsSync(`${file}.partial`));
  // The same lines on standard output, and the same as "svc events" prints.
  assert.is((await svcCli(ctx.original.dataDir, ['events', '--export', '-'])).stdout, lines);
  assert.is((await svcCli(ctx.original.dataDir, ['events'])).stdout, lines);

  const restored = tempDir('svc-restored');
  let copy: TestService | undefined;
  try {
    const imported = await svcCli(restored.dir, ['import-events', file]);
    assert.is(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, `Imported ${head} events`);
    assert.match(imported.stderr, 'done');
    assert.is((await svcCli(restored.dir, ['events'])).stdout, lines);
    copy = await startTestService({ SVC_ADMIN_TOKEN: TOKEN, SVC_DATA_DIR: restored.dir });
    const original = await objectAnswers(ctx.original, ctx);
    // Not a vacuous comparison: "at" between the two titles shows the first one.
    assert.match(JSON.stringify(original[5]), '"Compilers"');
    assert.not.match(JSON.stringify(original[5]), 'Optimising');
    assert.equal(await objectAnswers(copy, ctx), original);
    for (const name of ['phd_projects', 'people']) {
      const a = await svcCli(ctx.original.dataDir, ['collection-data', name, '--format', 'csv']);
      const b = await svcCli(restored.dir, ['collection-data', name, '--format', 'csv']);
      assert.is(b.code, 0, b.stderr);
      assert.is(b.stdout, a.stdout);
    }
    // The read models were built by the import; the restored service is live at once.
    const rows = JSON.parse((await svcCli(restored.dir, ['projections', '--json'])).stdout) as { lag: number; state: string }[];
    assert.ok(rows.every((r) => r.lag === 0 && r.state === 'live'), JSON.stringify(rows));
  } finally {
    await copy?.stop();
    restored.remove();
  }
});

test('import refuses a store that holds events, and a bad line, naming it; the store is left as it was', async (ctx) => {
  const file = join(ctx.work.dir, 'again.ndjson');
  assert.is((await svcCli(ctx.original.dataDir, ['events', '--export', file])).code, 0);
  const head = await ctx.original.engines.events.headPosition();
  const refused = await svcCli(ctx.original.dataDir, ['import-events', file]);
  assert.is(refused.code, 2);
  assert.match(refused.stderr, 'not empty');
  assert.is(await ctx.original.engines.events.headPosition(), head);

  const fresh = tempDir('svc-restored');
  try {
    const [first, second, ...rest] = readFileSync(file, 'utf8').trim().split('\n');
    const broken = join(ctx.work.dir, 'broken.ndjson');
    writeFileSync(broken, [first, JSON.stringify({ ...JSON.parse(second!), revision: -1 }), ...rest].join('\n'));
    const bad = await svcCli(fresh.dir, ['import-events', broken]);
    assert.is(bad.code, 2);
    assert.match(bad.stderr, 'line 2: revision: expected a non-negative integer');
    // Nothing of line 1 stayed: the embedded store imports all or nothing. From standard input then.
    const piped = await svcCli(fresh.dir, ['import-events', '-'], readFileSync(file, 'utf8'));
    assert.is(piped.code, 0, piped.stderr);
    assert.is((await svcCli(fresh.dir, ['events'])).stdout, readFileSync(file, 'utf8'));
  } finally {
    fresh.remove();
  }
});

test('--export takes no filter', async (ctx) => {
  const r = await svcCli(ctx.original.dataDir, ['events', '--export', '-', '--type', 'ObjectCreated']);
  assert.is(r.code, 2);
  assert.match(r.stderr, '--export writes the whole log');
});

test.run();
