/**
 * Helpers of the service-level benchmarks (object-get, push-data, reporting, rebuild): server
 * processes, HTTP load, latency figures, the admin API, and the generated 1,000,000-event history
 * that `reporting` and `rebuild` share within one run.
 *
 * Servers always run in their own processes (bench/service-server.mjs, bench/koa-baseline-server.ts)
 * so the load generator (autocannon, in this process) never shares their event loop. The service
 * runs compiled unless BENCH_FORM=sources (bench/service-form.ts). Set
 * BENCH_CPU_PROF=<dir> to start every server process with `--cpu-prof --cpu-prof-dir=<dir>`, and
 * BENCH_SQL_STATS=<dir> to have each write its embedded-store statements' counts and times there
 * (bench/sql-stats.ts).
 */
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { StreamAppend } from '../src/events/event-store.ts';
import { SqliteEventStore } from '../src/events/adapters/sqlite-event-store.ts';
import { applySqlitePragmas } from '../src/drivers/sqlite.ts';
import { objectStream } from '../src/domain/objects/events.ts';
import { objectDecider } from '../src/domain/objects/object.ts';
import type { Attributes, AttributeValue } from '../src/domain/objects/values.ts';
import { configFile } from '../src/config/paths.ts';
import { loadSchema } from '../src/app/load-schema.ts';
import { progress, round, seededRandom } from './support.ts';
import { serviceProcess } from './service-form.ts';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

// ---------------------------------------------------------------------------------------------
// Server processes

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly adminToken: string;
  /** Milliseconds from spawn until the process printed its ready line. */
  readonly readyAfterMs: number;
  /** What the server printed on its ready line. */
  readonly info: Record<string, unknown>;
  readonly child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** The keep-alive agent of this process's clients in the bench (destroyed when it stops). */
  readonly agent: Agent;
}

const benchFile = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

/**
 * The environment of a child process: this one's, without any SVC_ variable of the caller, plus `env`;
 * glibc's malloc arenas bounded as `npm start` and the container image bound them.
 */
const childEnv = (env: Record<string, string>) => {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  return { MALLOC_ARENA_MAX: '2', ...base, ...env };
};

/**
 * Spawns `node bench/<script>` (the koa baseline with `--import tsx`, the service in its form) and
 * waits for its one JSON ready line on stdout.
 * `readyTimeoutMs` bounds the wait (a service catching up a large log may take minutes to listen).
 */
export const spawnServer = async (
  name: string,
  script: 'service-server.mjs' | 'koa-baseline-server.ts',
  env: Record<string, string>,
  readyTimeoutMs = 120_000,
): Promise<ServerProcess> => {
  const profDir = process.env.BENCH_CPU_PROF;
  if (profDir) mkdirSync(profDir, { recursive: true });
  const sqlStats = process.env.BENCH_SQL_STATS ? ['--import', new URL('./sql-stats.ts', import.meta.url).href] : [];
  // The service in the form the run measures (bench/service-form.ts); the koa baseline from its source.
  const run = script === 'service-server.mjs' ? serviceProcess() : { tsx: true, env: {} };
  // sql-stats.ts is TypeScript too: it brings tsx into a compiled service (a diagnostic of statements, not of the process).
  const tsx = run.tsx || sqlStats.length > 0 ? ['--import', 'tsx'] : [];
  const args = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...tsx, ...sqlStats, benchFile(script)];
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...childEnv(env), ...run.env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: not ready after ${readyTimeoutMs} ms`)), readyTimeoutMs);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready`));
    });
  }).catch((e: Error) => {
    child.kill('SIGKILL');
    throw e;
  });
  const info = JSON.parse(line) as Record<string, unknown>;
  return {
    name,
    url: info.url as string,
    pid: info.pid as number,
    adminToken: (info.adminToken as string | undefined) ?? '',
    readyAfterMs: Math.round(performance.now() - started),
    info,
    child,
    exited,
    agent: new Agent({ keepAlive: true }),
  };
};

