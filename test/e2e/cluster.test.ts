/**
 * A cluster on one embedded data directory: two `api` processes and two projectors (one started
 * as SVC_ROLE=projector, one as `svc projector`). Data is pushed through both api processes, the
 * projector holding the projection leases is killed with SIGKILL while writes go on, the standby
 * takes the projections over, and both api processes then give the same answers: objects,
 * reporting collection data now, and collection data "at" several instants. `svc verify all` finds
 * every read model equal to a replay of the log.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createReader, type Reader } from '../support/fixtures.ts';
import { control, defineApi, expectSuccess, type Api } from '../support/push-data.ts';
import type { TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';

const TOKEN = 'cluster-test-admin-token-0123';

interface Proc {
  readonly name: string;
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  readonly exited: Promise<number | null>;
  readonly output: () => string;
}

interface Ctx {
  dir: string;
  remove(): void;
  procs: Proc[];
}

const env = (dir: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  PORT: '0',
  SVC_HOST: '127.0.0.1',
  SVC_DATA_DIR: dir,
  SVC_ADMIN_TOKEN: TOKEN,
  SVC_LEASE_TTL_MS: '1500',
  SVC_LEASE_RENEW_MS: '300',
  SVC_CHECKPOINT_POLL_MS: '50',
  SVC_SNAPSHOT_INTERVAL: '15',
  SVC_WAIT_TIMEOUT_MS: '20000',
  SVC_LOG_LEVEL: 'info',
  FORCE_COLOR: '0',
  ...extra,
});

/** Starts a process and resolves once it has logged the port it listens on. */
const start = (ctx: Ctx, name: string, args: string[], extra: Record<string, string>): Promise<Proc> => {
  const child = spawn(process.execPath, args, { env: env(ctx.dir, extra), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const proc = { name, child, url: '', exited, output: () => out };
  // Killed by test.after whatever happens next.
  ctx.procs.push(proc);
  return new Promise<Proc>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 30_000);
    const look = () => {
      const line = out.split('\n').find((l) => /"msg":"(?:service|projector) started"/.test(l));
      const port = line && /"port":(\d+)/.exec(line)?.[1];
      if (!port) return;
      clearTimeout(timer);
      child.stdout.off('data', look);
      resolve(Object.assign(proc, { url: `http://127.0.0.1:${port}` }));
    };
    child.stdout.on('data', look);
    void exited.then((code) => reject(new Error(`${name} exited (${code}) before it started:\n${out}`)));
  });
};

const api = (ctx: Ctx, name: string) => start(ctx, name, ['--import', 'tsx', 'src/main.ts'], { SVC_ROLE: 'api' });

/** What the test fixtures need of a service: requests to one process, with the admin token unless told otherwise. */
const remote = (proc: Proc) =>
  ({
    request: (path: string, { admin = true, headers, ...init }: RequestInit & { admin?: boolean } = {}) =>
      fetch(`${proc.url}${path}`, { ...init, headers: { ...(admin ? { Authorization: `Bearer ${TOKEN}` } : {}), ...(headers as Record<string, string>) } }),
  }) as unknown as TestService;

interface Status {
  holding: number;
  projections: { name: string; checkpoint: number; lease: { owner: string; here: boolean } | null }[];
}
const statusOf = async (proc: Proc): Promise<Status> => (await (await fetch(`${proc.url}/status`)).json()) as Status;

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** An instant strictly between the writes before it and the writes after it. */
const instant = async () => {
  await new Promise((r) => setTimeout(r, 5));
  const at = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 5));
  return at;
};

const test = suite<Ctx>('Cluster: two api processes, two projectors, one data directory', {} as Ctx);

