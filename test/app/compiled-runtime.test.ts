import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chooseRuntime } from '../../bin/runtime.mjs';
import { tempDir } from '../support/tmp.ts';

const test = suite('compiled runtime');
const repo = resolve('.');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (bounded: a hung child is killed and fails the test with what it printed). */
const run = (command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }) =>
  new Promise<Run>((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${command} ${args.join(' ')} did not finish in time; stdout: ${stdout} stderr: ${stderr}`));
    }, options.timeoutMs ?? 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });

const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

test('the compiled form runs only when dist/ is built and no source is newer than the build', () => {
  const tmp = tempDir('svc-runtime-choice');
  try {
    const root = tmp.dir;
    mkdirSync(join(root, 'src', 'cli'), { recursive: true });
    writeFileSync(join(root, 'src', 'main.ts'), '');
    writeFileSync(join(root, 'src', 'cli', 'main.ts'), '');
    const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
    at('src/main.ts', 1_000);
    at('src/cli/main.ts', 1_000);
    assert.equal(chooseRuntime(root), { form: 'sources' }, 'never built: the sources, quietly');

    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', 'build-stamp.json'), JSON.stringify({ startedAt: 2_000_000 }));
    assert.equal(chooseRuntime(root), { form: 'compiled' }, 'built after every source was saved');

    at('src/cli/main.ts', 3_000);
    assert.equal(chooseRuntime(root), { form: 'sources', stale: join('src', 'cli', 'main.ts') }, 'a source saved after the build started');

    at('src/cli/main.ts', 1_000);
    writeFileSync(join(root, 'tsconfig.json'), '{}');
    at('tsconfig.json', 3_000);
    assert.equal(chooseRuntime(root), { form: 'sources', stale: 'tsconfig.json' }, 'compiler settings changed after the build');

    const image = join(root, 'image');
    mkdirSync(join(image, 'dist'), { recursive: true });
    writeFileSync(join(image, 'dist', 'build-stamp.json'), JSON.stringify({ startedAt: 0 }));
    assert.equal(chooseRuntime(image), { form: 'compiled' }, 'no sources shipped (the container image): the build');
  } finally {
    tmp.remove();
  }
});

test('npm run build emits JavaScript that serves, rebuilds and answers svc commands without tsx installed', async () => {
  const tmp = tempDir('svc-compiled');
  // Laid out as the container image is: package.json, node_modules, dist/, config/, bin/; no src/, and no tsx
  // (every other installed package is linked in), so nothing can fall back to TypeScript.
  const app = join(tmp.dir, 'app');
  const dataDir = join(tmp.dir, 'data');
  let service: ReturnType<typeof spawn> | undefined;
  try {
    mkdirSync(join(app, 'node_modules'), { recursive: true });
    copyFileSync(join(repo, 'package.json'), join(app, 'package.json'));
    cpSync(join(repo, 'config'), join(app, 'config'), { recursive: true });
    cpSync(join(repo, 'bin'), join(app, 'bin'), { recursive: true });
    for (const name of readdirSync(join(repo, 'node_modules'))) {
      if (name !== 'tsx' && name !== '.bin') symlinkSync(join(repo, 'node_modules', name), join(app, 'node_modules', name));
    }
    assert.not.ok(existsSync(join(app, 'node_modules', 'tsx')));

    const built = await run(process.execPath, ['scripts/build.mjs', '--out', join(app, 'dist')], { cwd: repo, timeoutMs: 300_000 });
    assert.is(built.code, 0, built.stdout + built.stderr);
    assert.ok(existsSync(join(app, 'dist', 'build-stamp.json')), 'the build stamps what it built');
    assert.match(readFileSync(join(app, 'dist', 'src', 'main.js'), 'utf8'), "from './app/service.js'", 'relative imports point at .js');
    assert.ok(existsSync(join(app, 'dist', 'src', 'http', 'admin-ui', 'assets', 'admin.css')), 'admin interface files copied');

    const token = 'compiled-runtime-admin-token-0123456789';
    const { MALLOC_ARENA_MAX: _, ...inherited } = process.env;
    const env = { ...inherited, SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: token, SVC_HOST: '127.0.0.1', FORCE_COLOR: '0', NODE_OPTIONS: '' };
    // npm start, as an operator runs it (its own process group, so the stop reaches node under npm).
    service = spawn('npm', ['start', '--silent'], { cwd: app, env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let log = '';
    service.stdout!.on('data', (d) => (log += d));
    service.stderr!.on('data', (d) => (log += d));
    const exited = new Promise<number | null>((r) => service!.on('close', r));
    let ended = false;
    void exited.then(() => (ended = true));
    const port = await until('service started', async () => {
      const started = /"port":(\d+)[^\n]*"msg":"service started"/.exec(log)?.[1];
      if (started) return started;
      if (ended) return `ended before it started: ${log}`;
      return undefined;
    });
    assert.match(port, /^\d+$/, port);
    const base = `http://127.0.0.1:${port}`;
    const admin = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };

    assert.is((await fetch(`${base}/healthz`)).status, 200);
    // npm start bounds glibc's malloc arenas (README, Deployment) unless the operator set the variable.
    const pid = /"pid":(\d+)[^\n]*"msg":"service started"/.exec(log)?.[1];
    assert.ok(pid, `the start line names the process: ${log}`);
    assert.ok(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes('MALLOC_ARENA_MAX=2'), 'MALLOC_ARENA_MAX=2 in the service environment');
    // The service keeps V8's garbage-collector helper threads: without them its `at` answers were a third slower (README, Deployment).
    assert.not.ok(readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('--single-threaded-gc'), readFileSync(`/proc/${pid}/cmdline`, 'latin1'));
    const css = await fetch(`${base}/admin/assets/admin.css`);
    assert.is(css.status, 200, 'the admin interface finds its files from dist/');
    assert.ok((await css.text()).length > 100);
    const created = await fetch(`${base}/api/admin/objects`, { method: 'POST', headers: admin, body: JSON.stringify({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Ada Lovelace' } }) });
    assert.is(created.status, 201, await created.clone().text());
    const { ref } = (await created.json()) as { ref: string };
    // A rebuild runs in a worker thread, which must load the compiled worker module too.
    assert.is((await fetch(`${base}/api/admin/projections/objects/rebuild`, { method: 'POST', headers: admin })).status, 202);
    const phase = await until('the rebuild to end', async () => {
      const { projections } = (await (await fetch(`${base}/api/admin/projections`, { headers: admin })).json()) as { projections: { name: string; rebuild?: { phase: string } }[] };
      const p = projections.find((x) => x.name === 'objects')?.rebuild?.phase;
      return p === 'done' || p === 'failed' ? p : undefined;
    });
    assert.is(phase, 'done', log);

    process.kill(-service.pid!, 'SIGTERM');
    await exited;
    service = undefined;
    assert.not.match(log, /tsx|ERR_MODULE_NOT_FOUND/);

    const cli = (args: string[]) => run(process.execPath, ['bin/svc.mjs', ...args], { cwd: app, env });
    const version = await cli(['--version']);
    assert.is(version.stdout, `svc ${(JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version}\n`, version.stderr);
    const events = await cli(['events', '--stream', `object-${ref}`]);
    assert.is(events.code, 0, events.stderr);
    assert.match(events.stdout, 'Ada Lovelace');
    const projections = await cli(['projections', '--json']);
    assert.is(projections.code, 0, projections.stderr);
    const rows = JSON.parse(projections.stdout) as { name: string; lag: number }[];
    const objects = rows.find((r) => r.name === 'objects');
    assert.is(objects?.lag, 0, projections.stdout);
    assert.not.match(events.stderr + projections.stderr, /tsx|ERR_MODULE_NOT_FOUND/);

    // npx runs the bin through its #! line, which gives node no garbage-collector flag: single-threaded
    // collection held 200-400 MB more in a rebuild on Node 24 and saved nothing on Node 20 and 22 (README, Deployment).
    const argvProbe = join(tmp.dir, 'print-exec-argv.cjs');
    writeFileSync(argvProbe, 'process.stderr.write(`execArgv ${JSON.stringify(process.execArgv)}\\n`);');
    const direct = await run(join(app, 'bin', 'svc.mjs'), ['--version'], { cwd: app, env: { ...env, NODE_OPTIONS: `--require ${argvProbe}` } });
    assert.is(direct.code, 0, direct.stderr);
    assert.match(direct.stdout, /^svc /);
    assert.not.ok((JSON.parse(/^execArgv (.*)$/m.exec(direct.stderr)?.[1] ?? '[]') as string[]).includes('--single-threaded-gc'), direct.stderr);
  } finally {
    try {
      if (service?.pid) process.kill(-service.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    tmp.remove();
  }
});

test.run();