/** Closes the server's stdin (a graceful stop); kills it if it has not exited after `graceMs`. */
export const stopServer = async (server: ServerProcess, graceMs = 30_000): Promise<void> => {
  server.agent.destroy();
  if (server.child.exitCode !== null) return;
  server.child.stdin!.end();
  const force = setTimeout(() => server.child.kill('SIGKILL'), graceMs);
  await server.exited;
  clearTimeout(force);
};

/** The real service over a data directory (embedded engines), with the bench admin token. */
export const startServiceProcess = (name: string, dataDir: string, env: Record<string, string> = {}, readyTimeoutMs?: number) =>
  spawnServer(
    name,
    'service-server.mjs',
    { SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, BENCH_LOG_FILE: join(dataDir, '..', `${name}.log`), ...env },
    readyTimeoutMs,
  );

// ---------------------------------------------------------------------------------------------
// HTTP clients

export const basicAuth = (key: string) => `Basic ${Buffer.from(`svc:${key}`).toString('base64')}`;

export interface HttpReply {
  readonly status: number;
  readonly text: string;
  /** Milliseconds from sending the request to the last byte of the body. */
  readonly ms: number;
}

/**
 * One HTTP request to a server over its own keep-alive agent (so a stopped server's pooled
 * connections are never reused for a new server that got the same port).
 */
/** Where a request goes: a server process, or its URL and an agent of the caller's (a client in another process). */
export type HttpTarget = Pick<ServerProcess, 'url' | 'agent'>;

/**
 * One request. A GET that fails on a kept-alive connection the server had already closed is sent
 * again (as Node's documentation advises for `reusedSocket`), until it goes out on a new connection:
 * each failure drops one closed connection from the pool. A benchmark that keeps its thread busy
 * longer than the server's keep-alive timeout (reading the whole log after a rebuild) otherwise
 * takes the closed connections for failed reads. The latency reported is the last attempt's.
 */
export const httpRequest = async (server: HttpTarget, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<HttpReply> => {
  for (;;) {
    try {
      return await requestOnce(server, method, path, headers, body);
    } catch (e) {
      const failed = e as Error & { reusedSocket?: boolean; code?: string };
      if (!(method === 'GET' && failed.reusedSocket && failed.code === 'ECONNRESET')) throw e;
    }
  }
};

const requestOnce = (server: HttpTarget, method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpReply> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      `${server.url}${path}`,
      { method, agent: server.agent, headers: { ...headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', (e) => reject(Object.assign(e, { reusedSocket: req.reusedSocket })));
    req.end(body);
  });

/**
 * A GET whose body is counted, not kept (its text only when the status is not 200): a load that
 * fetches megabytes of answers in the process that times other requests must not hold that
 * process's event loop decoding them, or the latency it reports is partly its own.
 */
export const countedGet = (server: ServerProcess, path: string, headers: Record<string, string>): Promise<{ status: number; bytes: number; ms: number; text: string }> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${server.url}${path}`, { agent: server.agent, headers }, (res) => {
      let bytes = 0;
      const kept: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (res.statusCode !== 200) kept.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started, text: Buffer.concat(kept).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });

/** One admin API call (Bearer token); throws unless the status is the expected one. */
export const adminCall = async <T = any>(server: ServerProcess, method: string, path: string, body?: unknown, expected = [200, 201]): Promise<T> => {
  const headers = { Authorization: `Bearer ${server.adminToken}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) };
  const res = await httpRequest(server, method, path, headers, body !== undefined ? JSON.stringify(body) : undefined);
  if (!expected.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 500)}`);
  return (res.text ? JSON.parse(res.text) : undefined) as T;
};

/** A group, a user in it and an API key for that user: the credentials of a read client. */
export const createReaderKey = async (
  server: ServerProcess,
  username: string,
  access: { readAll?: boolean; readLabels?: readonly string[] },
  keyPath?: string,
): Promise<string> => {
  const group = `bench:group:${username}`;
  await adminCall(server, 'POST', '/api/admin/groups', { code: group, title: `Bench ${username}`, ...access });
  await adminCall(server, 'POST', '/api/admin/users', { username, name: { first: 'Bench', last: username }, groups: [group] });
  const issued = await adminCall<{ key: string }>(server, 'POST', `/api/admin/users/${username}/api-keys`, keyPath ? { path: keyPath } : {});
  return issued.key;
};

/** Waits until every projection of the service is live with lag 0; answers how long that took. */
export const waitForLagZero = async (server: ServerProcess, timeoutMs = 15 * 60_000, pollMs = 250): Promise<number> => {
  const started = performance.now();
  for (;;) {
    const { projections } = await adminCall<{ projections: { name: string; state: string; lag: number }[] }>(server, 'GET', '/api/admin/projections');
    if (projections.every((p) => p.lag === 0 && p.state === 'live')) return performance.now() - started;
    if (projections.some((p) => p.state === 'failed')) throw new Error(`a projection failed: ${JSON.stringify(projections)}`);
    if (performance.now() - started > timeoutMs) throw new Error(`projections still lag after ${timeoutMs} ms: ${JSON.stringify(projections)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
};