test.before((ctx) => {
  const tmp = tempDir('svc-cluster');
  ctx.dir = tmp.dir;
  ctx.remove = tmp.remove;
  ctx.procs = [];
});
test.after(async (ctx) => {
  for (const p of ctx.procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(ctx.procs.map((p) => p.exited));
  ctx.remove();
});

test('the standby takes over from a killed lease holder; both api processes answer alike, now and at earlier instants; verify is clean', async (ctx) => {
  const api1 = await api(ctx, 'api-1');
  const first = await start(ctx, 'projector-1', ['--import', 'tsx', 'src/main.ts'], { SVC_ROLE: 'projector' });
  const projections = (await statusOf(first)).projections.length;
  assert.ok(projections >= 5, `projections: ${projections}`);
  await until('the first projector holds every projection', async () => (await statusOf(first)).holding === projections);
  const [second, api2] = await Promise.all([start(ctx, 'projector-2', ['bin/svc.mjs', 'projector'], {}), api(ctx, 'api-2')]);
  const a = remote(api1);
  const b = remote(api2);
  // The api role serves no projector: its status comes from the store, and it holds no lease.
  const seenByApi = (await call(b, '/api/admin/projections')).body.projections as Status['projections'];
  assert.ok(seenByApi.every((p) => p.lease && !p.lease.here), JSON.stringify(seenByApi));
  assert.is((await statusOf(second)).holding, 0, 'the second projector stands by');
  assert.is((await fetch(`${second.url}/api/admin/projections`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 404, 'a projector serves no admin API');

  const reader: Reader = await createReader(a, { readAll: true });
  const pushes: Api = await defineApi(a, control('TYPE:phd:type:project', [
    { action: 'new', destination: 'object' },
    { source: 'title', destination: 'object', name: 'dc:attribute:title' },
  ]));
  const refs: string[] = [];
  const round = async (tag: string) => {
    // Each api process takes half the pushes and renames a project the other one created.
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => remote(i % 2 ? api1 : api2)).map((svc, i) =>
        call(svc, `/api/push-data/${pushes.url}`, { method: 'POST', admin: false, headers: { Authorization: `Basic ${Buffer.from(`svc:${pushes.key}`).toString('base64')}` }, body: { title: `${tag} project ${i}` } }),
      ),
    );
    for (const r of replies) {
      assert.is(r.status, 200, JSON.stringify(r.body));
      refs.push(...(r.body.actions[0].changed as { ref: string }[]).map((c) => c.ref));
    }
    for (const [i, ref] of refs.slice(-12, -6).entries()) {
      const renamed = await call(i % 2 ? a : b, `/api/admin/objects/${ref}`, { method: 'PATCH', body: { attributes: { 'dc:attribute:title': `${tag} renamed ${i}` } } });
      assert.is(renamed.status, 200, JSON.stringify(renamed.body));
    }
  };
  expectSuccess(await pushes.push({ title: 'Opening project' }));
  const instants = [await instant()];
  await round('before');
  instants.push(await instant());

  // Kill the lease holder while it holds everything; writes go on and wait for the take-over.
  const holder = (await statusOf(first)).holding >= (await statusOf(second)).holding ? first : second;
  const standby = holder === first ? second : first;
  holder.child.kill('SIGKILL');
  await holder.exited;
  await round('during');
  await until('the standby holds every projection', async () => (await statusOf(standby)).holding === projections);
  instants.push(await instant());
  await round('after');
  instants.push(await instant());

  // Both api processes have seen the stored checkpoints reach the head of the log.
  const head = Math.max(...(await statusOf(standby)).projections.map((p) => p.checkpoint));
  for (const svc of [a, b]) {
    await until('an api process sees the last checkpoints', async () => {
      const seen = (await call(svc, '/api/admin/projections')).body.projections as Status['projections'];
      return seen.every((p) => p.checkpoint >= head);
    });
  }
  const same = async (path: string, check?: (body: any) => void) => {
    const [one, two] = await Promise.all([call(a, path, { admin: false, headers: { Authorization: `Basic ${Buffer.from(`svc:${reader.key}`).toString('base64')}` } }), call(b, path, { admin: false, headers: { Authorization: `Basic ${Buffer.from(`svc:${reader.key}`).toString('base64')}` } })]);
    assert.is(one.status, 200, `${path}: ${JSON.stringify(one.body)}`);
    // A current answer says when it was given; that instant is each process's own.
    const answer = (body: any) => (path.includes('?at=') ? body : { ...body, at: undefined });
    assert.equal(answer(two.body), answer(one.body), path);
    check?.(one.body);
    return one.body;
  };
  for (const ref of [refs[0]!, refs[7]!, refs[20]!, refs.at(-1)!]) await same(`/api/v0-object/ref/${ref}?sources=NONE`);
  const now = await same('/api/reporting/v0/collection-data/phd_projects', (body) => assert.is(body.rows.length, refs.length + 1));
  await same('/api/reporting/v0/collection-data/people');
  const counts: number[] = [];
  for (const at of instants) counts.push((await same(`/api/reporting/v0/collection-data/phd_projects?at=${encodeURIComponent(at)}`)).rows.length);
  assert.equal(counts, [1, 13, 25, 37]);
  const atEnd = await same(`/api/reporting/v0/collection-data/phd_projects?at=${encodeURIComponent(instants.at(-1)!)}`);
  assert.equal(atEnd.rows, now.rows, 'at the last instant the replay equals the live read model');

  // A cached answer never outlives a checkpoint the process has seen: api-2 caches an object,
  // api-1 renames it, and once api-2 has seen the new checkpoint it answers the new title.
  const cachedRef = refs[3]!;
  const read = (svc: TestService) => call(svc, `/api/v0-object/ref/${cachedRef}?sources=NONE`, { admin: false, headers: { Authorization: `Basic ${Buffer.from(`svc:${reader.key}`).toString('base64')}` } });
  assert.is((await read(b)).status, 200);
  assert.is((await read(b)).status, 200);
  const renamed = await call(a, `/api/admin/objects/${cachedRef}`, { method: 'PATCH', body: { attributes: { 'dc:attribute:title': 'Renamed by api-1' } } });
  assert.is(renamed.status, 200);
  const objectsAt = Math.max(...(await statusOf(standby)).projections.map((p) => p.checkpoint));
  await until('api-2 sees the rename committed', async () => ((await call(b, '/api/admin/projections')).body.projections as Status['projections']).every((p) => p.checkpoint >= objectsAt));
  assert.match(JSON.stringify((await read(b)).body), 'Renamed by api-1');

  // A rebuild asked of an api process is run by the projector holding the projection.
  const asked = await call(b, '/api/admin/projections/objects/rebuild', { method: 'POST' });
  assert.is(asked.status, 202, JSON.stringify(asked.body));
  await until('the projector has rebuilt objects', async () => {
    const seen = (await call(a, '/api/admin/projections')).body.projections as { name: string; rebuild?: { phase: string; error?: string } }[];
    const rebuild = seen.find((p) => p.name === 'objects')?.rebuild;
    assert.not.ok(rebuild?.error, rebuild?.error);
    return rebuild?.phase === 'done';
  });
  assert.match(standby.output(), '"projection":"objects","msg":"rebuild started"');
  for (const p of [api1, api2]) assert.not.match(p.output(), '"msg":"rebuild started"', `${p.name} ran no rebuild`);

  const verify = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.mjs', 'verify', 'all'], { env: env(ctx.dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
  assert.is(verify.code, 0, verify.out);
  assert.is(verify.out.match(/^ok /gm)?.length, projections, verify.out);

  // A clean stop: every survivor exits 0.
  for (const p of [api1, api2, standby]) p.child.kill('SIGTERM');
  assert.equal(await Promise.all([api1, api2, standby].map((p) => p.exited)), [0, 0, 0]);
});

test.run();
