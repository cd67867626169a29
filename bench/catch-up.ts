/**
 * `catch-up` (issue 15, target 2): a fresh service catching up on the generated history (the app's
 * own events: objects created and changed over a year, 1,000,000 events at scale 1), folding every
 * read model of the app (objects, users, work units, REST APIs, files and the reporting collections
 * with their snapshots), in its own process with a fresh read store (bench/service-catch-up.ts).
 *
 * Baseline in the same run, before and after: reading the same log and JSON-parsing every event's
 * data and metadata (raw better-sqlite3, position order), which no fold can beat.
 *
 * Figures: catch-up events/s (log events over the time from spawn until every projection is live
 * with lag 0), its ratio to the read+parse rate, the service's peak RSS, and the p99 of a status read
 * made in a loop while it catches up. Targets: >= 40,000 events/s, peak RSS <= 600 MB, read p99
 * <= 100 ms. Correctness (else ok: false): the phd_projects collection answers one row per project
 * with the title and progress the generator last gave it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { basicAuth, copyHistory, createReaderKey, loadAverage, sharedHistory, stopServer, timedGet, type ServerProcess } from './domain-support.ts';
import { readParseRate } from './read-parse.ts';
import { measureServiceCatchUp } from './service-catch-up.ts';
import { formatRate, progress, round, summarize, type Benchmark, type BenchmarkResult } from './support.ts';

const TARGET_EVENTS_PER_SEC = 40_000;
const TARGET_PEAK_RSS_MB = 600;
const TARGET_READ_P99_MS = 100;

const checkCollection = async (server: ServerProcess, expected: ReadonlyMap<string, { title: string; progress: number }>): Promise<string[]> => {
  const key = await createReaderKey(server, `bench-catch-up-reader-${Date.now().toString(36)}`, { readLabels: ['svc:label:common'] });
  const r = await timedGet(server, '/api/reporting/v0/collection-data/phd_projects', { Authorization: basicAuth(key) });
  if (r.status !== 200) return [`collection-data: ${r.status} ${r.text.slice(0, 200)}`];
  const answer = JSON.parse(r.text) as { columns: string[]; rows: unknown[][] };
  const problems: string[] = [];
  if (answer.rows.length !== expected.size) problems.push(`${answer.rows.length} rows, expected ${expected.size}`);
  const title = answer.columns.indexOf('title');
  const progressColumn = answer.columns.indexOf('progress');
  for (const row of answer.rows) {
    const e = expected.get(row[0] as string);
    if (!e) problems.push(`unexpected row ${String(row[0])}`);
    else if (row[title] !== e.title || row[progressColumn] !== e.progress) problems.push(`row ${String(row[0])}: ${JSON.stringify([row[title], row[progressColumn]])}`);
    if (problems.length > 5) break;
  }
  return problems;
};

export const catchUp: Benchmark = {
  name: 'catch-up',
  description: `A fresh service (own process, fresh read store) catching up on the generated history, folding every read model of the app: events/s (target >= ${TARGET_EVENTS_PER_SEC}) vs reading + JSON-parsing the same log, peak RSS (target <= ${TARGET_PEAK_RSS_MB} MB), status read p99 while it runs (target <= ${TARGET_READ_P99_MS} ms)`,
  async run(scale: number): Promise<BenchmarkResult> {
    const loadBefore = loadAverage();
    const shared = await sharedHistory(scale);
    const { history } = shared;
    const dir = copyHistory(shared, 'catch-up');
    const baselines = [readParseRate(join(dir, 'events.db'))];
    progress(`catch-up: read + parse ${formatRate(baselines[0]!.eventsPerSec)}`);
    let server: ServerProcess | undefined;
    try {
      progress(`catch-up: fresh service catching up ${history.plan.events} events`);
      const measured = await measureServiceCatchUp('catch-up-service', dir, history.plan.events);
      server = measured.server;
      const figures = measured.figures;
      progress(`catch-up: ${formatRate(figures.eventsPerSec)}, peak RSS ${figures.peakRssMb} MB, status read p99 ${figures.readP99Ms} ms`);
      const problems = await checkCollection(server, history.finalProjects);
      await stopServer(server);
      server = undefined;
      baselines.push(readParseRate(join(history.dir, 'events.db')));
      const readParse = summarize(baselines.map((b) => b.eventsPerSec));
      const ok = problems.length === 0 && figures.readFailures === 0;
      const targets = {
        eventsPerSec: { min: TARGET_EVENTS_PER_SEC, actual: figures.eventsPerSec, met: figures.eventsPerSec >= TARGET_EVENTS_PER_SEC },
        peakRssMb: { max: TARGET_PEAK_RSS_MB, actual: figures.peakRssMb, met: figures.peakRssMb > 0 && figures.peakRssMb <= TARGET_PEAK_RSS_MB },
        readP99Ms: { max: TARGET_READ_P99_MS, actual: figures.readP99Ms, met: figures.readP99Ms <= TARGET_READ_P99_MS },
      };
      return {
        ok,
        meetsTarget: ok && Object.values(targets).every((t) => t.met),
        events: history.plan.events,
        catchUp: { ...figures, ratioToReadParse: round(figures.eventsPerSec / readParse.mean) },
        baseline: { what: 'raw better-sqlite3: every event of the log in position order, pages of 2,000, JSON.parse of data and metadata', readParseEventsPerSec: readParse.mean, spreadPct: readParse.spreadPct, runs: baselines },
        targets,
        ...(problems.length ? { problems } : {}),
        data: { events: history.plan.events, objects: history.plan.objects, projects: history.plan.projects },
        machineLoad: { before: loadBefore, after: loadAverage() },
      };
    } finally {
      if (server) await stopServer(server);
      // The history stays for reporting and rebuild later in the run (removed when the process exits).
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