// ---------------------------------------------------------------------------------------------
// Latency figures

const nearestRank = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** Nearest-rank percentile of unsorted samples. */
export const percentile = (samples: readonly number[], p: number): number => nearestRank(Float64Array.from(samples).sort(), p);

/** Sorted once; no spread of the samples into a call (millions of them overflow the stack). */
export const latencySummary = (samples: readonly number[]) => {
  const sorted = Float64Array.from(samples).sort();
  return {
    count: samples.length,
    p50Ms: round(nearestRank(sorted, 50), 2),
    p99Ms: round(nearestRank(sorted, 99), 2),
    maxMs: round(sorted.length ? sorted[sorted.length - 1]! : NaN, 2),
  };
};

/** A GET timed to the last byte of the body. */
export const timedGet = (server: HttpTarget, path: string, headers: Record<string, string>): Promise<HttpReply> => httpRequest(server, 'GET', path, headers);

// ---------------------------------------------------------------------------------------------
// Load generation (autocannon)

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationSec: number;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  /** Builds each request: path and body (counter = the request's sequence number). */
  readonly next: (counter: number) => { path: string; body?: string };
  /** Checks each response; false counts as a verification failure. */
  readonly check?: (status: number, body: string, request: { path: string; body?: string; counter: number }) => boolean;
}

export interface LoadResult {
  readonly requests: number;
  readonly requestsPerSec: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly latencyMaxMs: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly checkFailures: number;
  readonly durationSec: number;
}

/** Closed-loop load: `connections` keep-alive connections, one request in flight on each, for `durationSec`. */
export const load = async (options: LoadOptions): Promise<LoadResult> => {
  let counter = 0;
  let checkFailures = 0;
  type Ctx = { current?: { path: string; body?: string; counter: number } };
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSec,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    timeout: 30,
    requests: [
      {
        setupRequest: (req, context) => {
          const n = counter++;
          const built = options.next(n);
          (context as Ctx).current = { ...built, counter: n };
          return { ...req, path: built.path, ...(built.body !== undefined ? { body: built.body } : {}) };
        },
        ...(options.check
          ? {
              onResponse: (status: number, body: string, context: object) => {
                const current = (context as Ctx).current!;
                if (!options.check!(status, body, current)) checkFailures++;
              },
            }
          : {}),
      },
    ],
  });
  return {
    requests: result.requests.total,
    requestsPerSec: Math.round(result.requests.total / result.duration),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    checkFailures,
    durationSec: round(result.duration, 2),
  };
};

// ---------------------------------------------------------------------------------------------
// A year of history: ObjectCreated / ObjectAttributesChanged events written straight into the store

