/**
 * `push-contention` (issue 13): the contract's push-data example (username -> profile, `title` ->
 * the profile's PhD project) on a real service process, all pushes for ONE user (every push
 * changes the same project: contended) against pushes for distinct users in round robin (the
 * baseline, measured in the same run), each at 1, 8 and 32 keep-alive connections (autocannon).
 * Every push carries a title never sent before, so every push writes one ObjectAttributesChanged.
 *
 * Rounds, in this order after a warm-up of each kind: distinct@1, same@1, distinct@8, same@8,
 * distinct@32, same@32, each `5 s x scale` (at least 2 s). Figures per round: requests/s, p50/p99
 * latency, errors (non-2xx, socket errors and answers that are not a success for the right
 * project), and CPU per request of the service process (user + system from /proc/<pid>/stat, 10 ms
 * ticks). Peak RSS of the service process (VmHWM) at the end.
 *
 * Target: 0 errors; same-user throughput at 8 and at 32 connections at least 50% of the
 * distinct-user throughput at 1 connection.
 *
 * Correctness (else ok: false): every answer is 200 with result success and the user's project, not
 * new; every push was applied once: after each round has settled, the log grew by at least the pushes
 * answered and at most those plus the pushes in flight when it ended (one per connection), and over
 * the same-user rounds the hot project's recordVersion grew by exactly what the log did.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adminCall, basicAuth, httpRequest, load, loadAverage, startServiceProcess, stopServer, type LoadResult, type ServerProcess } from './domain-support.ts';
import { formatRate, progress, round, withTempDir, type Benchmark, type BenchmarkResult } from './support.ts';
import { EXAMPLE_CONTROL } from '../test/support/push-data.ts';

const TARGET_RATIO = 0.5;
const CONNECTION_COUNTS = [1, 8, 32] as const;
const USERS = 200;
const WARM_UP_SEC = 3;
const API = 'update-title';
const HOT = 'bench-hot-user';

type Kind = 'same' | 'distinct';

interface Round extends LoadResult {
  readonly kind: Kind;
  readonly connections: number;
  readonly cpuUsPerRequest?: number;
  /** Events the log grew by during the round, pushes in flight at its end included. */
  readonly appended: number;
}

const username = (i: number) => `bench-user-${String(i).padStart(3, '0')}`;

/** CPU milliseconds a process has used (user + system, all threads), or undefined without /proc. */
const cpuMs = (pid: number): number | undefined => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
};

/** A `/proc/<pid>/status` figure in MiB (VmHWM: peak resident set; VmRSS: now), or undefined without /proc. */
const memoryMib = (pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined => {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 1) : undefined;
  } catch {
    return undefined;
  }
};

const errorsOf = (r: LoadResult) => r.non2xx + r.errors + r.timeouts + r.checkFailures;

const figures = (r: Round) => ({
  requestsPerSec: r.requestsPerSec,
  errors: errorsOf(r),
  p50Ms: r.latencyP50Ms,
  p99Ms: r.latencyP99Ms,
  maxMs: r.latencyMaxMs,
  ...(r.cpuUsPerRequest !== undefined ? { cpuUsPerRequest: r.cpuUsPerRequest } : {}),
  requests: r.requests,
  non2xx: r.non2xx,
  socketErrors: r.errors,
  timeouts: r.timeouts,
  checkFailures: r.checkFailures,
  eventsAppended: r.appended,
});

