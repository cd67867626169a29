/**
 * `push-data` (issue 4): the contract's push-data example (`svc:person` model: username -> profile,
 * `title` -> the profile's PhD project) against a real service process, through everything a push
 * does: Basic auth, the REST API and its user, the control-file engine (reader, filter, load by
 * ref, dependent look-up), the object's aggregate load, the append, and read-your-writes (the answer
 * waits until every projection has folded the new event).
 *
 * Workload: 200 users, each with a project created by one push before the load; then every request
 * is `{"username":"<user>","title":"<a new title>"}`, users in round robin, so every push really
 * writes one ObjectAttributesChanged and two pushes for one user are (practically) never in flight
 * together. Load: autocannon, 32 keep-alive connections to 127.0.0.1, rounds alternating baseline
 * and service (B S B S), each `6 s x scale` (at least 2 s), after a 3 s warm-up of each.
 *
 * Baseline: a bare koa + @koa/router process parsing the same JSON body with @koa/bodyparser and
 * answering the same push-data response (indented by 4). Target: >= 25% of its requests/s (issue 15).
 *
 * Correctness (else ok: false): every push answers 200 with result success, the project not new;
 * afterwards every user's project has the title of one of that user's last 3 pushes (pushes still
 * in flight when a round ends, or overlapping a slow one for the same user, are applied in their
 * own order; overlaps are counted and reported), and the log grew by
 * exactly one event per push (a round ends with up to 32 pushes in flight: their answers are not
 * counted but the service may still apply them, so those are allowed for).
 *
 * BENCH_PUSH_ROLES=split runs the service as the README's roles section shows it on one machine: an
 * `api` process taking the pushes and a `projector` process folding them, on one data directory
 * (read-your-writes then crosses processes); `all` (default) is one process doing both.
 */
import { join } from 'node:path';
import { adminCall, basicAuth, httpRequest, load, loadAverage, spawnServer, startServiceProcess, stopServer, type LoadResult, type ServerProcess } from './domain-support.ts';
import { formatRate, mean, progress, round, withTempDir, type Benchmark, type BenchmarkResult } from './support.ts';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { EXAMPLE_CONTROL } from '../test/support/push-data.ts';

const TARGET_RATIO = 0.25;
const CONNECTIONS = 32;
const ROUNDS = 2;
const WARM_UP_SEC = 3;
const USERS = 200;
const SPLIT = process.env.BENCH_PUSH_ROLES === 'split';
if (process.env.BENCH_PUSH_ROLES !== undefined && !SPLIT && process.env.BENCH_PUSH_ROLES !== 'all') throw new Error(`BENCH_PUSH_ROLES: expected all or split, got ${process.env.BENCH_PUSH_ROLES}`);
const API = 'update-title';

interface PushBody {
  result: string;
  actions: { changed: { ref: string; new: boolean }[] }[];
}

/**
 * CPU seconds a process has used so far, its main thread apart from its other threads (the event
 * store's writer thread, the logger's...), from /proc (Linux; undefined elsewhere). Throughput on
 * a shared machine swings with the other load; CPU per request much less.
 */
const cpuSeconds = (pid: number): { main: number; others: number } | undefined => {
  try {
    const ticks = 100; // USER_HZ: 100 on every Linux this runs on
    let main = 0;
    let others = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      } catch {
        continue; // the thread ended meanwhile
      }
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / ticks;
      if (Number(tid) === pid) main += seconds;
      else others += seconds;
    }
    return { main, others };
  } catch {
    return undefined;
  }
};

const username = (i: number) => `bench-user-${String(i).padStart(3, '0')}`;

const head = async (server: ServerProcess): Promise<number> => {
  const { projections } = await adminCall<{ projections: { head: number }[] }>(server, 'GET', '/api/admin/projections');
  return projections[0]!.head;
};

const figures = (r: LoadResult) => ({
  requestsPerSec: r.requestsPerSec,
  p50Ms: r.latencyP50Ms,
  p99Ms: r.latencyP99Ms,
  maxMs: r.latencyMaxMs,
  requests: r.requests,
  non2xx: r.non2xx,
  errors: r.errors,
  checkFailures: r.checkFailures,
});

