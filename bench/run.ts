/**
 * Benchmark harness: `npm run bench` runs every benchmark, `npm run bench -- appends` only the named
 * ones. Prints exactly one JSON document on stdout (progress goes to stderr); every benchmark measures
 * its raw baseline in the same run, so the ratios are what to compare across machines and runs.
 *
 * BENCH_SCALE=0.1 shrinks the workloads for a quick smoke run (targets are still judged, loosely).
 * Exit code: 0 when every benchmark computed a correct result (targets missed or not), 1 when one
 * failed verification or crashed, 2 on an unknown benchmark name.
 */
import { appends } from './appends.ts';
import { catchUp } from './catch-up.ts';
import { files } from './files.ts';
import { idleRss } from './idle-rss.ts';
import { objectGet } from './object-get.ts';
import { pushData } from './push-data.ts';
import { pushContention } from './push-contention.ts';
import { rebuild } from './rebuild.ts';
import { reporting } from './reporting.ts';
import { formUsed } from './service-form.ts';
import { machine, progress, round, type Benchmark, type BenchmarkResult } from './support.ts';

const all: readonly Benchmark[] = [
  appends,
  catchUp,
  files,
  objectGet,
  pushData,
  pushContention,
  reporting,
  idleRss,
  rebuild,
];

const main = async (): Promise<number> => {
  const requested = process.argv.slice(2).filter((a) => a !== '--');
  const unknown = requested.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${all.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  const selected = requested.length === 0 ? all : all.filter((b) => requested.includes(b.name));
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  if (!(scale > 0)) {
    process.stderr.write(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}\n`);
    return 2;
  }

  const startedAt = new Date();
  const started = process.hrtime.bigint();
  const benchmarks: Record<string, BenchmarkResult & { description: string; durationMs: number }> = {};
  for (const bench of selected) {
    progress(`${bench.name}: start`);
    const t0 = process.hrtime.bigint();
    let result: BenchmarkResult;
    try {
      result = await bench.run(scale);
    } catch (error) {
      progress(`${bench.name}: crashed: ${(error as Error).stack ?? String(error)}`);
      result = { ok: false, meetsTarget: false, error: (error as Error).message ?? String(error) };
    }
    const durationMs = round(Number(process.hrtime.bigint() - t0) / 1e6, 0);
    progress(`${bench.name}: done in ${(durationMs / 1000).toFixed(1)} s (ok: ${result.ok}, meetsTarget: ${result.meetsTarget})`);
    benchmarks[bench.name] = { description: bench.description, durationMs, ...result };
  }

  const results = Object.values(benchmarks);
  const report = {
    machine: machine(),
    startedAt: startedAt.toISOString(),
    durationMs: round(Number(process.hrtime.bigint() - started) / 1e6, 0),
    ...(scale !== 1 ? { scale } : {}),
    // The service processes' form (bench/service-form.ts): compiled, as the container image runs it, unless BENCH_FORM=sources.
    ...(formUsed() ? { serviceForm: formUsed() } : {}),
    ok: results.every((r) => r.ok),
    meetsTargets: results.every((r) => r.ok && r.meetsTarget),
    benchmarks,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.ok ? 0 : 1;
};

const code = await main();
// Exit explicitly once stdout is flushed: after a failed run a pending waitFor timer (10 min) would
// otherwise keep the process alive.
process.stdout.write('', () => process.exit(code));
