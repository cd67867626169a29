/**
 * `files`: a 100 MiB upload (`POST /api/admin/files`) and download (signed URL) through the HTTP
 * endpoints of a real server process (bench/files-server.ts), against a plain `fs` stream copy of
 * the same file in the same run (before, between and after the rounds).
 *
 * Targets (issue 6): the server's resident memory grows by less than 64 MiB during each transfer,
 * and upload and download each reach at least 50% of the fs copy's throughput. Correctness: the
 * digest the server answers and the downloaded bytes must match the file (else ok: false).
 *
 * Memory: VmRSS of the server process from /proc, sampled every 10 ms. Judged: the highest RSS
 * seen during any transfer minus the RSS before any file transfer (so the growth caused by the
 * 32 MiB warm-up transfer each way counts too); each round also reports its own growth over the
 * level just before it.
 *
 * Runs from the harness (`npm run bench -- files`) or alone: `node --import tsx bench/files.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machine, progress, round, timeMs, withTempDir, type Benchmark, type BenchmarkResult } from './support.ts';

const MIB = 1024 * 1024;
const TARGET_RSS_GROWTH_MIB = 64;
const TARGET_RATIO = 0.5;
const ROUNDS = 3;
const DOWNLOADS_PER_ROUND = 2;
/** The bench client reads the source file in 1 MiB pieces (as curl or a browser would send large writes). */
const CLIENT_CHUNK = MIB;
const SAMPLE_MS = 10;
/** One transfer each way before the measured rounds (JIT, buffer pools, heap sizing). */
const WARM_UP_BYTES = 32 * MIB;

interface Server {
  readonly url: string;
  readonly pid: number;
  readonly baseUrl: string;
  readonly adminToken: string;
  readonly child: ChildProcess;
}

const startServer = async (dataDir: string): Promise<Server> => {
  const entry = fileURLToPath(new URL('./files-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`files-server exited with ${code} before listening`)));
  });
  return { ...(JSON.parse(line) as Omit<Server, 'child'>), child };
};

const stopServer = async (server: Server) => {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.stdin!.end();
  const force = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
};

/** Resident set size of a process in bytes (Linux). */
const rssOf = (pid: number): number => {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
};

/** Runs `fn` while sampling the server's RSS; growth is the peak over the level right before. */
const withRss = async <T>(pid: number, fn: () => Promise<T>) => {
  const before = rssOf(pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
  }, SAMPLE_MS);
  try {
    const { ms, result } = await timeMs(fn);
    peak = Math.max(peak, rssOf(pid));
    return { ms, result, rssBeforeMib: round(before / MIB, 1), rssPeakMib: round(peak / MIB, 1), rssGrowthMib: round((peak - before) / MIB, 1) };
  } finally {
    clearInterval(timer);
  }
};

