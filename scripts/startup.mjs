// Start-up time (spawn to the first 200 on /healthz) and resident memory of the service in its two forms, the
// compiled JavaScript of `npm run build` and the TypeScript sources through tsx, alternated run by run so that a
// busy machine weighs on both alike. Each run has a fresh data directory (a first start: engines created,
// projections caught up on an empty log). Prints JSON; needs a current build in dist/.
//   node scripts/startup.mjs [--runs 5]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chooseRuntime } from '../bin/runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const choice = chooseRuntime(root);
if (choice.form !== 'compiled') {
  process.stderr.write(`dist/ is ${choice.stale ? `older than ${choice.stale}` : 'not built'}: npm run build first\n`);
  process.exit(2);
}

const FORMS = {
  compiled: [join(root, 'dist', 'src', 'main.js')],
  tsx: ['--import', 'tsx', join(root, 'src', 'main.ts')],
};

/** kB of a process's memory from /proc (VmRSS now, VmHWM its peak). */
const memory = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1]);
  return { rssKb: kb('VmRSS'), peakRssKb: kb('VmHWM') };
};

const once = (form, port) =>
  new Promise((resolve, reject) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
    const started = performance.now();
    const child = spawn(process.execPath, FORMS[form], {
      cwd: root,
      env: { ...process.env, SVC_DATA_DIR: dataDir, PORT: String(port), SVC_HOST: '127.0.0.1', SVC_ADMIN_TOKEN: 'startup-measure-token-0123456789', SVC_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const finish = (result) => {
      child.kill('SIGTERM');
      child.once('close', () => {
        rmSync(dataDir, { recursive: true, force: true });
        if (result instanceof Error) reject(result);
        else resolve(result);
      });
    };
    const poll = async () => {
      if (child.exitCode !== null) return finish(new Error(`${form} exited: ${stderr}`));
      if (performance.now() - started > 120_000) return finish(new Error(`${form}: no 200 on /healthz within 120 s`));
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
      if (!ok) return setTimeout(poll, 5);
      const ms = performance.now() - started;
      // Memory as the first answer leaves it, and again once start-up work has settled.
      const first = memory(child.pid);
      setTimeout(() => finish({ ms: Math.round(ms), rssKbAtFirst200: first.rssKb, ...memory(child.pid) }), 2_000);
    };
    poll();
  });

/** A port free right now on loopback (the service is then told it, so the poll needs no log parsing). */
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const results = { compiled: [], tsx: [] };
for (let i = 0; i < runs; i++) {
  for (const form of i % 2 === 0 ? ['compiled', 'tsx'] : ['tsx', 'compiled']) {
    results[form].push(await once(form, await freePort()));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = Object.fromEntries(
  Object.entries(results).map(([form, rs]) => [
    form,
    {
      runs: rs,
      medianMs: median(rs.map((r) => r.ms)),
      medianRssMbAtFirst200: Math.round(median(rs.map((r) => r.rssKbAtFirst200)) / 1024),
      medianRssMbSettled: Math.round(median(rs.map((r) => r.rssKb)) / 1024),
      medianPeakRssMb: Math.round(median(rs.map((r) => r.peakRssKb)) / 1024),
    },
  ]),
);
summary.node = process.version;
summary.ratioMs = Math.round((summary.tsx.medianMs / summary.compiled.medianMs) * 100) / 100;
console.log(JSON.stringify(summary, null, 2));
