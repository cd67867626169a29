/**
 * `reporting` (issue 5): the Reporting API over a year of history.
 *
 * Data: 1,000,000 events over 50,000 objects (10 faculties, 190 departments, 39,800 people, 10,000
 * PhD projects = the rows of `phd_projects`) written straight into the embedded event store with
 * `appendMany` (bench/domain-support.ts `generateHistory`), recorded times spread over the past
 * year by the store's `clock`. Objects are created in the first half; ~95% of the events are
 * attribute changes.
 *
 * Steps: a service process starts on a copy of that log and catches up (catch-up time = from spawn
 * until `/api/admin/projections` shows every projection live with lag 0; the service only listens
 * once its runner has caught up, so "listening after" is reported too). With a reporting API key:
 * - current: `GET /api/reporting/v0/collection-data/phd_projects`, 30 sequential requests (x scale,
 *   at least 5) after one warm-up;
 * - at: the same with `?at=<middle of the history>`, 15 requests, with the snapshots the runner took
 *   (default SVC_SNAPSHOT_INTERVAL = 2,000);
 * - full replay: the service is stopped, every row of the snapshots collection is deleted from its
 *   read store, and it is started again on the same data with SVC_SNAPSHOT_INTERVAL=100000000, so
 *   the same `at` request replays the log from position 0 (3 requests, through HTTP as well).
 * Latency = wall time of one request to the last byte of its body, measured in this process.
 *
 * Targets: at p50 <= 3 x current p50, and full-replay p50 >= 20 x at p50.
 * Correctness (else ok: false): every answer is 200; current rows = the 10,000 projects with the
 * title and progress the generator last gave them; `at` rows = the projects that existed at that
 * instant with their title and progress then; the full-replay answer is identical to the answer
 * from snapshots.
 *
 * The caught-up data directory is left for `rebuild` (run after this one in the same run).
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  basicAuth,
  copyHistory,
  createReaderKey,
  latencySummary,
  loadAverage,
  sharedHistory,
  startServiceProcess,
  stopServer,
  timedGet,
  waitForLagZero,
  type ServerProcess,
} from './domain-support.ts';
import { formatRate, progress, round, type Benchmark, type BenchmarkResult } from './support.ts';

const TARGET_AT_VS_CURRENT = 3;
const TARGET_REPLAY_SPEEDUP = 20;
const CATCH_UP_TIMEOUT_MS = 60 * 60_000;

interface CollectionAnswer {
  readonly at: string;
  readonly status: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly unknown[])[];
  readonly objects: Record<string, unknown>;
}

const digest = (a: CollectionAnswer) => createHash('sha256').update(JSON.stringify([a.columns, a.rows, a.objects])).digest('hex').slice(0, 16);

/** Rows against the expected projects (title is column 2, progress column 8); answers the problems found. */
const checkRows = (a: CollectionAnswer, expected: ReadonlyMap<string, { title: string; progress: number }>): string[] => {
  const problems: string[] = [];
  if (a.rows.length !== expected.size) problems.push(`${a.rows.length} rows, expected ${expected.size}`);
  const title = a.columns.indexOf('title');
  const progressColumn = a.columns.indexOf('progress');
  for (const row of a.rows) {
    const e = expected.get(row[0] as string);
    if (!e) problems.push(`unexpected row ${String(row[0])}`);
    else if (row[title] !== e.title || row[progressColumn] !== e.progress) problems.push(`row ${String(row[0])}: ${JSON.stringify([row[title], row[progressColumn]])} != ${JSON.stringify([e.title, e.progress])}`);
    if (problems.length > 5) break;
  }
  return problems;
};

