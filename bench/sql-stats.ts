/**
 * BENCH_SQL_STATS=<dir>: loaded with `--import` into every server process of the service-level
 * benchmarks (bench/domain-support.ts spawnServer), it counts and times each embedded-store
 * statement by its SQL text and writes `<dir>/sql-<pid>-<thread>.json` when the process exits
 * (calls, total ms and µs a call, costliest first; a worker thread that is terminated writes
 * nothing). A CPU profile charges a statement's native time to whichever JavaScript function called
 * it; this says which statements run, how often per request, and what each costs. Not counted:
 * `iterate`'s rows (read after it returns: only its calls are), and the BEGIN and COMMIT of
 * `db.transaction`, which better-sqlite3 prepares natively.
 */
import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

const dir = process.env.BENCH_SQL_STATS;

type Stat = { calls: number; ns: bigint };
type Statement = Record<'get' | 'all' | 'run' | 'iterate', (...args: unknown[]) => unknown>;

if (dir) {
  const stats = new Map<string, Stat>();
  const stat = (key: string): Stat => {
    let s = stats.get(key);
    if (!s) stats.set(key, (s = { calls: 0, ns: 0n }));
    return s;
  };
  const proto = Database.prototype as unknown as { prepare(this: unknown, sql: string): Statement };
  const prepare = proto.prepare;
  proto.prepare = function (sql: string) {
    const statement = prepare.call(this, sql);
    const text = sql.replace(/\s+/g, ' ').trim();
    for (const method of ['get', 'all', 'run'] as const) {
      const call = statement[method];
      const s = stat(`${method} ${text}`);
      statement[method] = function (this: unknown, ...args: unknown[]) {
        const started = process.hrtime.bigint();
        try {
          return call.apply(this, args);
        } finally {
          s.calls++;
          s.ns += process.hrtime.bigint() - started;
        }
      };
    }
    const iterate = statement.iterate;
    const counted = stat(`iterate ${text}`);
    statement.iterate = function (this: unknown, ...args: unknown[]) {
      counted.calls++;
      return iterate.apply(this, args);
    };
    return statement;
  };
  process.on('exit', () => {
    const rows = [...stats]
      .filter(([, s]) => s.calls > 0)
      .map(([sql, s]) => ({ sql, calls: s.calls, ms: Number(s.ns) / 1e6, usPerCall: Number(s.ns) / 1e3 / s.calls }))
      .sort((a, b) => b.ms - a.ms);
    if (rows.length === 0) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `sql-${process.pid}-${threadId}.json`), `${JSON.stringify(rows, null, 1)}\n`);
  });
}
