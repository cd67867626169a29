/**
 * A fresh service catching up on a log: the figures of issue 15's target 2, measured the same way
 * by `catch-up` and `reporting` (which calls this for its `catchUp` section).
 *
 * A service process starts on a data directory holding only the event log (a fresh read store).
 * From spawn until `/api/admin/projections` shows every projection live with lag 0, that status is
 * read in a loop (one request at a time, a 50 ms pause between two) as soon as the process listens:
 * its latency is how reads fare while the service catches up. Peak RSS is the process's own high
 * water mark (VmHWM in /proc/<pid>/status; 0 where there is no /proc).
 */
import { httpRequest, latencySummary, startServiceProcess, type ServerProcess } from './domain-support.ts';
import { peakRssMb, progress } from './support.ts';

const TIMEOUT_MS = 120 * 60_000;
const PAUSE_MS = 50;

export interface CatchUpFigures {
  /** From spawn until every projection is live with lag 0. */
  readonly ms: number;
  readonly eventsPerSec: number;
  readonly listeningAfterMs: number;
  readonly peakRssMb: number;
  /** The status read while catching up (Bearer admin token, `GET /api/admin/projections`). */
  readonly readP99Ms: number;
  readonly reads: ReturnType<typeof latencySummary>;
  readonly readFailures: number;
}

/** Starts a service on `dataDir` and waits until it has caught up with `events` events; the server is left running. */
export const measureServiceCatchUp = async (
  name: string,
  dataDir: string,
  events: number,
  env: Record<string, string> = {},
): Promise<{ server: ServerProcess; figures: CatchUpFigures }> => {
  const started = performance.now();
  const server = await startServiceProcess(name, dataDir, env, TIMEOUT_MS);
  const samples: number[] = [];
  let failures = 0;
  let lastProgress = 0;
  for (;;) {
    const r = await fetchStatus(server);
    if (r.ok) samples.push(r.ms);
    else failures++;
    const projections = r.projections;
    if (projections?.some((p) => p.state === 'failed')) throw new Error(`${name}: a projection failed: ${JSON.stringify(projections)}`);
    if (projections && projections.every((p) => p.state === 'live' && p.lag === 0)) break;
    if (performance.now() - started > TIMEOUT_MS) throw new Error(`${name}: projections still lag after ${TIMEOUT_MS} ms`);
    if (performance.now() - lastProgress > 10_000 && projections) {
      lastProgress = performance.now();
      const lag = Math.max(...projections.map((p) => p.lag));
      progress(`${name}: catching up, largest lag ${lag} of ${events} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  const ms = performance.now() - started;
  const reads = latencySummary(samples);
  return {
    server,
    figures: {
      ms: Math.round(ms),
      eventsPerSec: Math.round((events * 1000) / ms),
      listeningAfterMs: server.readyAfterMs,
      peakRssMb: peakRssMb(server.pid),
      readP99Ms: reads.p99Ms,
      reads,
      readFailures: failures,
    },
  };
};

type Status = { name: string; state: string; lag: number };

const fetchStatus = async (server: ServerProcess): Promise<{ ok: boolean; ms: number; projections?: Status[] }> => {
  try {
    const r = await httpRequest(server, 'GET', '/api/admin/projections', { Authorization: `Bearer ${server.adminToken}` });
    if (r.status !== 200) return { ok: false, ms: r.ms };
    return { ok: true, ms: r.ms, projections: (JSON.parse(r.text) as { projections: Status[] }).projections };
  } catch {
    return { ok: false, ms: 0 };
  }
};
