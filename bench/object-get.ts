/**
 * `object-get` (issue 3): `GET /api/v0-object/ref/<ref>?sources=NONE` with a valid API key, against
 * a real service process, for PhD projects of realistic size: 14 attributes (type, title, links to a
 * researcher, two supervisors and a department, a start date, funding scheme, exams done, progress,
 * a two-paragraph text-multiline note, ISBN, UUID, postcode and a small JSON value). The key's
 * group reads by label, so every request runs the whole path: Basic auth, label check, the object
 * and its linked objects, serialisation, the request log line (info level, to a file). The service
 * keeps what it derives from read models in memory until the projection behind them moves (key
 * checks by key hash, object documents, link titles: src/projections/versioned-cache.ts), so with the
 * 200 projects of this load, steady-state requests are served from those caches; the first
 * request for each object reads the read store. The key's path, the throttle and the label check
 * still run on every request.
 *
 * Baseline: a bare koa + @koa/router process answering the same JSON body (bench/koa-baseline-server.ts).
 * Load: autocannon from this process, 32 keep-alive connections to 127.0.0.1, closed loop; rounds
 * alternate baseline and service (B S B S), each `5 s x scale` (at least 2 s) after a warm-up.
 * Target (issue 15): the service reaches >= 60% of the baseline's requests/s (mean of the rounds).
 *
 * Also (not judged): a round of the same load while an object no project links to is changed every
 * 20 ms (the service drops from its caches what each change changed), then an uncached round: every
 * request the first read of its object since that object changed (each project written, then read
 * once, 32 at a time, pass after pass). A write to an unrelated object no longer empties the caches,
 * so that is what a cache miss is now.
 *
 * Correctness: every response must be 200 and byte-for-byte the body fetched for that ref before the
 * load (else ok: false).
 *
 * Also reported (not judged): the CPU time each server process spent per request in each round
 * (user + system, all threads, from /proc/<pid>/stat at 100 ticks/s; absent where there is no /proc).
 * It is steadier than requests/s on a shared machine, so `cpuRatio` (baseline / service CPU per
 * request) helps to read a noisy run.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  adminCall,
  basicAuth,
  createReaderKey,
  latencySummary,
  load,
  loadAverage,
  spawnServer,
  startServiceProcess,
  stopServer,
  timedGet,
  type LoadResult,
  type ServerProcess,
} from './domain-support.ts';
import { formatRate, mean, progress, round, withTempDir, type Benchmark, type BenchmarkResult } from './support.ts';

/** Issue 15's target (issue 3 asked for 0.4, which this benchmark judged by until the stricter one was set). */
const TARGET_RATIO = 0.6;
const CONNECTIONS = 32;
const ROUNDS = 2;
const PROJECTS = 200;
const PEOPLE = 40;
const DEPARTMENTS = 6;
const WRITE_EVERY_MS = 20;

const NOTES =
  'The project studies charge transport in layered van der Waals heterostructures, combining device ' +
  'fabrication in the clean room with low-temperature magnetotransport measurements and first-principles ' +
  'modelling. The first year established the exfoliation and transfer process and produced the first ' +
  'working devices.\nThe second year focuses on the temperature dependence of the mobility and on the role ' +
  'of interface disorder; a secondment at the partner laboratory is planned for the spring, and the ' +
  'literature review chapter has been drafted and discussed with both supervisors at the annual review.';