export interface HistoryPlan {
  readonly events: number;
  readonly objects: number;
  readonly projects: number;
  readonly faculties: number;
  readonly departments: number;
  /** First and last recorded instants (ms since the epoch). */
  readonly startMs: number;
  readonly endMs: number;
}

export interface History {
  readonly plan: HistoryPlan;
  /** Directory holding only `events.db`: copy it, never start a service on it. */
  readonly dir: string;
  readonly generateMs: number;
  readonly eventsDbMb: number;
  readonly projectRefs: readonly string[];
  readonly personRefs: readonly string[];
  /** Recorded instant of event `i` (0-based) is startMs + i * stepMs. */
  readonly stepMs: number;
  /** Project title and progress by ref, as they are at the end of the history. */
  readonly finalProjects: ReadonlyMap<string, { title: string; progress: number }>;
  /** An instant just past the middle of the history (see MID_PAST_SNAPSHOT), between two events, and the projects as they were then. */
  readonly midMs: number;
  readonly midProjects: ReadonlyMap<string, { title: string; progress: number }>;
  readonly counts: Record<string, number>;
}

const DAY = 86_400_000;

/**
 * Events between the middle of a history and the instant `at` answers are asked for (History.midMs):
 * half of the service's default snapshot interval (SVC_SNAPSHOT_INTERVAL, 2,000 events), what an
 * instant picked at random replays on average. The middle itself is a position the runner takes a
 * snapshot at (2,000 divides half of the 200k, 1M and 2M histories benchmarked), and so is every
 * instant a whole number of fiftieths of the history away from it (the `reporting` benchmark's
 * distinct instants): there an answer replays nothing, which made those figures the best case (at
 * 1M events, measured in-process on the same store: about 30 ms more for a cold instant, 70-210 ms
 * more for the first one a process answers).
 */
export const MID_PAST_SNAPSHOT = 1_000;
const REF_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A valid, unique ref for the object created by event `i` (12 Crockford base32 digits, scrambled a little). */
export const benchRef = (i: number): string => {
  let n = BigInt(i + 1) * 0x9e3779b97n + 0x5bd1e995n;
  let out = '';
  for (let k = 0; k < 12; k++) {
    out = REF_ALPHABET[Number(n & 31n)]! + out;
    n >>= 5n;
  }
  return out;
};
const WORDS = (
  'analysis of quantum transport in layered materials using machine learning methods for the study of ' +
  'coastal erosion and its effect on migratory birds across northern europe with novel statistical models ' +
  'towards sustainable energy storage through solid state electrolytes and their interfaces in practice'
).split(' ');
const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Tim', 'Frances', 'John', 'Radia', 'Ken'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Berners-Lee', 'Allen', 'McCarthy', 'Perlman', 'Thompson'];
const JOBS = ['Lecturer', 'Senior Lecturer', 'Reader', 'Professor', 'Research Fellow', 'PhD student', 'Administrator', 'Technician'];
const SCHEMES = ['epsrc', 'ahrc', 'esrc', 'nerc', 'self-funded', 'industry'];

/** The planned sizes at a scale: 1,000,000 events over 50,000 objects (10,000 PhD projects) at scale 1. */
export const historyPlan = (scale: number, endMs = Date.now() - 60_000): HistoryPlan => {
  const events = Math.max(20_000, Math.round(1_000_000 * scale));
  const objects = Math.max(1_000, Math.round(50_000 * scale));
  return {
    events,
    objects,
    projects: Math.round(objects / 5),
    faculties: Math.max(2, Math.round(10 * Math.sqrt(scale))),
    departments: Math.max(5, Math.round(190 * Math.sqrt(scale))),
    startMs: endMs - 365 * DAY,
    endMs,
  };
};

