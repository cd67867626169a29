/**
 * `idle-rss` (issue 15, targets 2 and 5): what a service holds when it has nothing to do, and what
 * its snapshots cost on disk.
 *
 * On a copy of the shared generated history (1,000,000 events at scale 1), a fresh service process
 * catches up (bench/service-catch-up.ts); then, each followed by reads of the process's resident
 * set (VmRSS in /proc/<pid>/status) SOON_MS and IDLE_MS after the step ended: V8 keeps the heap a
 * burst grew for a while after it (measured: 433 MB 2 s after 15,000 writes at 200k events, 342 MB
 * 20 s later, with the same live heap), so the idle figure is the later one, the other is reported
 * beside it. After writes and after `at` answers a third reading LATER_MS after the step is
 * reported too (`laterRssMb`, not part of the verdict): V8's memory reducer collects a burst's
 * garbage about 24 s after it ends (`--trace-gc`), so the IDLE_MS reading can land either side of it:
 * - idle: caught up, nothing asked (`idleRssMb`, target at most 400 MB at 1M events);
 * - after writes: NEW_OBJECTS x scale new people created through the admin API (8 at a time), every
 *   projection caught up again: memory must not grow with objects written since start (the issue's
 *   88,000 new objects took a service from 352 to 975 MB);
 * - after `at`: AT_INSTANTS answers for distinct instants spread over the history (each replays
 *   from a snapshot and may keep parsed fold states).
 * Then the service stops and read.db is measured: file size (with its WAL) and the pages of the
 * snapshots table and its indexes (SQLite's dbstat: rows, their bytes fields and page overhead):
 * `readDb.snapshotsShare`, target at most 0.25 at 1M events.
 *
 * `measureIdleRss` is exported for `reporting`, which can report the same figure as `reporting.idleRssMb`
 * on the service it has already caught up.
 */
import Database from 'better-sqlite3';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { adminCall, basicAuth, copyHistory, createReaderKey, sharedHistory, stopServer, timedGet, waitForLagZero, type ServerProcess } from './domain-support.ts';
import { measureServiceCatchUp } from './service-catch-up.ts';
import { progress, round, type Benchmark, type BenchmarkResult } from './support.ts';

const TARGET_IDLE_RSS_MB = 400;
const TARGET_SNAPSHOT_SHARE = 0.25;
const SOON_MS = 3000;
const IDLE_MS = 30_000;
const LATER_MS = 90_000;
const NEW_OBJECTS = 88_000;
const WRITERS = 8;
const AT_INSTANTS = 8;

/** Resident set of a process now, in MiB (0 where there is no /proc). */
export const rssMb = (pid: number): number => {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? round(Number(kb) / 1024, 0) : 0;
  } catch {
    return 0;
  }
};

/**
 * The resident set of a service soon after its last request, once it has been left alone for a
 * while, and (given `laterMs`) later still.
 */
export const measureIdleRss = async (server: ServerProcess, soonMs = SOON_MS, idleMs = IDLE_MS, laterMs?: number): Promise<{ soonMb: number; idleMb: number; laterMb?: number }> => {
  await new Promise((resolve) => setTimeout(resolve, soonMs));
  const soonMb = rssMb(server.pid);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, idleMs - soonMs)));
  const idleMb = rssMb(server.pid);
  if (laterMs === undefined) return { soonMb, idleMb };
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, laterMs - idleMs)));
  return { soonMb, idleMb, laterMb: rssMb(server.pid) };
};

const fileBytes = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/**
 * read.db's size (with its WAL) and the pages its snapshots take: the table's (its documents'
 * JSON and bytes fields, and page overhead) and its indexes'. (Until session 12 this counted the
 * rows' JSON alone, about 2% less with chunks as base64 text.)
 */
export const readDbComposition = (dir: string) => {
  const file = join(dir, 'read.db');
  const db = new Database(file, { readonly: true });
  try {
    const { rows } = db.prepare('SELECT count(*) AS rows FROM rc_snapshots').get() as { rows: number };
    const { bytes } = db
      .prepare("SELECT coalesce(sum(d.pgsize), 0) AS bytes FROM dbstat AS d WHERE d.name = 'rc_snapshots' OR d.name IN (SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'rc_snapshots')")
      .get() as { bytes: number };
    const total = fileBytes(file) + fileBytes(`${file}-wal`);
    return { mb: round(total / 2 ** 20, 1), snapshotsMb: round(bytes / 2 ** 20, 1), snapshotRows: rows, snapshotsShare: round(bytes / total, 3) };
  } finally {
    db.close();
  }
};