export const pushContention: Benchmark = {
  name: 'push-contention',
  description: `The contract example push, all for one user (one project, contended) vs for ${USERS} distinct users, at ${CONNECTION_COUNTS.join(', ')} connections on a service process: 0 errors, same-user requests/s at 8 and 32 connections >= ${TARGET_RATIO} x distinct-user at 1; p50/p99, CPU per request`,
  async run(scale: number): Promise<BenchmarkResult> {
    const durationSec = Math.max(2, Math.round(5 * scale));
    const loadBefore = loadAverage();
    return withTempDir('push-contention', async (dir) => {
      let service: ServerProcess | undefined;
      try {
        service = await startServiceProcess('push-contention-service', join(dir, 'data'));
        const server = service;
        await adminCall(server, 'POST', '/api/admin/rest-apis', { url: API, description: 'Update project title', controlFile: EXAMPLE_CONTROL });
        const { key } = await adminCall<{ key: string }>(server, 'POST', `/api/admin/rest-apis/${API}/api-keys`, {});
        const headers = { Authorization: basicAuth(key), 'Content-Type': 'application/json' };
        const push = async (user: string, title: string) => {
          const res = await httpRequest(server, 'POST', `/api/push-data/${API}`, headers, JSON.stringify({ username: user, title }));
          const body = JSON.parse(res.text) as { result: string; actions: { changed: { ref: string; new: boolean }[] }[] };
          const changed = body.actions[0]?.changed[0];
          if (res.status !== 200 || body.result !== 'success' || !changed?.new) throw new Error(`first push for ${user} did not create a project: ${res.status} ${res.text}`);
          return changed.ref;
        };
        progress(`push-contention: creating ${USERS + 1} users and their projects`);
        const projects = new Map<string, string>();
        for (const user of [HOT, ...Array.from({ length: USERS }, (_, i) => username(i))]) {
          await adminCall(server, 'POST', '/api/admin/users', { username: user, name: { first: 'Bench', last: user } });
          projects.set(user, await push(user, `First title of ${user}`));
        }
        const hotProject = projects.get(HOT)!;
        const versionOfHot = async () => (await adminCall<{ object: { recordVersion: number } }>(server, 'GET', `/api/admin/objects/${hotProject}`)).object.recordVersion;
        const head = async () => (await adminCall<{ projections: { head: number }[] }>(server, 'GET', '/api/admin/projections')).projections[0]!.head;
        /** Lets the pushes still in flight when a round ended land: the head stops moving. */
        const settledHead = async () => {
          let last = await head();
          for (;;) {
            await new Promise((r) => setTimeout(r, 300));
            const now = await head();
            if (now === last) return now;
            last = now;
          }
        };

        let sequence = 0;
        const runRound = async (kind: Kind, connections: number, seconds: number): Promise<Round> => {
          const base = sequence;
          const userOf = (n: number) => (kind === 'same' ? HOT : username((base + n) % USERS));
          const headBefore = await settledHead();
          const cpuBefore = cpuMs(server.pid);
          const result = await load({
            url: server.url,
            connections,
            durationSec: seconds,
            method: 'POST',
            headers,
            next: (n) => {
              sequence = Math.max(sequence, base + n + 1);
              return { path: `/api/push-data/${API}`, body: JSON.stringify({ username: userOf(n), title: `Title ${base + n}` }) };
            },
            check: (status, text, req) =>
              status === 200 && text.includes('"result": "success"') && text.includes('"new": false') && text.includes(projects.get(userOf(req.counter))!),
          });
          const cpuAfter = cpuMs(server.pid);
          const appended = (await settledHead()) - headBefore;
          const cpu = cpuBefore !== undefined && cpuAfter !== undefined && result.requests > 0 ? { cpuUsPerRequest: round(((cpuAfter - cpuBefore) * 1000) / result.requests, 1) } : {};
          return { ...result, kind, connections, appended, ...cpu };
        };

        progress('push-contention: warm-up');
        await runRound('distinct', 8, WARM_UP_SEC);
        await runRound('same', 8, WARM_UP_SEC);
        const hotBefore = await versionOfHot();
        const rounds: Round[] = [];
        for (const connections of CONNECTION_COUNTS) {
          for (const kind of ['distinct', 'same'] as const) {
            const r = await runRound(kind, connections, durationSec);
            rounds.push(r);
            progress(`push-contention: ${kind} user${kind === 'distinct' ? 's' : ''} x ${connections}: ${formatRate(r.requestsPerSec)}, p99 ${r.latencyP99Ms} ms, ${errorsOf(r)} errors`);
          }
        }
        const hotGrowth = (await versionOfHot()) - hotBefore;
        const peakRssMib = memoryMib(server.pid, 'VmHWM');
        const rssMib = memoryMib(server.pid, 'VmRSS');

        const find = (kind: Kind, connections: number) => rounds.find((r) => r.kind === kind && r.connections === connections)!;
        const eachPushOnce = (r: Round) => r.appended >= r.requests && r.appended <= r.requests + r.connections;
        const sameAppended = rounds.filter((r) => r.kind === 'same').reduce((a, r) => a + r.appended, 0);
        const ok = rounds.every((r) => r.requests > 0 && r.checkFailures === 0 && eachPushOnce(r)) && hotGrowth === sameAppended;
        const errors = rounds.reduce((a, r) => a + errorsOf(r), 0);
        const baselineRps = find('distinct', 1).requestsPerSec;
        const ratios = {
          same8: round(find('same', 8).requestsPerSec / baselineRps, 3),
          same32: round(find('same', 32).requestsPerSec / baselineRps, 3),
        };
        const table = (kind: Kind) => Object.fromEntries(CONNECTION_COUNTS.map((c) => [`connections${c}`, figures(find(kind, c))]));
        return {
          ok,
          meetsTarget: ok && errors === 0 && ratios.same8 >= TARGET_RATIO && ratios.same32 >= TARGET_RATIO,
          target: { errors: 0, sameUserRequestsPerSecAt8And32VsDistinctAt1: `>= ${TARGET_RATIO}` },
          errors,
          ratios,
          sameUser: table('same'),
          baseline: { what: `distinct users (${USERS}, round robin), same connection counts, same run`, ...table('distinct') },
          verified: { hotProjectVersions: hotGrowth, eventsAppendedBySameUserRounds: sameAppended, everyPushAppliedOnce: rounds.every(eachPushOnce) },
          service: { ...(peakRssMib !== undefined ? { peakRssMib } : {}), ...(rssMib !== undefined ? { rssAtEndMib: rssMib } : {}) },
          load: { generator: 'autocannon (in the bench process)', durationSecPerRound: durationSec, warmUpSec: WARM_UP_SEC, host: '127.0.0.1' },
          machineLoad: { before: loadBefore, after: loadAverage() },
        };
      } finally {
        if (service) await stopServer(service);
      }
    });
  },
};