/**
 * Writes the history with `appendMany` in batches of 5,000 single-event appends; the store's `clock`
 * spreads recorded times evenly over the year. Objects are created during the first half (every
 * 10th event at scale 1: faculties and departments first, then people and projects 4:1), every
 * other event changes one or two attributes of an existing object: projects 45% (progress, exams,
 * title, notes, funding, supervisor, department), people 54.8%, organisations 0.2% (titles, and
 * departments moving between faculties, which changes the rows of every project linked to them).
 */
export const generateHistory = async (plan: HistoryPlan, dir: string, seed = 42): Promise<History> => {
  const started = performance.now();
  const schema = loadSchema(configFile('schema.json'));
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const typeRef = (code: string): AttributeValue => ({ type: 'link', ref: schema.types.get(code)!.ref });
  const text = (value: string): AttributeValue[] => [{ type: 'text', value }];
  const link = (ref: string): AttributeValue[] => [{ type: 'link', ref }];
  const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const day = (ms: number): AttributeValue => {
    const d = new Date(ms);
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { type: 'datetime', start: new Date(start).toISOString(), end: new Date(start + DAY).toISOString(), precision: 'd', specifiedAsRange: false };
  };

  const stepMs = (plan.endMs - plan.startMs) / (plan.events - 1);
  const timeOf = (i: number) => Math.round(plan.startMs + i * stepMs);
  let clockIndex = 0;
  // The store's own pragmas, plus a large page cache and no syncing: generating the fixture is not what is measured.
  const db = new Database(join(dir, 'events.db'));
  applySqlitePragmas(db);
  db.pragma('cache_size = -524288');
  db.pragma('synchronous = OFF');
  const store = new SqliteEventStore(db, { clock: () => timeOf(clockIndex++) });

  const faculties: string[] = [];
  const departments: string[] = [];
  const people: string[] = [];
  const projects: string[] = [];
  const projectState = new Map<string, { title: string; progress: number }>();
  let midProjects: Map<string, { title: string; progress: number }> | undefined;
  const midMs = timeOf(Math.floor(plan.events / 2) + MID_PAST_SNAPSHOT) + 1234;
  const counts: Record<string, number> = {};
  const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  const createEvery = Math.max(1, Math.floor(plan.events / 2 / plan.objects));
  const peoplePlanned = plan.objects - plan.faculties - plan.departments - plan.projects;

  const create = (typeCode: string, attributes: Record<string, AttributeValue[]>, ref: string): StreamAppend => {
    const [event] = objectDecider(schema).decide({ type: 'CreateObject', ref, attributes: { 'dc:attribute:type': [typeRef(typeCode)], ...attributes } as Attributes, labels: ['svc:label:common'] }, null);
    count(`create ${typeCode}`);
    return { stream: objectStream(ref), events: [{ type: event!.type, data: event!.data }] };
  };

  const createNext = (i: number): StreamAppend => {
    const ref = benchRef(i);
    if (faculties.length < plan.faculties) {
      faculties.push(ref);
      return create('svc:type:faculty', { 'dc:attribute:title': text(`Faculty of ${titleCase(pick(WORDS))} ${faculties.length}`), 'svc:attribute:configured-behaviour': [{ type: 'configuration-name', value: `fac:f${faculties.length}` }] }, ref);
    }
    if (departments.length < plan.departments) {
      departments.push(ref);
      return create('svc:type:department', { 'dc:attribute:title': text(`Department of ${titleCase(pick(WORDS))} ${departments.length}`), 'svc:attribute:parent': link(pick(faculties)) }, ref);
    }
    const made = people.length + projects.length;
    const wantProject = projects.length < plan.projects && (people.length >= peoplePlanned || (made % 5 === 4 && people.length > 0));
    if (!wantProject) {
      people.push(ref);
      const first = pick(FIRST);
      const last = pick(LAST);
      return create('svc:type:person', {
        'dc:attribute:title': text(`${first} ${last}`),
        'svc:attribute:name': [{ type: 'person-name', value: { first, last, culture: 'western' } }],
        'svc:attribute:email': [{ type: 'email-address', value: `${first}.${last}.${people.length}@example.ac.uk`.toLowerCase() }],
        'svc:attribute:job-title': text(pick(JOBS)),
        'svc:attribute:department': link(pick(departments)),
      }, ref);
    }
    projects.push(ref);
    const title = titleCase(sentence(8));
    const progress = round(random(), 3);
    projectState.set(ref, { title, progress });
    return create('phd:type:project', {
      'dc:attribute:title': text(title),
      'phd:attribute:researcher': link(pick(people)),
      'phd:attribute:supervisor': link(pick(people)),
      'svc:attribute:department': link(pick(departments)),
      'phd:attribute:start-date': [day(timeOf(i) - Math.floor(random() * 3 * 365) * DAY)],
      'phd:attribute:funded': [{ type: 'configuration-name', value: pick(SCHEMES) }],
      'phd:attribute:exams-done': [{ type: 'integer', value: Math.floor(random() * 3) }],
      'phd:attribute:progress': [{ type: 'number', value: progress }],
      'phd:attribute:notes': [{ type: 'text-multiline', value: `${titleCase(sentence(40))}.\n${titleCase(sentence(30))}.` }],
    }, ref);
  };

  const change = (ref: string, set: Record<string, AttributeValue[]>, kind: string): StreamAppend => {
    count(`change ${kind}`);
    return { stream: objectStream(ref), events: [{ type: 'ObjectAttributesChanged', data: { ref, set } }] };
  };

  const changeNext = (): StreamAppend => {
    const r = random();
    if (r < 0.002) {
      if (random() < 0.3 && departments.length > 0) return change(pick(departments), { 'svc:attribute:parent': link(pick(faculties)) }, 'department parent');
      const ref = random() < 0.8 || faculties.length === 0 ? pick(departments) : pick(faculties);
      return change(ref, { 'dc:attribute:title': text(`${titleCase(pick(WORDS))} ${titleCase(pick(WORDS))} ${Math.floor(random() * 1000)}`) }, 'organisation title');
    }
    if (r < 0.452 && projects.length > 0) {
      const ref = pick(projects);
      const state = projectState.get(ref)!;
      const k = random();
      if (k < 0.4) {
        const progress = round(Math.min(1, state.progress + random() * 0.05), 3);
        projectState.set(ref, { ...state, progress });
        const set: Record<string, AttributeValue[]> = { 'phd:attribute:progress': [{ type: 'number', value: progress }] };
        if (random() < 0.25) set['phd:attribute:exams-done'] = [{ type: 'integer', value: Math.floor(random() * 4) }];
        return change(ref, set, 'project progress');
      }
      if (k < 0.55) {
        const title = titleCase(sentence(8));
        projectState.set(ref, { ...state, title });
        return change(ref, { 'dc:attribute:title': text(title) }, 'project title');
      }
      if (k < 0.75) return change(ref, { 'phd:attribute:notes': [{ type: 'text-multiline', value: `${titleCase(sentence(40))}.\n${titleCase(sentence(30))}.` }] }, 'project notes');
      if (k < 0.85) return change(ref, { 'phd:attribute:funded': random() < 0.2 ? [] : [{ type: 'configuration-name', value: pick(SCHEMES) }] }, 'project funding');
      if (k < 0.95) return change(ref, { 'phd:attribute:supervisor': link(pick(people)) }, 'project supervisor');
      return change(ref, { 'svc:attribute:department': link(pick(departments)) }, 'project department');
    }
    const ref = pick(people);
    const k = random();
    if (k < 0.35) return change(ref, { 'svc:attribute:job-title': text(pick(JOBS)) }, 'person job title');
    if (k < 0.55) return change(ref, { 'svc:attribute:email': [{ type: 'email-address', value: `${pick(FIRST)}.${Math.floor(random() * 1e6)}@example.ac.uk`.toLowerCase() }] }, 'person email');
    if (k < 0.8) return change(ref, { 'svc:attribute:biography': [{ type: 'text-paragraph', value: `${titleCase(sentence(50))}.` }] }, 'person biography');
    if (k < 0.9) return change(ref, { 'svc:attribute:department': link(pick(departments)) }, 'person department');
    return change(ref, { 'dc:attribute:title': text(`${pick(FIRST)} ${pick(LAST)}`) }, 'person title');
  };

  const BATCH = 5_000;
  let created = 0;
  try {
    for (let i = 0; i < plan.events; i += BATCH) {
      const batch: StreamAppend[] = [];
      for (let j = i; j < Math.min(plan.events, i + BATCH); j++) {
        if (midProjects === undefined && timeOf(j) > midMs) midProjects = new Map(projectState);
        // Organisations and the first people are created at once; the other objects every createEvery events.
        const mustCreate = created < plan.objects && (created < plan.faculties + plan.departments + 20 || j % createEvery === 0 || plan.events - j <= plan.objects - created);
        if (mustCreate) created++;
        const append = mustCreate ? createNext(j) : changeNext();
        batch.push({
          ...append,
          events: append.events.map((e) => ({ ...e, metadata: { correlationId: `bench-${j.toString(36)}`, actor: 'apikey:bench-import' } })),
        });
      }
      if (clockIndex !== i) throw new Error(`clock out of step: ${clockIndex} != ${i}`);
      await store.appendMany(batch);
      if ((i / BATCH) % 20 === 19) progress(`history: ${i + BATCH} / ${plan.events} events`);
    }
  } finally {
    await store.close();
  }
  return {
    plan,
    dir,
    generateMs: Math.round(performance.now() - started),
    eventsDbMb: round(statSync(join(dir, 'events.db')).size / 2 ** 20, 1),
    projectRefs: projects,
    personRefs: people,
    stepMs,
    finalProjects: projectState,
    midMs,
    midProjects: midProjects ?? new Map(projectState),
    counts,
  };
};