const series = async (label: string, count: number, server: ServerProcess, path: string, auth: Record<string, string>, check: (a: CollectionAnswer) => string[]) => {
  const ms: number[] = [];
  const digests = new Set<string>();
  const problems: string[] = [];
  let bytes = 0;
  let rows = 0;
  for (let i = 0; i < count; i++) {
    const r = await timedGet(server, path, auth);
    if (r.status !== 200) {
      problems.push(`${label}: ${r.status} ${r.text.slice(0, 200)}`);
      continue;
    }
    ms.push(r.ms);
    const answer = JSON.parse(r.text) as CollectionAnswer;
    bytes = r.text.length;
    rows = answer.rows.length;
    digests.add(digest(answer));
    if (i === 0) problems.push(...check(answer).map((p) => `${label}: ${p}`));
  }
  if (digests.size > 1) problems.push(`${label}: ${digests.size} different answers`);
  progress(`reporting: ${label}: p50 ${round(latencySummary(ms).p50Ms, 1)} ms over ${ms.length} requests`);
  return { latency: latencySummary(ms), bytes, rows, digest: [...digests][0], problems };
};

const fileMb = (path: string) => {
  try {
    return round(statSync(path).size / 2 ** 20, 1);
  } catch {
    return 0;
  }
};

export const reporting: Benchmark = {
  name: 'reporting',
  description: `Reporting API over 1,000,000 events / 50,000 objects (10,000 phd_projects rows) spread over a year: catch-up time, current collection-data p50 vs at-in-the-middle p50 with snapshots (target <= ${TARGET_AT_VS_CURRENT}x) and without usable snapshots (target >= ${TARGET_REPLAY_SPEEDUP}x slower)`,
  async run(scale: number): Promise<BenchmarkResult> {
    const loadBefore = loadAverage();
    const shared = await sharedHistory(scale);
    const { history } = shared;
    const dir = copyHistory(shared, 'served');
    shared.caughtUp = undefined;
    let server: ServerProcess | undefined;
    try {
      progress(`reporting: service catching up ${history.plan.events} events (it listens once caught up)`);
      server = await startServiceProcess('reporting-service', dir, {}, CATCH_UP_TIMEOUT_MS);
      const listeningAfterMs = server.readyAfterMs;
      const waitedMs = await waitForLagZero(server, CATCH_UP_TIMEOUT_MS);
      const catchUpMs = Math.round(listeningAfterMs + waitedMs);
      progress(`reporting: caught up in ${(catchUpMs / 1000).toFixed(1)} s (${formatRate((history.plan.events * 1000) / catchUpMs)})`);
      const readDbMb = fileMb(join(dir, 'read.db'));

      const key = await createReaderKey(server, 'bench-reporter', { readLabels: ['svc:label:common'] }, '/api/reporting/v0/');
      const auth = { Authorization: basicAuth(key) };
      const base = '/api/reporting/v0/collection-data/phd_projects';
      const at = new Date(history.midMs).toISOString();
      const nCurrent = Math.max(5, Math.round(30 * scale));
      const nAt = Math.max(5, Math.round(15 * scale));
      const nReplay = 3;

      await timedGet(server, base, auth);
      const current = await series('current', nCurrent, server, base, auth, (a) => checkRows(a, history.finalProjects));
      const firstAt = await timedGet(server, `${base}?at=${at}`, auth);
      const withSnapshots = await series('at (snapshots)', nAt, server, `${base}?at=${at}`, auth, (a) => checkRows(a, history.midProjects));
      // The service keeps the last snapshots it read parsed: repeated `at` answers are warm. These are
      // not: each instant starts from a different snapshot than the one before.
      const coldMs: number[] = [];
      const span = history.plan.endMs - history.plan.startMs;
      for (let i = 0; i < nAt; i++) {
        const instant = new Date(history.midMs + ((i % 2 ? 1 : -1) * Math.ceil(i / 2) * span) / 50).toISOString();
        const r = await timedGet(server, `${base}?at=${instant}`, auth);
        if (r.status === 200) coldMs.push(r.ms);
      }
      const cold = latencySummary(coldMs);
      progress(`reporting: at (distinct instants, no parsed snapshot to reuse): p50 ${round(cold.p50Ms, 1)} ms`);
      await stopServer(server);
      server = undefined;

      const db = new Database(join(dir, 'read.db'));
      const snapshotRows = db.prepare('DELETE FROM rc_snapshots').run().changes;
      db.close();
      progress(`reporting: deleted ${snapshotRows} snapshot rows; restarting with SVC_SNAPSHOT_INTERVAL=100000000`);
      server = await startServiceProcess('reporting-service-no-snapshots', dir, { SVC_SNAPSHOT_INTERVAL: '100000000' }, CATCH_UP_TIMEOUT_MS);
      await waitForLagZero(server);
      const replay = await series('at (full replay)', nReplay, server, `${base}?at=${at}`, auth, (a) => checkRows(a, history.midProjects));
      await stopServer(server);
      server = undefined;
      shared.caughtUp = { dir, catchUpMs, snapshotsDeleted: true };

      const problems = [...current.problems, ...withSnapshots.problems, ...replay.problems];
      if (coldMs.length !== nAt) problems.push(`at (distinct instants): ${nAt - coldMs.length} answers were not 200`);
      if (replay.digest !== withSnapshots.digest) problems.push('the full-replay answer differs from the answer from snapshots');
      const ok = problems.length === 0 && current.latency.count > 0 && withSnapshots.latency.count > 0 && replay.latency.count > 0;
      const atVsCurrent = round(withSnapshots.latency.p50Ms / current.latency.p50Ms, 2);
      const replaySpeedup = round(replay.latency.p50Ms / withSnapshots.latency.p50Ms, 1);
      return {
        ok,
        meetsTarget: ok && atVsCurrent <= TARGET_AT_VS_CURRENT && replaySpeedup >= TARGET_REPLAY_SPEEDUP,
        targets: { atVsCurrentP50: `<= ${TARGET_AT_VS_CURRENT}`, fullReplayVsAtP50: `>= ${TARGET_REPLAY_SPEEDUP}` },
        atVsCurrent,
        replaySpeedup,
        ...(problems.length ? { problems: problems.slice(0, 20) } : {}),
        data: {
          events: history.plan.events,
          objects: history.plan.objects,
          projects: history.plan.projects,
          history: `${new Date(history.plan.startMs).toISOString()} .. ${new Date(history.plan.endMs).toISOString()}`,
          generateMs: history.generateMs,
          eventsDbMb: history.eventsDbMb,
          readDbMbAfterCatchUp: readDbMb,
          snapshotRowsDeleted: snapshotRows,
          eventKinds: history.counts,
        },
        catchUp: {
          ms: catchUpMs,
          eventsPerSec: Math.round((history.plan.events * 1000) / catchUpMs),
          listeningAfterMs,
          note: 'from spawn (process start included) until every projection is live with lag 0; the service answered no HTTP request (did not listen) until then',
        },
        current: { ...current.latency, bytes: current.bytes, rows: current.rows },
        at: { at, snapshotInterval: 2_000, ...withSnapshots.latency, bytes: withSnapshots.bytes, rows: withSnapshots.rows, firstRequestMs: round(firstAt.ms, 1) },
        atDistinctInstants: {
          how: `${nAt} instants spread around the middle (steps of 1/50 of the history), each answered from another snapshot than the one before: nothing parsed to reuse`,
          ...cold,
          vsCurrentP50: round(cold.p50Ms / current.latency.p50Ms, 2),
        },
        fullReplay: {
          how: 'snapshots deleted from the read store (DELETE FROM rc_snapshots), service restarted on the same data with SVC_SNAPSHOT_INTERVAL=100000000; the same at request through HTTP replays from position 0',
          ...replay.latency,
          rows: replay.rows,
        },
        machineLoad: { before: loadBefore, after: loadAverage() },
      };
    } finally {
      if (server) await stopServer(server);
    }
  },
};
