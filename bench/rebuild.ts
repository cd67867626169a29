/**
 * `rebuild` (issue 7): `svc rebuild all` on a 1,000,000-event data directory while a service
 * process keeps serving reads from it.
 *
 * Data: the caught-up data directory `reporting` left in the same run (its snapshots deleted), or,
 * when `reporting` did not run, a fresh copy of the same generated history caught up here first.
 * A service process serves it; a separate process (bench/rebuild-worker.mjs: the CLI context and
 * `rebuildProjections` for every projector of the app model, shared out among SVC_REBUILD_WORKERS threads, as `svc rebuild all`) rebuilds
 * every read model blue/green. Three processes therefore share the machine's CPUs.
 *
 * Reads (in this process, fetch, keep-alive): two loops of `GET /api/v0-object/ref/<random project>
 * ?sources=NONE` and one loop of `GET /api/reporting/v0/collection-data/phd_projects`, for
 * `5 s x scale` (at least 3 s) before the rebuild and for its whole duration; p50/p99 of each.
 *
 * Targets (issue 15): >= 50,000 events/s overall (`rebuild.logEventsPerSec`: log events / wall time
 * of the whole rebuild, which reads the log once for all projections; events x projections / wall
 * time is reported too), at least 45% of reading + JSON-parsing the same log (`rebuild.
 * readParseEventsPerSec`, raw better-sqlite3, measured just before and just after the rebuild), the
 * rebuild process's peak RSS (`rebuild.peakRssMb`, its own VmHWM: see ownPeakRssMb) <= 600 MB at every scale;
 * no failed read during the rebuild.
 * Correctness (else ok: false): after the service has followed the switched-in projections, the
 * collection data and 20 sampled objects read exactly as before the rebuild, and every projection
 * is live with lag 0.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  ADMIN_TOKEN,
  adminCall,
  basicAuth,
  copyHistory,
  createReaderKey,
  latencySummary,
  loadAverage,
  releaseSharedHistory,
  sharedHistory,
  startServiceProcess,
  stopServer,
  timedGet,
  waitForLagZero,
  type ServerProcess,
} from './domain-support.ts';
import { readParseRate } from './read-parse.ts';
import { serviceProcess } from './service-form.ts';
import { formatRate, progress, round, seededRandom, summarize, type Benchmark, type BenchmarkResult } from './support.ts';

const TARGET_EVENTS_PER_SEC = 50_000;
/** Of the read + parse rate of the same log, measured in the same run. */
const TARGET_RATIO = 0.45;
const TARGET_PEAK_RSS_MB = 600;
const TIMEOUT_MS = 120 * 60_000;
const SAMPLED_OBJECTS = 20;
/** Rebuild worker threads (SVC_REBUILD_WORKERS of the rebuild process); BENCH_REBUILD_WORKERS=1 measures the single-thread rebuild for comparison. */
const REBUILD_WORKERS = Number(process.env.BENCH_REBUILD_WORKERS ?? 2);

interface RebuildRun {
  readonly projections: readonly string[];
  readonly processed: number;
  readonly position: number;
  readonly ms: number;
  readonly phase: string;
  readonly peakRssMb: number;
  /** CPU seconds of the rebuild process, every thread. */
  readonly cpuSeconds?: number;
}

