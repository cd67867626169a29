/**
 * The benchmarks measure the service in the form they say: compiled (as the container image runs
 * it) by default, the TypeScript sources with BENCH_FORM=sources. Each form is started for real
 * and answers /healthz; the ready line names the form the process loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const checkout = new URL('../..', import.meta.url).pathname;

/** Starts a benchmark service process under `form` in a fresh bench process, and reports what it saw. */
const startIn = (form: string | undefined) => {
  const data = mkdtempSync(join(tmpdir(), 'svc-bench-form-'));
  try {
    const script = `
      const { startServiceProcess, stopServer, httpRequest } = await import('./bench/domain-support.ts');
      const server = await startServiceProcess('form-test', ${JSON.stringify(join(data, 'data'))});
      const health = await httpRequest(server, 'GET', '/healthz');
      await stopServer(server);
      console.log(JSON.stringify({ form: server.info.form, health: health.status }));`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'BENCH_FORM'));
    return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: checkout, encoding: 'utf8', env: form === undefined ? env : { ...env, BENCH_FORM: form }, timeout: 120_000 });
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
};

test('by default the benchmarks start the compiled service, and it answers', () => {
  const child = startIn(undefined);
  assert.is(child.status, 0, child.stderr);
  assert.equal(JSON.parse(child.stdout.trim().split('\n').pop()!), { form: 'compiled', health: 200 });
});

test('BENCH_FORM=sources starts the TypeScript sources, and they answer', () => {
  const child = startIn('sources');
  assert.is(child.status, 0, child.stderr);
  assert.equal(JSON.parse(child.stdout.trim().split('\n').pop()!), { form: 'sources', health: 200 });
});

test('an unknown BENCH_FORM fails the run instead of measuring something else', () => {
  const child = startIn('fast');
  assert.is.not(child.status, 0);
  assert.match(child.stderr, /BENCH_FORM: expected compiled or sources, got fast/);
});

test.run();