/** Runs `fn` over `items` with at most `width` calls in flight. */
const inParallel = async <T, R>(items: readonly T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> => {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
};

const createObject = async (server: ServerProcess, type: string, attributes: Record<string, unknown>): Promise<string> =>
  (await adminCall<{ ref: string }>(server, 'POST', '/api/admin/objects', { type, attributes })).ref;

/** Faculties, departments, people and PhD projects through the admin API; answers the project refs. */
const createProjects = async (server: ServerProcess): Promise<string[]> => {
  const faculties = await inParallel(['Science', 'Engineering'], 2, (name) =>
    createObject(server, 'svc:type:faculty', { 'dc:attribute:title': `Faculty of ${name}`, 'svc:attribute:configured-behaviour': { type: 'configuration-name', value: `fac:${name.toLowerCase()}` } }),
  );
  const departments = await inParallel(Array.from({ length: DEPARTMENTS }, (_, i) => i), 4, (i) =>
    createObject(server, 'svc:type:department', { 'dc:attribute:title': `Department ${i}`, 'svc:attribute:parent': { type: 'link', ref: faculties[i % faculties.length] } }),
  );
  const people = await inParallel(Array.from({ length: PEOPLE }, (_, i) => i), 8, (i) =>
    createObject(server, 'svc:type:person', {
      'dc:attribute:title': `Person ${i} Example`,
      'svc:attribute:name': { type: 'person-name', value: { first: `Person ${i}`, last: 'Example' } },
      'svc:attribute:email': { type: 'email-address', value: `person.${i}@example.ac.uk` },
      'svc:attribute:department': { type: 'link', ref: departments[i % departments.length] },
    }),
  );
  return inParallel(Array.from({ length: PROJECTS }, (_, i) => i), 8, (i) =>
    createObject(server, 'phd:type:project', {
      'dc:attribute:title': `Charge transport in layered heterostructures, part ${i}`,
      'phd:attribute:researcher': { type: 'link', ref: people[i % PEOPLE] },
      'phd:attribute:supervisor': [
        { type: 'link', ref: people[(i + 7) % PEOPLE] },
        { type: 'link', ref: people[(i + 13) % PEOPLE] },
      ],
      'svc:attribute:department': { type: 'link', ref: departments[i % departments.length] },
      'phd:attribute:start-date': { type: 'datetime', start: `202${i % 5}-10-01` },
      'phd:attribute:funded': { type: 'configuration-name', value: ['epsrc', 'ahrc', 'industry'][i % 3] },
      'phd:attribute:exams-done': { type: 'integer', value: i % 3 },
      'phd:attribute:progress': { type: 'number', value: round((i % 100) / 100, 2) },
      'phd:attribute:notes': { type: 'text-multiline', value: NOTES },
      'phd:attribute:isbn': { type: 'isbn', value: '978-3-16-148410-0' },
      'phd:attribute:uuid': { type: 'uuid', value: randomUUID() },
      'phd:attribute:postcode': { type: 'postcode', value: 'OX1 3PU' },
      'phd:attribute:extra': { type: 'json', value: { cohort: 2020 + (i % 5), mode: i % 4 === 0 ? 'part-time' : 'full-time', milestones: ['transfer', 'confirmation'] } },
    }),
  );
};

/** CPU milliseconds a process has used (user + system, all threads), or undefined without /proc. */
const cpuMs = (pid: number): number | undefined => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, clock ticks of 10 ms
  } catch {
    return undefined;
  }
};

type Round = LoadResult & { readonly cpuUsPerRequest?: number };

const figures = (r: Round) => ({
  requestsPerSec: r.requestsPerSec,
  ...(r.cpuUsPerRequest !== undefined ? { cpuUsPerRequest: r.cpuUsPerRequest } : {}),
  p50Ms: r.latencyP50Ms,
  p99Ms: r.latencyP99Ms,
  maxMs: r.latencyMaxMs,
  requests: r.requests,
  non2xx: r.non2xx,
  errors: r.errors,
  checkFailures: r.checkFailures,
});