/** Read loops against the service until `until` resolves: object GETs (2 loops) and collection data (1 loop). */
const readWhile = async (server: ServerProcess, auth: Record<string, string>, refs: readonly string[], until: Promise<unknown>) => {
  let stopped = false;
  void until.finally(() => (stopped = true));
  const objects: number[] = [];
  const collection: number[] = [];
  const failures: string[] = [];
  const random = seededRandom(7);
  const loop = async (samples: number[], path: () => string) => {
    while (!stopped) {
      try {
        const r = await timedGet(server, path(), auth);
        if (r.status === 200) samples.push(r.ms);
        else failures.push(`${r.status} ${r.text.slice(0, 160)}`);
      } catch (e) {
        failures.push((e as Error).message);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const objectPath = () => `/api/v0-object/ref/${refs[Math.floor(random() * refs.length)]}?sources=NONE`;
  const started = performance.now();
  await Promise.all([loop(objects, objectPath), loop(objects, objectPath), loop(collection, () => '/api/reporting/v0/collection-data/phd_projects')]);
  return {
    seconds: round((performance.now() - started) / 1000, 1),
    objectGet: latencySummary(objects),
    collectionData: latencySummary(collection),
    failures: failures.length,
    ...(failures.length ? { firstFailures: [...new Set(failures)].slice(0, 5) } : {}),
  };
};

/** What the read models answer: the collection's rows and objects, and the serialised sampled objects. */
const readState = async (server: ServerProcess, auth: Record<string, string>, refs: readonly string[]) => {
  const hash = createHash('sha256');
  const data = await timedGet(server, '/api/reporting/v0/collection-data/phd_projects', auth);
  if (data.status !== 200) throw new Error(`collection-data: ${data.status} ${data.text.slice(0, 200)}`);
  const answer = JSON.parse(data.text) as { rows: unknown[]; objects: unknown; columns: unknown };
  hash.update(JSON.stringify([answer.columns, answer.rows, answer.objects]));
  for (const ref of refs) {
    const r = await timedGet(server, `/api/v0-object/ref/${ref}?sources=NONE`, auth);
    hash.update(`${r.status}:${r.text}`);
  }
  return { digest: hash.digest('hex').slice(0, 16), rows: answer.rows.length };
};

/** Spawns the rebuild process; resolves with its result line once it exits (rejects on failure). */
const runRebuild = (dataDir: string) => {
  let run: RebuildRun | undefined;
  const worker = serviceProcess();
  const child = spawn(process.execPath, [...(worker.tsx ? ['--import', 'tsx'] : []), fileURLToPath(new URL('./rebuild-worker.mjs', import.meta.url))], {
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_'))), ...worker.env, SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_LOG_LEVEL: 'warn', SVC_REBUILD_WORKERS: String(REBUILD_WORKERS) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    run = JSON.parse(line) as RebuildRun;
    progress(`rebuild: ${run.projections.length} projections, ${run.processed} log events in ${(run.ms / 1000).toFixed(1)} s (${formatRate((run.processed * 1000) / run.ms)})`);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  return new Promise<RebuildRun>((resolve, reject) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0 && run) resolve(run);
      else reject(new Error(`rebuild process exited with ${code}`));
    });
  });
};

/** Waits until the service has followed every switched-in projection (its checkpoint watch runs every 5 s). */
const waitForFollow = async (server: ServerProcess, head: number) => {
  const started = performance.now();
  for (;;) {
    const { projections } = await adminCall<{ projections: { name: string; state: string; checkpoint: number; lag: number }[] }>(server, 'GET', '/api/admin/projections');
    if (projections.every((p) => p.state === 'live' && p.lag === 0 && p.checkpoint >= head)) return performance.now() - started;
    if (performance.now() - started > 60_000) throw new Error(`service did not follow the rebuilt projections: ${JSON.stringify(projections)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

export const rebuild: Benchmark = {
  name: 'rebuild',
  description: `svc rebuild all (every projector, in rebuild worker threads, own process) on a 1,000,000-event data directory while a service process serves object and collection-data reads: log events/s (target >= ${TARGET_EVENTS_PER_SEC} and >= ${TARGET_RATIO} x read + parse of the same log), peak RSS (target <= ${TARGET_PEAK_RSS_MB} MB), read p50/p99 before vs during`,
  async run(scale: number): Promise<BenchmarkResult> {
    const loadBefore = loadAverage();
    const shared = await sharedHistory(scale);
    const { history } = shared;
    let server: ServerProcess | undefined;
    try {
      let dataDir: string;
      let catchUp: Record<string, unknown>;
      if (shared.caughtUp) {
        dataDir = shared.caughtUp.dir;
        catchUp = { by: 'reporting (same run)', ms: shared.caughtUp.catchUpMs, snapshotsDeleted: shared.caughtUp.snapshotsDeleted };
        server = await startServiceProcess('rebuild-service', dataDir);
      } else {
        dataDir = copyHistory(shared, 'served');
        progress(`rebuild: service catching up ${history.plan.events} events first`);
        server = await startServiceProcess('rebuild-service', dataDir, {}, TIMEOUT_MS);
        catchUp = { by: 'rebuild (reporting did not run)', listeningAfterMs: server.readyAfterMs };
      }
      const waited = await waitForLagZero(server, TIMEOUT_MS);
      if (!shared.caughtUp) catchUp = { ...catchUp, ms: Math.round(server.readyAfterMs + waited) };
      shared.caughtUp = undefined;

      const key = await createReaderKey(server, `bench-rebuild-reader-${Date.now().toString(36)}`, { readLabels: ['svc:label:common'] });
      const auth = { Authorization: basicAuth(key) };
      const refs = history.projectRefs;
      const sampled = Array.from({ length: SAMPLED_OBJECTS }, (_, i) => refs[Math.floor((i * refs.length) / SAMPLED_OBJECTS)]!);
      const before = await readState(server, auth, sampled);
      const { projections } = await adminCall<{ projections: { head: number }[] }>(server, 'GET', '/api/admin/projections');
      const head = projections[0]!.head;

      progress('rebuild: reads before the rebuild');
      const quietSeconds = Math.max(3, Math.round(5 * scale));
      const readsBefore = await readWhile(server, auth, refs, new Promise((r) => setTimeout(r, quietSeconds * 1000)));

      const readParseBefore = readParseRate(join(dataDir, 'events.db'));
      progress(`rebuild: read + parse ${formatRate(readParseBefore.eventsPerSec)}`);
      progress(`rebuild: rebuilding every projection of ${head} events while reading`);
      const started = performance.now();
      const rebuilding = runRebuild(dataDir);
      const [run, readsDuring] = await Promise.all([rebuilding, readWhile(server, auth, refs, rebuilding.catch(() => undefined))]);
      const totalMs = performance.now() - started;

      const readParseAfter = readParseRate(join(dataDir, 'events.db'));
      const readParse = summarize([readParseBefore.eventsPerSec, readParseAfter.eventsPerSec]);
      const followMs = await waitForFollow(server, head);
      const after = await readState(server, auth, sampled);

      // The log is read once for every projection: the rate is log events over the wall time of the whole run.
      const overall = Math.round((head * 1000) / totalMs);
      const ok = before.digest === after.digest && run.phase === 'done' && run.position >= head && readsBefore.failures === 0;
      const ratio = round(overall / readParse.mean);
      const targets = {
        logEventsPerSec: { min: TARGET_EVENTS_PER_SEC, actual: overall, met: overall >= TARGET_EVENTS_PER_SEC },
        ratioToReadParse: { min: TARGET_RATIO, actual: ratio, met: ratio >= TARGET_RATIO },
        peakRssMb: { max: TARGET_PEAK_RSS_MB, actual: run.peakRssMb, met: run.peakRssMb > 0 && run.peakRssMb <= TARGET_PEAK_RSS_MB },
      };
      return {
        ok,
        meetsTarget: ok && Object.values(targets).every((t) => t.met) && readsDuring.failures === 0,
        targets,
        overallEventsPerSec: overall,
        rebuild: {
          logEventsPerSec: overall,
          readParseEventsPerSec: readParse.mean,
          ratioToReadParse: ratio,
          peakRssMb: run.peakRssMb,
          readParse: { what: 'raw better-sqlite3 over the same events.db, before and after the rebuild: every event in position order, JSON.parse of data and metadata', spreadPct: readParse.spreadPct, runs: [readParseBefore, readParseAfter] },
          how: 'own process: openCli() over the data directory, then svc rebuild all: every projector, shared out among the rebuild worker threads (each one pass over the log, default batch size 2000); wall time includes process start',
          workers: REBUILD_WORKERS,
          cpuSeconds: run.cpuSeconds,
          logEvents: head,
          projections: run.projections,
          processed: run.processed,
          inProcessSeconds: round(run.ms / 1000, 1),
          totalSeconds: round(totalMs / 1000, 1),
          projectorEventsPerSec: Math.round((head * run.projections.length * 1000) / totalMs),
          serviceFollowedAfterMs: Math.round(followMs),
        },
        reads: { before: readsBefore, during: readsDuring },
        verified: { before: before.digest, after: after.digest, rows: after.rows, sampledObjects: sampled.length },
        data: { events: history.plan.events, objects: history.plan.objects, projects: history.plan.projects, catchUp },
        machineLoad: { before: loadBefore, after: loadAverage() },
      };
    } finally {
      if (server) await stopServer(server);
      releaseSharedHistory();
    }
  },
};