const createPeople = async (server: ServerProcess, count: number): Promise<number> => {
  let next = 0;
  let failed = 0;
  const writer = async () => {
    while (next < count) {
      const i = next++;
      try {
        await adminCall(server, 'POST', '/api/admin/objects', {
          type: 'svc:type:person',
          attributes: { 'dc:attribute:title': `Idle Bench ${i}`, 'svc:attribute:job-title': 'Research Fellow' },
          labels: ['svc:label:common'],
        });
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
  return failed;
};

export const idleRss: Benchmark = {
  name: 'idle-rss',
  description: `A caught-up service's resident memory over the generated history (target <= ${TARGET_IDLE_RSS_MB} MB at 1M events), after ${NEW_OBJECTS} x scale new objects and after at answers (no growth with either), and the snapshots' share of read.db (target <= ${TARGET_SNAPSHOT_SHARE})`,
  async run(scale: number): Promise<BenchmarkResult> {
    const shared = await sharedHistory(scale);
    const { history } = shared;
    const dir = copyHistory(shared, 'idle-rss');
    let server: ServerProcess | undefined;
    const problems: string[] = [];
    try {
      progress(`idle-rss: service catching up ${history.plan.events} events`);
      const caughtUp = await measureServiceCatchUp('idle-rss-service', dir, history.plan.events);
      server = caughtUp.server;
      const idle = await measureIdleRss(server);
      const idleRssMb = idle.idleMb;
      progress(`idle-rss: caught up (peak ${caughtUp.figures.peakRssMb} MB), ${idle.soonMb} MB soon after, idle ${idleRssMb} MB`);

      const objects = Math.max(2000, Math.round(NEW_OBJECTS * scale));
      const writeStarted = performance.now();
      const failed = await createPeople(server, objects);
      if (failed > 0) problems.push(`${failed} of ${objects} creations failed`);
      await waitForLagZero(server);
      const writeMs = performance.now() - writeStarted;
      const afterWrites = await measureIdleRss(server, SOON_MS, IDLE_MS, LATER_MS);
      const afterWritesRssMb = afterWrites.idleMb;
      progress(`idle-rss: ${objects} objects created in ${(writeMs / 1000).toFixed(1)} s, ${afterWrites.soonMb} MB soon after, idle ${afterWritesRssMb} MB, ${afterWrites.laterMb} MB later`);

      const key = await createReaderKey(server, 'idle-rss-reader', { readLabels: ['svc:label:common'] }, '/api/reporting/v0/');
      const auth = { Authorization: basicAuth(key) };
      const span = history.plan.endMs - history.plan.startMs;
      for (let i = 0; i < AT_INSTANTS; i++) {
        const at = new Date(history.plan.startMs + Math.round((span * (i + 1)) / (AT_INSTANTS + 1))).toISOString();
        const r = await timedGet(server, `/api/reporting/v0/collection-data/phd_projects?at=${encodeURIComponent(at)}`, auth);
        if (r.status !== 200) problems.push(`at ${at}: ${r.status} ${r.text.slice(0, 200)}`);
      }
      const afterAt = await measureIdleRss(server, SOON_MS, IDLE_MS, LATER_MS);
      const afterAtRssMb = afterAt.idleMb;
      progress(`idle-rss: after ${AT_INSTANTS} at answers, ${afterAt.soonMb} MB soon after, idle ${afterAtRssMb} MB, ${afterAt.laterMb} MB later`);

      await stopServer(server);
      server = undefined;
      const readDb = readDbComposition(dir);
      progress(`idle-rss: read.db ${readDb.mb} MB, snapshots ${readDb.snapshotsMb} MB (${(readDb.snapshotsShare * 100).toFixed(1)}%)`);
      return {
        ok: problems.length === 0,
        meetsTarget: Math.max(idleRssMb, afterWritesRssMb, afterAtRssMb) <= TARGET_IDLE_RSS_MB && readDb.snapshotsShare <= TARGET_SNAPSHOT_SHARE,
        events: history.plan.events,
        idleRssMb,
        soonAfterCatchUpRssMb: idle.soonMb,
        afterWrites: { objects, rssMb: afterWritesRssMb, soonRssMb: afterWrites.soonMb, laterRssMb: afterWrites.laterMb, growthMb: afterWritesRssMb - idleRssMb, writeMs: Math.round(writeMs) },
        afterAt: { instants: AT_INSTANTS, rssMb: afterAtRssMb, soonRssMb: afterAt.soonMb, laterRssMb: afterAt.laterMb },
        idleAfterMs: IDLE_MS,
        laterAfterMs: LATER_MS,
        catchUp: caughtUp.figures,
        readDb,
        targets: { idleRssMb: TARGET_IDLE_RSS_MB, snapshotsShare: TARGET_SNAPSHOT_SHARE },
        ...(problems.length > 0 ? { problems: problems.slice(0, 10) } : {}),
      };
    } finally {
      if (server) await stopServer(server);
    }
  },
};