export const pushData: Benchmark = {
  name: 'push-data',
  description: `The contract example push (new title each time, ${USERS} users) through auth, engine, append and read-your-writes on a service process under ${CONNECTIONS} connections: requests/s vs a bare koa JSON POST (target >= ${TARGET_RATIO}), p99`,
  async run(scale: number): Promise<BenchmarkResult> {
    const durationSec = Math.max(2, Math.round(6 * scale));
    const loadBefore = loadAverage();
    return withTempDir('push-data', async (dir) => {
      const servers: ServerProcess[] = [];
      try {
        const service = await startServiceProcess('push-data-service', join(dir, 'data'), SPLIT ? { SVC_ROLE: 'api' } : {});
        servers.push(service);
        if (SPLIT) servers.push(await startServiceProcess('push-data-projector', join(dir, 'data'), { SVC_ROLE: 'projector' }));
        await adminCall(service, 'POST', '/api/admin/rest-apis', { url: API, description: 'Update project title', controlFile: EXAMPLE_CONTROL });
        const { key } = await adminCall<{ key: string }>(service, 'POST', `/api/admin/rest-apis/${API}/api-keys`, {});
        const headers = { Authorization: basicAuth(key), 'Content-Type': 'application/json' };
        progress(`push-data: creating ${USERS} users and their projects`);
        for (let i = 0; i < USERS; i++) {
          await adminCall(service, 'POST', '/api/admin/users', { username: username(i), name: { first: 'User', last: String(i) } });
        }
        const push = async (body: unknown) => {
          const res = await httpRequest(service, 'POST', `/api/push-data/${API}`, headers, JSON.stringify(body));
          if (res.status !== 200) throw new Error(`push ${JSON.stringify(body)}: ${res.status} ${res.text}`);
          return { text: res.text, body: JSON.parse(res.text) as PushBody };
        };
        const projects: string[] = [];
        for (let i = 0; i < USERS; i++) {
          const first = await push({ username: username(i), title: `First title of ${username(i)}` });
          const changed = first.body.actions[0]?.changed[0];
          if (first.body.result !== 'success' || !changed?.new) throw new Error(`first push did not create a project: ${first.text}`);
          projects.push(changed.ref);
        }
        const sampleResponse = await push({ username: username(0), title: 'A title for the baseline response' });
        const responseFile = join(dir, 'push-response.json');
        writeFileSync(responseFile, sampleResponse.text);
        const baseline = await spawnServer('push-data-koa', 'koa-baseline-server.ts', { BENCH_POST_RESPONSE_FILE: responseFile });
        servers.push(baseline);

        // Every request gets a title never used before; the last successful one per user is what must stick.
        let sequence = 0;
        const lastTitle = new Map<number, string>();
        // A project must end with one of the last titles sent for its user: a round ends with up to
        // CONNECTIONS pushes in flight (not counted, but the service applies them), and a slow push may
        // still run when the next one for the same user is sent (counted as overlaps).
        const sentTitles = new Map<number, string[]>();
        const inFlight = new Map<number, number>();
        let overlaps = 0;
        /** Microseconds of CPU per request of each round, main thread and other threads. */
        const cpuPerRequest = new Map<LoadResult, { mainThreadUs: number; otherThreadsUs: number }>();
        const runLoad = async (server: ServerProcess, seconds: number, isService: boolean) => {
          const cpuBefore = cpuSeconds(server.pid);
          const result = await loadRound(server, seconds, isService);
          const cpuAfter = cpuSeconds(server.pid);
          if (cpuBefore && cpuAfter && result.requests > 0) {
            const us = (s: number) => Math.round((s * 1e6) / result.requests);
            cpuPerRequest.set(result, { mainThreadUs: us(cpuAfter.main - cpuBefore.main), otherThreadsUs: us(cpuAfter.others - cpuBefore.others) });
          }
          return result;
        };
        const loadRound = (server: ServerProcess, seconds: number, isService: boolean) => {
          const base = sequence;
          inFlight.clear();
          return load({
            url: server.url,
            connections: CONNECTIONS,
            durationSec: seconds,
            method: 'POST',
            headers,
            next: (n) => {
              const u = (base + n) % USERS;
              sequence = Math.max(sequence, base + n + 1);
              const title = `Title ${base + n} of ${username(u)}`;
              if (isService) {
                sentTitles.set(u, [...(sentTitles.get(u) ?? []), title].slice(-3));
                if ((inFlight.get(u) ?? 0) > 0) overlaps++;
                inFlight.set(u, (inFlight.get(u) ?? 0) + 1);
              }
              return { path: `/api/push-data/${API}`, body: JSON.stringify({ username: username(u), title }) };
            },
            check: (status, text, req) => {
              if (status !== 200) return false;
              if (!isService) return true;
              inFlight.set((base + req.counter) % USERS, inFlight.get((base + req.counter) % USERS)! - 1);
              const good = text.includes('"result": "success"') && text.includes('"new": false') && text.includes(projects[(base + req.counter) % USERS]!);
              if (good) lastTitle.set((base + req.counter) % USERS, (JSON.parse(req.body!) as { title: string }).title);
              return good;
            },
          });
        };

        /** Lets the pushes still in flight when a round ended finish: the head stops moving. */
        const settledHead = async () => {
          let last = await head(service);
          for (;;) {
            await new Promise((r) => setTimeout(r, 300));
            const now = await head(service);
            if (now === last) return now;
            last = now;
          }
        };

        // Both servers get the same warm-up: 1 s left the JIT unsettled, the first round of each
        // measured 15-25% below the second on both sides.
        progress('push-data: warm-up');
        await runLoad(baseline, WARM_UP_SEC, false);
        await runLoad(service, WARM_UP_SEC, true);
        const headBefore = await settledHead();
        const baselineRounds: LoadResult[] = [];
        const serviceRounds: LoadResult[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          baselineRounds.push(await runLoad(baseline, durationSec, false));
          progress(`push-data: round ${r + 1}: koa ${formatRate(baselineRounds.at(-1)!.requestsPerSec)}`);
          serviceRounds.push(await runLoad(service, durationSec, true));
          // Pushes still in flight as the round ended must land before the next round pushes for the same users.
          await settledHead();
          progress(`push-data: round ${r + 1}: service ${formatRate(serviceRounds.at(-1)!.requestsPerSec)}`);
        }
        const headAfter = await settledHead();

        // Verification: every project holds one of its user's last titles (see sentTitles);
        // one event per push (answered, or in flight as a round ended).
        let wrongTitles = 0;
        for (const [u, title] of lastTitle) {
          const { object } = await adminCall<{ object: { title: string } }>(service, 'GET', `/api/admin/objects/${projects[u]}`);
          if (object.title !== title && !sentTitles.get(u)?.includes(object.title)) wrongTitles++;
        }
        const pushes = serviceRounds.reduce((a, r) => a + r.requests, 0);
        const appended = headAfter - headBefore;
        const eventsPerPush = round(appended / pushes, 3);
        const clean = (r: LoadResult) => r.non2xx === 0 && r.errors === 0 && r.checkFailures === 0 && r.requests > 0;
        const ok = [...baselineRounds, ...serviceRounds].every(clean) && wrongTitles === 0 && appended >= pushes && appended <= pushes + CONNECTIONS * ROUNDS;
        const baselineRps = mean(baselineRounds.map((r) => r.requestsPerSec));
        const serviceRps = mean(serviceRounds.map((r) => r.requestsPerSec));
        const ratio = round(serviceRps / baselineRps, 3);
        return {
          ok,
          meetsTarget: ok && ratio >= TARGET_RATIO,
          target: { throughputRatio: `>= ${TARGET_RATIO}` },
          ratio,
          load: { generator: 'autocannon (in the bench process)', connections: CONNECTIONS, durationSecPerRound: durationSec, rounds: ROUNDS, users: USERS, host: '127.0.0.1' },
          service: {
            roles: SPLIT ? 'api + projector (two processes)' : 'all (one process)',
            requestsPerSec: Math.round(serviceRps),
            p99Ms: Math.max(...serviceRounds.map((r) => r.latencyP99Ms)),
            rounds: serviceRounds.map((r) => ({ ...figures(r), cpuPerRequest: cpuPerRequest.get(r) })),
            eventsPerPush,
            verified: { projects: lastTitle.size, wrongTitles, eventsAppended: appended, pushesAnswered: pushes, inFlightAtRoundEnds: appended - pushes, pushesSentWhileOneForTheSameUserWasInFlight: overlaps },
          },
          baseline: { what: 'bare koa + @koa/router + @koa/bodyparser process parsing the same JSON body and answering the same response', requestsPerSec: Math.round(baselineRps), rounds: baselineRounds.map((r) => ({ ...figures(r), cpuPerRequest: cpuPerRequest.get(r) })) },
          machineLoad: { before: loadBefore, after: loadAverage() },
        };
      } finally {
        for (const s of servers) await stopServer(s);
      }
    });
  },
};
