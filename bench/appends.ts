/**
 * `appends`: SqliteEventStore.append against raw better-sqlite3 inserts into a table of the same
 * shape, same pragmas (WAL, synchronous=FULL: the event store syncs every commit), same payloads (JSON.stringify inside the timed loop
 * on both sides).
 *
 * - single: N sequential one-event appends spread over S streams, each with the exact expected
 *   revision; baseline = one autocommitted INSERT per event (one transaction per row).
 * - batch:  M appends of 100 events each; baseline = 100 INSERTs in one transaction per batch.
 *
 * The store runs twice and the baseline before, between and after (B S B S B, each run into a fresh
 * file); the ratio compares the means, so a drift of the machine's speed does not favour a side.
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ExpectedRevision, NewEvent } from '../src/events/event-store.ts';
import { openSqliteEventStore } from '../src/events/adapters/sqlite-event-store.ts';
import {
  formatRate,
  openRawDb,
  perSecond,
  progress,
  removeDb,
  round,
  seededRandom,
  summarize,
  timeMs,
  withTempDir,
  type Benchmark,
  type BenchmarkResult,
} from './support.ts';

const TARGET_SINGLE_RATIO = 0.3;

interface PlannedAppend {
  readonly stream: string;
  readonly expected: ExpectedRevision;
  /** Revision the first event of this append must get. */
  readonly firstRevision: number;
  readonly events: readonly NewEvent[];
}

const ACTORS = ['user:alice', 'user:bob', 'apikey:7f3c2a', 'system'];
const CONTENT_TYPES = ['application/pdf', 'text/csv', 'image/png', 'application/json'];

/** A realistic small event: ~200 bytes of data, a correlation id and an actor. */
const objectEvent = (rng: () => number, stream: string, revision: number): NewEvent => ({
  id: randomUUID(),
  type: revision === 0 ? 'ObjectCreated' : 'ObjectUpdated',
  data: {
    objectId: stream.slice('object-'.length),
    name: `import-${Math.floor(rng() * 1e6)}.csv`,
    contentType: CONTENT_TYPES[Math.floor(rng() * CONTENT_TYPES.length)],
    size: Math.floor(rng() * 5e6),
    folder: '/imports/2024/customer-feeds',
    tags: ['import', rng() < 0.5 ? 'finance' : 'ops'],
    checksum: `sha1:${randomUUID().replaceAll('-', '').slice(0, 24)}`,
  },
  metadata: { correlationId: randomUUID(), actor: ACTORS[Math.floor(rng() * ACTORS.length)] },
});

/** `count` appends of `perAppend` events each, to streams picked at random among `streams`. */
const plan = (seed: number, count: number, perAppend: number, streams: number): PlannedAppend[] => {
  const rng = seededRandom(seed);
  const names = Array.from({ length: streams }, () => `object-${randomUUID()}`);
  const last = new Map<string, number>();
  return Array.from({ length: count }, () => {
    const stream = names[Math.floor(rng() * streams)]!;
    const current = last.get(stream) ?? -1;
    last.set(stream, current + perAppend);
    return {
      stream,
      expected: current === -1 ? 'no_stream' : current,
      firstRevision: current + 1,
      events: Array.from({ length: perAppend }, (_, i) => objectEvent(rng, stream, current + 1 + i)),
    };
  });
};

/** The store's table shape and constraints (without its two secondary indexes: see `baselineSchema`). */
const RAW_SCHEMA = `
  CREATE TABLE events (
    position INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    stream TEXT NOT NULL,
    revision INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    metadata TEXT NOT NULL,
    recorded_at INTEGER NOT NULL,
    UNIQUE (stream, revision)
  )`;

const rawInsert = (db: Database.Database) =>
  db.prepare('INSERT INTO events (id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)');

/** Baseline: each planned append inserted by hand; single events autocommit, batches in one transaction. */
const runRaw = async (file: string, appends: readonly PlannedAppend[]): Promise<{ ms: number; rows: number }> => {
  const db = openRawDb(file);
  db.pragma('synchronous = FULL');
  try {
    db.exec(RAW_SCHEMA);
    const insert = rawInsert(db);
    const insertAll = (a: PlannedAppend) => {
      const now = Date.now();
      let revision = a.firstRevision;
      for (const e of a.events) {
        insert.run(e.id, a.stream, revision++, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata ?? {}), now);
      }
    };
    const batch = db.transaction(insertAll);
    const single = appends.every((a) => a.events.length === 1);
    const { ms } = await timeMs(() => {
      if (single) for (const a of appends) insertAll(a);
      else for (const a of appends) batch(a);
    });
    const rows = (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
    return { ms, rows };
  } finally {
    db.close();
  }
};

/** The store under test; returns how many append results disagreed with the planned revisions. */
const runStore = async (file: string, appends: readonly PlannedAppend[]) => {
  const store = openSqliteEventStore(file);
  try {
    let wrongResults = 0;
    const { ms } = await timeMs(async () => {
      for (const a of appends) {
        const r = await store.append(a.stream, a.events, a.expected);
        if (r.revision !== a.firstRevision + a.events.length - 1) wrongResults++;
      }
    });
    const head = await store.headPosition();
    return { ms, wrongResults, head };
  } finally {
    await store.close();
  }
};