export const objectGet: Benchmark = {
  name: 'object-get',
  description: `GET /api/v0-object/ref/<ref>?sources=NONE (API key, 14-attribute PhD projects) on a service process under ${CONNECTIONS} connections: requests/s vs a bare koa process answering the same JSON (target >= ${TARGET_RATIO})`,
  async run(scale: number): Promise<BenchmarkResult> {
    const durationSec = Math.max(2, Math.round(5 * scale));
    const loadBefore = loadAverage();
    return withTempDir('object-get', async (dir) => {
      const servers: ServerProcess[] = [];
      try {
        const service = await startServiceProcess('object-get-service', join(dir, 'data'));
        servers.push(service);
        progress(`object-get: creating ${PROJECTS} projects, ${PEOPLE} people, ${DEPARTMENTS} departments`);
        const key = await createReaderKey(service, 'bench-object-reader', { readLabels: ['svc:label:common'] }, '/api/v0-object/');
        const refs = await createProjects(service);
        const auth = { Authorization: basicAuth(key) };
        const path = (ref: string) => `/api/v0-object/ref/${ref}?sources=NONE`;

        // The expected body of every ref, fetched once before the load.
        const expected = new Map<string, string>();
        for (const ref of refs) {
          const res = await timedGet(service, path(ref), auth);
          if (res.status !== 200) throw new Error(`GET ${ref}: ${res.status} ${res.text}`);
          expected.set(ref, res.text);
        }
        const sample = expected.get(refs[0]!)!;
        const attributes = Object.keys((JSON.parse(sample) as { object: { attributes: object } }).object.attributes).length;
        const bodyFile = join(dir, 'object.json');
        writeFileSync(bodyFile, sample);
        const baseline = await spawnServer('object-get-koa', 'koa-baseline-server.ts', { BENCH_GET_BODY_FILE: bodyFile });
        servers.push(baseline);

        const refOf = (n: number) => refs[n % refs.length]!;
        const loadOnce = (server: ServerProcess, seconds: number, isService: boolean) =>
          load({
            url: server.url,
            connections: CONNECTIONS,
            durationSec: seconds,
            headers: auth,
            next: (n) => ({ path: path(refOf(n)) }),
            check: (status, body, req) => status === 200 && (isService ? body === expected.get(refOf(req.counter)) : body === sample),
          });
        const runLoad = async (server: ServerProcess, seconds: number, isService: boolean): Promise<Round> => {
          const before = cpuMs(server.pid);
          const result = await loadOnce(server, seconds, isService);
          const after = cpuMs(server.pid);
          return before !== undefined && after !== undefined && result.requests > 0
            ? { ...result, cpuUsPerRequest: round(((after - before) * 1000) / result.requests, 1) }
            : result;
        };

        progress('object-get: warm-up');
        await runLoad(baseline, 1, false);
        await runLoad(service, 1, true);
        const baselineRounds: Round[] = [];
        const serviceRounds: Round[] = [];
        for (let round_ = 0; round_ < ROUNDS; round_++) {
          baselineRounds.push(await runLoad(baseline, durationSec, false));
          progress(`object-get: round ${round_ + 1}: koa ${formatRate(baselineRounds.at(-1)!.requestsPerSec)}`);
          serviceRounds.push(await runLoad(service, durationSec, true));
          progress(`object-get: round ${round_ + 1}: service ${formatRate(serviceRounds.at(-1)!.requestsPerSec)}`);
        }

        // Concurrent writes: the same load while a writer changes an object no project links to every
        // WRITE_EVERY_MS (the service drops what each change changed).
        progress('object-get: round with concurrent writes');
        const scratch = await createObject(service, 'svc:type:person', { 'dc:attribute:title': 'Bench scratch person' });
        let scratchWrites = 0;
        const touchScratch = () => adminCall(service, 'PATCH', `/api/admin/objects/${scratch}`, { attributes: { 'dc:attribute:title': `Bench scratch ${scratchWrites++}` } });
        let writing = true;
        const writer = (async () => {
          while (writing) {
            await touchScratch();
            await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
          }
        })();
        const writeRound = await runLoad(service, durationSec, true).finally(() => (writing = false));
        await writer;
        progress(`object-get: with concurrent writes ${formatRate(writeRound.requestsPerSec)} (${scratchWrites} writes in all)`);

        // Uncached (last: it changes the projects): every request is the first read of its object since
        // that object changed; each project is written, then read once, ${CONNECTIONS} at a time.
        progress('object-get: uncached round');
        const uncachedMs: number[] = [];
        let uncachedFailures = 0;
        let readingMs = 0;
        for (let pass = 0; pass < Math.max(3, Math.round(10 * scale)); pass++) {
          const titles = new Map(refs.map((ref) => [ref, `Bench project ${ref}, pass ${pass}`]));
          await inParallel(refs, CONNECTIONS, (ref) => adminCall(service, 'PATCH', `/api/admin/objects/${ref}`, { attributes: { 'dc:attribute:title': titles.get(ref) } }));
          const reading = performance.now();
          await inParallel(refs, CONNECTIONS, async (ref) => {
            const r = await timedGet(service, path(ref), auth);
            if (r.status !== 200 || !r.text.includes(JSON.stringify(titles.get(ref)))) uncachedFailures++;
            uncachedMs.push(r.ms);
          });
          readingMs += performance.now() - reading;
        }
        const uncachedRps = round((uncachedMs.length * 1000) / readingMs, 0);
        progress(`object-get: uncached ${formatRate(uncachedRps)} (each request the first read of its object since it changed)`);


        const clean = (r: LoadResult) => r.non2xx === 0 && r.errors === 0 && r.checkFailures === 0 && r.requests > 0;
        const ok = [...baselineRounds, ...serviceRounds, writeRound].every(clean) && uncachedFailures === 0;
        const baselineRps = mean(baselineRounds.map((r) => r.requestsPerSec));
        const serviceRps = mean(serviceRounds.map((r) => r.requestsPerSec));
        const ratio = round(serviceRps / baselineRps, 3);
        const cpuOf = (rounds: Round[]) => (rounds.every((r) => r.cpuUsPerRequest !== undefined) ? mean(rounds.map((r) => r.cpuUsPerRequest!)) : undefined);
        const serviceCpu = cpuOf(serviceRounds);
        const baselineCpu = cpuOf(baselineRounds);
        return {
          ok,
          meetsTarget: ok && ratio >= TARGET_RATIO,
          target: { throughputRatio: `>= ${TARGET_RATIO}` },
          ratio,
          ...(serviceCpu !== undefined && baselineCpu !== undefined ? { cpuRatio: round(baselineCpu / serviceCpu, 3) } : {}),
          load: { generator: 'autocannon (in the bench process)', connections: CONNECTIONS, durationSecPerRound: durationSec, rounds: ROUNDS, host: '127.0.0.1' },
          response: { bytes: Buffer.byteLength(sample), attributes, objects: refs.length },
          uncached: {
            how: `${uncachedMs.length} requests, each the first read of its object since that object changed (every project written, then read once, ${CONNECTIONS} at a time, pass after pass; requests/s over the reads alone); not judged`,
            requestsPerSec: uncachedRps,
            ratioToBaseline: round(uncachedRps / baselineRps, 3),
            ...latencySummary(uncachedMs),
            failures: uncachedFailures,
          },
          withConcurrentWrites: {
            how: `the same closed-loop load (${CONNECTIONS} connections, ${durationSec} s) while an object no project links to is changed every ${WRITE_EVERY_MS} ms (the service drops what each change changed); not judged`,
            ratioToBaseline: round(writeRound.requestsPerSec / baselineRps, 3),
            ...figures(writeRound),
          },
          service: { requestsPerSec: Math.round(serviceRps), ...(serviceCpu !== undefined ? { cpuUsPerRequest: round(serviceCpu, 1) } : {}), rounds: serviceRounds.map(figures), startMs: service.readyAfterMs },
          baseline: { what: 'bare koa + @koa/router process answering the same JSON object (serialised per request), no auth, no store, no logging', requestsPerSec: Math.round(baselineRps), ...(baselineCpu !== undefined ? { cpuUsPerRequest: round(baselineCpu, 1) } : {}), rounds: baselineRounds.map(figures) },
          machineLoad: { before: loadBefore, after: loadAverage() },
        };
      } finally {
        for (const s of servers) await stopServer(s);
      }
    });
  },
};