// ---------------------------------------------------------------------------------------------
// The history shared by `reporting` and `rebuild` within one run

interface SharedHistory {
  readonly scale: number;
  readonly root: string;
  history: History;
  /** A data directory whose read models have caught up with the history (left by `reporting`). */
  caughtUp?: { dir: string; catchUpMs: number; snapshotsDeleted: boolean };
}

let shared: SharedHistory | undefined;
let cleanupRegistered = false;

const removeShared = () => {
  if (shared) rmSync(shared.root, { recursive: true, force: true });
  shared = undefined;
};

/** The generated history for this scale (generated once per run, removed when the process exits). */
export const sharedHistory = async (scale: number): Promise<SharedHistory> => {
  if (shared && shared.scale === scale) return shared;
  removeShared();
  if (!cleanupRegistered) {
    process.once('exit', removeShared);
    cleanupRegistered = true;
  }
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-history-'));
  const dir = join(root, 'template');
  mkdirSync(dir);
  const plan = historyPlan(scale);
  progress(`history: generating ${plan.events} events over ${plan.objects} objects (${plan.projects} PhD projects)`);
  const history = await generateHistory(plan, dir);
  progress(`history: ${plan.events} events written in ${(history.generateMs / 1000).toFixed(1)} s (${history.eventsDbMb} MiB)`);
  shared = { scale, root, history };
  return shared;
};

/** A fresh data directory under the shared root holding a copy of the history's event log. */
export const copyHistory = (s: SharedHistory, name: string): string => {
  const dir = join(s.root, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  for (const suffix of ['', '-wal', '-shm']) {
    const from = join(s.history.dir, `events.db${suffix}`);
    if (existsSync(from)) copyFileSync(from, join(dir, `events.db${suffix}`));
  }
  return dir;
};

/** Frees the shared history early (the last benchmark using it calls this). */
export const releaseSharedHistory = (): void => removeShared();

/** The 1-minute load average (other processes on the machine skew every figure: reported with each result). */
export const loadAverage = (): number => round(loadavg()[0]!, 2);