const makeFile = async (path: string, size: number, seed: number): Promise<string> => {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  // A cheap deterministic generator: each 1 MiB block is the SHA-256 chain of (seed, block) repeated.
  for (let block = 0; block * MIB < size; block++) {
    const n = Math.min(MIB, size - block * MIB);
    const buf = Buffer.allocUnsafe(n);
    let state = createHash('sha256').update(`${seed}:${block}`).digest();
    for (let off = 0; off < n; off += 32) {
      state.copy(buf, off, 0, Math.min(32, n - off));
      state = createHash('sha256').update(state).digest();
    }
    hash.update(buf);
    if (!out.write(buf)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return hash.digest('hex');
};

const fsCopy = async (from: string, to: string) => {
  const { ms } = await timeMs(() => pipeline(createReadStream(from), createWriteStream(to)));
  rmSync(to, { force: true });
  return ms;
};

const uploadFile = (server: Server, path: string, filename: string) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const size = statSync(path).size;
    const req = request(
      `${server.url}/api/admin/files?filename=${encodeURIComponent(filename)}`,
      { method: 'POST', headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    createReadStream(path, { highWaterMark: CLIENT_CHUNK }).on('error', reject).pipe(req);
  });

/** Downloads the URL, hashing and discarding the bytes; answers digest and size. */
const download = (url: string) =>
  new Promise<{ status: number; digest: string; size: number }>((resolve, reject) => {
    request(url, (res) => {
      const hash = createHash('sha256');
      let size = 0;
      pipeline(
        res,
        new Writable({
          write(chunk: Buffer, _e, cb) {
            hash.update(chunk);
            size += chunk.length;
            cb();
          },
        }),
      ).then(() => resolve({ status: res.statusCode ?? 0, digest: hash.digest('hex'), size }), reject);
    })
      .on('error', reject)
      .end();
  });

const adminJson = async (server: Server, path: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};

const signedUrl = async (server: Server, key: string, digest: string, size: number): Promise<string> => {
  const res = await fetch(`${server.url}/api/v0-file/metadata/${digest}?fileSize=${size}`, { headers: { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` } });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`metadata: ${res.status} ${JSON.stringify(body)}`);
  // The URL names SVC_BASE_URL; the bench server listens elsewhere.
  return `${server.url}${(body.download.url as string).slice(server.baseUrl.length)}`;
};

const mbps = (bytes: number, ms: number) => round(bytes / MIB / (ms / 1000), 1);

export const files: Benchmark = {
  name: 'files',
  description: `100 MiB upload (POST /api/admin/files) and signed download through a real server process: server RSS growth (< ${TARGET_RSS_GROWTH_MIB} MiB) and throughput vs a plain fs stream copy (>= ${TARGET_RATIO * 100}%)`,
  async run(scale: number): Promise<BenchmarkResult> {
    const size = Math.max(MIB, Math.round(100 * MIB * scale));
    return withTempDir('files', async (dir) => {
      progress(`files: writing ${ROUNDS} source files of ${round(size / MIB, 1)} MiB`);
      const sources = [];
      for (let i = 0; i < ROUNDS; i++) {
        const path = join(dir, `source-${i}.bin`);
        sources.push({ path, digest: await makeFile(path, size, i) });
      }
      const warmPath = join(dir, 'warm.bin');
      const warmDigest = await makeFile(warmPath, WARM_UP_BYTES, 99);

      const copyMs: number[] = [await fsCopy(sources[0]!.path, join(dir, 'copy.bin'))];
      const server = await startServer(join(dir, 'server-data'));
      try {
        const group = 'bench:group:files';
        await adminJson(server, '/api/admin/groups', { code: group, title: 'bench', readAll: true });
        await adminJson(server, '/api/admin/users', { username: 'bench', name: { first: 'Bench', last: 'Mark' }, groups: [group] });
        const { key } = await adminJson(server, '/api/admin/users/bench/api-keys', {});

        const startRssMib = round(rssOf(server.pid) / MIB, 1);
        // Warm-up: one 32 MiB transfer each way, so the measured rounds see a running server.
        const warm = await uploadFile(server, warmPath, 'warm.bin');
        if (warm.body.digest !== warmDigest) throw new Error('warm-up upload digest mismatch');
        await download(await signedUrl(server, key, warmDigest, WARM_UP_BYTES));
        const idleRssMib = round(rssOf(server.pid) / MIB, 1);

        const uploads = [];
        const downloads = [];
        let correct = true;
        for (const [i, source] of sources.entries()) {
          progress(`files: round ${i + 1}: upload`);
          const up = await withRss(server.pid, () => uploadFile(server, source.path, `round-${i}.bin`));
          const upOk = up.result.status === 201 && up.result.body.digest === source.digest && up.result.body.fileSize === size;
          uploads.push({ ms: round(up.ms, 0), mibPerSec: mbps(size, up.ms), rssBeforeMib: up.rssBeforeMib, rssPeakMib: up.rssPeakMib, rssGrowthMib: up.rssGrowthMib, ok: upOk });

          const url = await signedUrl(server, key, source.digest, size);
          let downOk = true;
          for (let d = 0; d < DOWNLOADS_PER_ROUND; d++) {
            progress(`files: round ${i + 1}: download ${d + 1}`);
            const down = await withRss(server.pid, () => download(url));
            const ok = down.result.status === 200 && down.result.digest === source.digest && down.result.size === size;
            downloads.push({ ms: round(down.ms, 0), mibPerSec: mbps(size, down.ms), rssBeforeMib: down.rssBeforeMib, rssPeakMib: down.rssPeakMib, rssGrowthMib: down.rssGrowthMib, ok });
            downOk &&= ok;
          }
          correct &&= upOk && downOk;
          copyMs.push(await fsCopy(source.path, join(dir, 'copy.bin')));
        }

        const copyMibPerSec = copyMs.map((ms) => mbps(size, ms));
        const baseline = Math.max(...copyMibPerSec);
        const best = (xs: { mibPerSec: number }[]) => Math.max(...xs.map((x) => x.mibPerSec));
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
        const medianBaseline = median(copyMibPerSec);
        const worstGrowth = (xs: { rssGrowthMib: number }[]) => Math.max(...xs.map((x) => x.rssGrowthMib));
        const uploadRatio = round(best(uploads) / baseline, 3);
        const downloadRatio = round(best(downloads) / baseline, 3);
        // Judged strictly: the highest RSS seen during any transfer, over the level before any file transfer.
        const peakOverStart = (xs: { rssPeakMib: number }[]) => round(Math.max(...xs.map((x) => x.rssPeakMib)) - startRssMib, 1);
        const meetsTarget =
          correct &&
          peakOverStart(uploads) < TARGET_RSS_GROWTH_MIB &&
          peakOverStart(downloads) < TARGET_RSS_GROWTH_MIB &&
          uploadRatio >= TARGET_RATIO &&
          downloadRatio >= TARGET_RATIO;
        return {
          ok: correct,
          meetsTarget,
          fileMib: round(size / MIB, 1),
          targets: { rssGrowthMib: `< ${TARGET_RSS_GROWTH_MIB}`, throughputRatio: `>= ${TARGET_RATIO}` },
          judged: 'best transfer vs best fs copy of the run (the machine is shared and noisy); medians shown too',
          baseline: { what: 'fs.createReadStream -> fs.createWriteStream of the same file (default 64 KiB chunks, page cache warm, no fsync)', mibPerSec: copyMibPerSec, best: baseline, median: medianBaseline },
          upload: {
            rounds: uploads,
            bestMibPerSec: best(uploads),
            ratio: uploadRatio,
            medianRatio: round(median(uploads.map((u) => u.mibPerSec)) / medianBaseline, 3),
            worstRssGrowthMib: worstGrowth(uploads),
            peakRssOverStartMib: peakOverStart(uploads),
          },
          download: {
            rounds: downloads,
            bestMibPerSec: best(downloads),
            ratio: downloadRatio,
            medianRatio: round(median(downloads.map((u) => u.mibPerSec)) / medianBaseline, 3),
            worstRssGrowthMib: worstGrowth(downloads),
            peakRssOverStartMib: peakOverStart(downloads),
          },
          server: { startRssMib, idleRssMibAfterWarmUp: idleRssMib, note: 'an upload includes SHA-256, writing a temporary file with fdatasync (every 8 MiB and at the end), rename, the FileStored event and the wait for the read models' },
        };
      } finally {
        await stopServer(server);
      }
    });
  },
};

// Standalone: `node --import tsx bench/files.ts` prints the same kind of JSON document as bench/run.ts.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  const startedAt = new Date().toISOString();
  let result: BenchmarkResult;
  try {
    result = await files.run(scale);
  } catch (error) {
    progress(`files: crashed: ${(error as Error).stack ?? String(error)}`);
    result = { ok: false, meetsTarget: false, error: (error as Error).message };
  }
  process.stdout.write(`${JSON.stringify({ machine: machine(), startedAt, ...(scale !== 1 ? { scale } : {}), ok: result.ok, meetsTargets: result.ok && result.meetsTarget, benchmarks: { files: { description: files.description, ...result } } }, null, 2)}\n`);
  process.exitCode = result.ok ? 0 : 1;
}