/** Counts what actually landed in the store's file, independently of the store. */
const inspect = (file: string) => {
  const db = openRawDb(file);
  try {
    return db
      .prepare(
        `SELECT COUNT(*) AS rows, COUNT(DISTINCT stream) AS streams, COALESCE(SUM(revision <> expected), 0) AS misnumbered
         FROM (SELECT stream, revision, ROW_NUMBER() OVER (PARTITION BY stream ORDER BY position) - 1 AS expected FROM events)`,
      )
      .get() as { rows: number; streams: number; misnumbered: number };
  } finally {
    db.close();
  }
};

const avgDataBytes = (appends: readonly PlannedAppend[]): number => {
  let bytes = 0;
  let n = 0;
  for (const a of appends) for (const e of a.events) (bytes += Buffer.byteLength(JSON.stringify(e.data))), n++;
  return Math.round(bytes / n);
};

/** Store runs per workload; the baseline runs before, between and after them (B S B S B). */
const ROUNDS = 2;

const compare = async (label: string, dir: string, appends: readonly PlannedAppend[]) => {
  const events = appends.reduce((n, a) => n + a.events.length, 0);
  const streams = new Set(appends.map((a) => a.stream)).size;
  const raws: { ms: number; rows: number }[] = [];
  const stores: { ms: number; wrongResults: number; head: number; landed: ReturnType<typeof inspect> }[] = [];
  const baseline = async () => {
    const file = join(dir, `${label}-raw.db`);
    const raw = await runRaw(file, appends);
    removeDb(file);
    raws.push(raw);
    progress(`appends/${label}: raw   ${formatRate(perSecond(events, raw.ms))}`);
  };
  await baseline();
  for (let pass = 0; pass < ROUNDS; pass++) {
    const file = join(dir, `${label}-store.db`);
    const run = await runStore(file, appends);
    stores.push({ ...run, landed: inspect(file) });
    removeDb(file);
    progress(`appends/${label}: store ${formatRate(perSecond(events, run.ms))}`);
    await baseline();
  }

  const verification = {
    expectedEvents: events,
    expectedStreams: streams,
    storeRuns: stores.map((s) => ({
      storedEvents: s.landed.rows,
      headPosition: s.head,
      storedStreams: s.landed.streams,
      misnumberedRevisions: s.landed.misnumbered,
      appendResultsWithWrongRevision: s.wrongResults,
    })),
    baselineRows: raws.map((r) => r.rows),
  };
  const ok =
    stores.every(
      (s) => s.landed.rows === events && s.head === events && s.landed.streams === streams && s.landed.misnumbered === 0 && s.wrongResults === 0,
    ) && raws.every((r) => r.rows === events);
  const storeRates = stores.map((s) => perSecond(events, s.ms));
  const rawRates = raws.map((r) => perSecond(events, r.ms));
  const store = summarize(storeRates);
  const raw = summarize(rawRates);
  return {
    ok,
    events,
    appendCalls: appends.length,
    eventsPerAppend: appends[0]!.events.length,
    streams,
    avgDataBytes: avgDataBytes(appends),
    store: {
      eventsPerSec: store.mean,
      spreadPct: store.spreadPct,
      runs: stores.map((s, i) => ({ ms: round(s.ms, 1), eventsPerSec: storeRates[i] })),
    },
    baseline: {
      what:
        appends[0]!.events.length === 1
          ? 'raw better-sqlite3: one autocommitted INSERT (= one transaction) per event'
          : 'raw better-sqlite3: one transaction of INSERTs per batch',
      eventsPerSec: raw.mean,
      spreadPct: raw.spreadPct,
      runs: raws.map((r, i) => ({ ms: round(r.ms, 1), eventsPerSec: rawRates[i] })),
    },
    ratio: round(store.mean / raw.mean),
    verification,
  };
};

export const appends: Benchmark = {
  name: 'appends',
  description:
    'SqliteEventStore.append (exact expected revisions) vs raw better-sqlite3 inserts into a table of the same shape, same pragmas, same payloads',
  async run(scale: number): Promise<BenchmarkResult> {
    const singles = Math.max(100, Math.round(20_000 * scale));
    const batches = Math.max(10, Math.round(500 * scale));
    return withTempDir('appends', async (dir) => {
      // Warm the JIT on both code paths with a throwaway workload before anything is timed.
      progress('appends: warm-up');
      const warm = plan(1, 2_000, 1, 100);
      await runRaw(join(dir, 'warm-raw.db'), warm);
      await runStore(join(dir, 'warm-store.db'), warm);
      const warmBatches = plan(2, 20, 100, 10);
      await runRaw(join(dir, 'warm-raw-b.db'), warmBatches);
      await runStore(join(dir, 'warm-store-b.db'), warmBatches);

      const single = await compare('single', dir, plan(42, singles, 1, 1_000));
      const batch = await compare('batch', dir, plan(43, batches, 100, 100));
      const targets = { singleEventRatio: { min: TARGET_SINGLE_RATIO, actual: single.ratio, met: single.ratio >= TARGET_SINGLE_RATIO } };
      return {
        ok: single.ok && batch.ok,
        meetsTarget: targets.singleEventRatio.met,
        pragmas: 'journal_mode=WAL, synchronous=FULL (both sides: the event store acknowledges an append once it is on disk)',
        baselineSchema:
          'events(position INTEGER PRIMARY KEY, id UNIQUE, stream, revision, type, data, metadata, recorded_at, UNIQUE(stream, revision)); the store additionally maintains indexes on (recorded_at) and (type, position)',
        singleEvent: single,
        batch100: batch,
        targets,
      };
    });
  },
};
