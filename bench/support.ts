/**
 * Small helpers shared by the benchmarks: temp directories, timing, rates, a seeded PRNG and a raw
 * better-sqlite3 connection with the store's own pragmas (so baselines pay the same durability cost).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { arch, cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { applySqlitePragmas } from '../src/drivers/sqlite.ts';

// Plain JavaScript, shared with the rebuild process that runs without a TypeScript loader.
export { ownPeakRssMb, peakRssMb } from './peak-rss.mjs';

/** What every benchmark module exports. */
export interface Benchmark {
  readonly name: string;
  readonly description: string;
  /** `scale` multiplies the workload sizes (1 = the documented sizes); targets are judged all the same. */
  run(scale: number): Promise<BenchmarkResult>;
}

export interface BenchmarkResult {
  /** False when the benchmark computed a wrong result (or crashed): its figures must not be trusted. */
  readonly ok: boolean;
  /** True when every stated target is met. */
  readonly meetsTarget: boolean;
  readonly [figure: string]: unknown;
}

/** Runs `fn` with a fresh directory under the OS temp dir, removed afterwards whatever happens. */
export const withTempDir = async <T>(label: string, fn: (dir: string) => Promise<T>): Promise<T> => {
  const dir = mkdtempSync(join(tmpdir(), `svc-bench-${label}-`));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** Deletes a SQLite database file with its WAL and shared-memory files (keeps the temp dir small). */
export const removeDb = (file: string): void => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
};

/** Wall-clock milliseconds taken by `fn` (monotonic clock). */
export const timeMs = async <T>(fn: () => T | Promise<T>): Promise<{ ms: number; result: T }> => {
  const start = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, result };
};

export const perSecond = (count: number, ms: number): number => Math.round((count * 1000) / ms);

export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

export const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Mean of repeated rate measurements with their spread ((max - min) / mean, in percent). */
export const summarize = (rates: readonly number[]) => {
  const m = mean(rates);
  return {
    mean: Math.round(m),
    min: Math.min(...rates),
    max: Math.max(...rates),
    spreadPct: round((100 * (Math.max(...rates) - Math.min(...rates))) / m, 1),
  };
};

/** Human-readable rate for progress lines: 12345.6 -> "12.3k/s". */
export const formatRate = (perSec: number): string =>
  perSec >= 1e6 ? `${(perSec / 1e6).toFixed(2)}M/s` : perSec >= 1e3 ? `${(perSec / 1e3).toFixed(1)}k/s` : `${perSec.toFixed(0)}/s`;

/** Progress goes to stderr: stdout carries only the JSON result. */
export const progress = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

/** A raw connection with exactly the pragmas the embedded stores use. */
export const openRawDb = (file: string): Database.Database => {
  const db = new Database(file);
  applySqlitePragmas(db);
  return db;
};

/** Deterministic PRNG (mulberry32) so both sides of a comparison see the same workload shape. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export const machine = () => ({
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? 'unknown',
  totalMemoryMb: Math.round(totalmem() / 2 ** 20),
  node: process.version,
  platform: platform(),
  arch: arch(),
  osRelease: release(),
  sqlite: sqliteVersion(),
});

const sqliteVersion = (): string => {
  const db = new Database(':memory:');
  try {
    return (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  } finally {
    db.close();
  }
};
