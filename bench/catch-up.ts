/**
 * `catch-up`: a fresh SqliteReadStore + ProjectionRunner folding 200,000 stored events (20,000
 * streams x 10 events) into one document per stream, against a raw better-sqlite3 bulk insert of
 * 200,000 JSON documents in one transaction (same pragmas).
 *
 * Log layout: streams come in waves of 1,000; each wave is appended as 10 appendMany calls of 1,000
 * events (one per stream), so a stream's consecutive events are 1,000 positions apart and a runner
 * batch touches up to min(batchSize, 1,000) different documents — most of them already stored, so
 * they must be read back before being folded (the realistic, uncached case).
 *
 * The projection is verified in full afterwards (every document against the fold computed from the
 * plan, per-status counts through the declared index, the checkpoint): a wrong result => ok: false.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { RecordedEvent, StreamAppend } from '../src/events/event-store.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../src/projections/projector.ts';
import type { Doc } from '../src/projections/read-store.ts';
import { ProjectionRunner, type Logger } from '../src/projections/runner.ts';
import { openSqliteReadStore } from '../src/projections/adapters/sqlite-read-store.ts';
import {
  formatRate,
  openRawDb,
  perSecond,
  progress,
  removeDb,
  round,
  summarize,
  timeMs,
  withTempDir,
  type Benchmark,
  type BenchmarkResult,
} from './support.ts';

const TARGET_EVENTS_PER_SEC = 100_000;
const TARGET_RATIO = 0.3;
const EVENTS_PER_STREAM = 10;
const WAVE = 1_000;
const BATCH_SIZES = [500, 2_000];
/** Timed catch-ups per batch size; the baseline runs before, between and after the rounds. */
const ROUNDS = 2;
const COLLECTION = 'object_summaries';
const STATUSES = ['received', 'validating', 'imported', 'rejected'] as const;
const RECENT = 5;

interface ObjectData {
  readonly name?: string;
  readonly status: string;
  readonly size: number;
}

interface ObjectSummary extends Doc {
  readonly id: string;
  readonly name: string;
  readonly status: string;
  readonly size: number;
  readonly changes: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly lastRevision: number;
  readonly recent: readonly { readonly revision: number; readonly type: string; readonly status: string; readonly size: number }[];
}

/** The event payload of stream `s` at `revision`: a pure function, so the expected fold needs no store. */
const dataOf = (s: number, revision: number): ObjectData =>
  revision === 0
    ? { name: `feed-${s}.csv`, status: STATUSES[0], size: (s * 7919) % 100_000 }
    : { status: STATUSES[(s + revision) % STATUSES.length]!, size: (s * 7919 + revision * 104_729) % 1_000_000 };

const typeOf = (revision: number) => (revision === 0 ? 'ObjectCreated' : 'ObjectUpdated');

/** One document per object: counters, last values and the last few changes. */
const objectSummaries: Projector = {
  name: 'object-summaries',
  collections: [{ name: COLLECTION, indexes: ['status'] }],
  handles: ['ObjectCreated', 'ObjectUpdated'],
  apply: foldDocuments<ObjectSummary>(
    COLLECTION,
    (e) => e.stream,
    (doc, e: RecordedEvent) => {
      const d = e.data as ObjectData;
      const at = e.recordedAt.toISOString();
      return {
        id: e.stream,
        name: d.name ?? doc?.name ?? '',
        status: d.status,
        size: d.size,
        changes: (doc?.changes ?? 0) + 1,
        createdAt: doc?.createdAt ?? at,
        updatedAt: at,
        lastRevision: e.revision,
        recent: [...(doc?.recent ?? []), { revision: e.revision, type: e.type, status: d.status, size: d.size }].slice(-RECENT),
      };
    },
  ),
};

/** What the fold must produce for stream `s`, computed from the plan alone (timestamps excluded). */
const expectedSummary = (stream: string, s: number) => {
  const last = dataOf(s, EVENTS_PER_STREAM - 1);
  return {
    id: stream,
    name: dataOf(s, 0).name!,
    status: last.status,
    size: last.size,
    changes: EVENTS_PER_STREAM,
    lastRevision: EVENTS_PER_STREAM - 1,
    recent: Array.from({ length: RECENT }, (_, i) => {
      const revision = EVENTS_PER_STREAM - RECENT + i;
      const d = dataOf(s, revision);
      return { revision, type: typeOf(revision), status: d.status, size: d.size };
    }),
  };
};

/** Appends the log in calls of WAVE events (not timed). */
const prepareLog = async (store: SqliteEventStore, streams: readonly string[]) => {
  for (let wave = 0; wave < streams.length; wave += WAVE) {
    for (let revision = 0; revision < EVENTS_PER_STREAM; revision++) {
      const appends: StreamAppend[] = [];
      for (let s = wave; s < Math.min(wave + WAVE, streams.length); s++) {
        appends.push({
          stream: streams[s]!,
          expectedRevision: revision === 0 ? 'no_stream' : revision - 1,
          events: [
            {
              id: randomUUID(),
              type: typeOf(revision),
              data: dataOf(s, revision),
              metadata: { correlationId: randomUUID(), actor: 'apikey:feed-importer' },
            },
          ],
        });
      }
      await store.appendMany(appends);
    }
  }
};

/** Baseline: 200,000 documents of the projection's final shape, stringified and inserted in one transaction. */
const rawBulkInsert = async (file: string, docs: readonly ObjectSummary[]) => {
  const db = openRawDb(file);
  try {
    db.exec('CREATE TABLE docs (id TEXT PRIMARY KEY, doc TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO docs (id, doc) VALUES (?, ?)');
    const { ms } = await timeMs(() =>
      db.transaction(() => {
        for (const doc of docs) insert.run(doc.id, JSON.stringify(doc));
      })(),
    );
    const rows = (db.prepare('SELECT COUNT(*) AS n FROM docs').get() as { n: number }).n;
    return { ms, rows, rowsPerSec: perSecond(rows, ms) };
  } finally {
    db.close();
  }
};

const baselineDocs = (count: number): ObjectSummary[] => {
  const at = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const e = expectedSummary(`object-${randomUUID()}`, i);
    return { ...e, createdAt: at, updatedAt: at };
  });
};

/** Throws as soon as the runner reports a failed batch, instead of waiting for waitFor's timeout. */
const failFastLogger = () => {
  let fail: (e: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  const logger: Logger = {
    info: () => undefined,
    warn: () => undefined,
    error: (obj) => fail(new Error(`projection failed: ${JSON.stringify(obj)}`)),
  };
  return { logger, failed };
};

const catchUpOnce = async (dir: string, events: SqliteEventStore, head: number, batchSize: number, streams: readonly string[]) => {
  const file = join(dir, `read-${batchSize}.db`);
  const reads = openSqliteReadStore(file);
  try {
    const { logger, failed } = failFastLogger();
    const runner = new ProjectionRunner({ events, reads, projectors: [objectSummaries], batchSize, logger });
    let ms: number;
    try {
      ({ ms } = await timeMs(async () => {
        await runner.start();
        await Promise.race([runner.waitFor(head, { timeoutMs: 600_000 }), failed]);
      }));
    } finally {
      await runner.stop();
    }
    return { ms, eventsPerSec: perSecond(head, ms), verification: await verify(reads, streams, head) };
  } finally {
    await reads.close();
    removeDb(file);
  }
};

/** Every document against the expected fold, per-status counts through the index, the checkpoint. */
const verify = async (reads: ReturnType<typeof openSqliteReadStore>, streams: readonly string[], head: number) => {
  const documents = await reads.count(COLLECTION);
  const all = await reads.find<ObjectSummary>(COLLECTION);
  const byId = new Map(all.map((d) => [d.id, d]));
  let wrongDocuments = 0;
  let firstWrong: string | undefined;
  const expectedByStatus = new Map<string, number>();
  streams.forEach((stream, s) => {
    const expected = expectedSummary(stream, s);
    expectedByStatus.set(expected.status, (expectedByStatus.get(expected.status) ?? 0) + 1);
    const doc = byId.get(stream);
    const { createdAt, updatedAt, ...rest } = doc ?? ({} as Partial<ObjectSummary>);
    const right =
      doc !== undefined &&
      JSON.stringify(rest) === JSON.stringify(expected) &&
      typeof createdAt === 'string' &&
      typeof updatedAt === 'string' &&
      createdAt <= updatedAt;
    if (!right) {
      wrongDocuments++;
      firstWrong ??= stream;
    }
  });
  const statusCounts: Record<string, { expected: number; viaIndex: number }> = {};
  for (const status of STATUSES) {
    statusCounts[status] = { expected: expectedByStatus.get(status) ?? 0, viaIndex: await reads.count(COLLECTION, { where: { status } }) };
  }
  const checkpoint = (await reads.getCheckpoint(objectSummaries.name))?.position ?? 0;
  const sampleStream = streams[Math.floor(streams.length / 2)]!;
  const sample = byId.get(sampleStream);
  const ok =
    documents === streams.length &&
    all.length === streams.length &&
    wrongDocuments === 0 &&
    Object.values(statusCounts).every((c) => c.expected === c.viaIndex) &&
    checkpoint === head;
  return {
    ok,
    documents,
    expectedDocuments: streams.length,
    wrongDocuments,
    ...(firstWrong ? { firstWrong, firstWrongDoc: byId.get(firstWrong) ?? null } : {}),
    sample: { id: sampleStream, changes: sample?.changes ?? null, expectedChanges: EVENTS_PER_STREAM },
    statusCounts,
    checkpoint,
    head,
  };
};

export const catchUp: Benchmark = {
  name: 'catch-up',
  description:
    'ProjectionRunner + SqliteReadStore catching up a foldDocuments projection (one doc per stream) vs a raw one-transaction bulk insert of as many JSON documents',
  async run(scale: number): Promise<BenchmarkResult> {
    const streamCount = Math.max(WAVE, Math.round((20_000 * scale) / WAVE) * WAVE);
    const streams = Array.from({ length: streamCount }, () => `object-${randomUUID()}`);
    return withTempDir('catch-up', async (dir) => {
      const events = openSqliteEventStore(join(dir, 'events.db'));
      try {
        progress(`catch-up: preparing ${streamCount * EVENTS_PER_STREAM} events over ${streamCount} streams`);
        const prep = await timeMs(() => prepareLog(events, streams));
        const head = await events.headPosition();
        progress(`catch-up: prepared in ${(prep.ms / 1000).toFixed(1)} s (head ${head})`);

        const docs = baselineDocs(head);
        const baselineRuns: Awaited<ReturnType<typeof rawBulkInsert>>[] = [];
        const baseline = async () => {
          const file = join(dir, 'raw.db');
          const run = await rawBulkInsert(file, docs);
          removeDb(file);
          baselineRuns.push(run);
          progress(`catch-up: raw bulk insert ${formatRate(run.rowsPerSec)}`);
        };
        // B, every batch size, B, every batch size, B: the baseline brackets each round of runs.
        const runs = new Map<number, Awaited<ReturnType<typeof catchUpOnce>>[]>(BATCH_SIZES.map((b) => [b, []]));
        await baseline();
        for (let pass = 0; pass < ROUNDS; pass++) {
          for (const batchSize of BATCH_SIZES) {
            const run = await catchUpOnce(dir, events, head, batchSize, streams);
            progress(`catch-up: batchSize ${batchSize}: ${formatRate(run.eventsPerSec)} (verified: ${run.verification.ok})`);
            runs.get(batchSize)!.push(run);
          }
          await baseline();
        }

        const raw = summarize(baselineRuns.map((r) => r.rowsPerSec));
        const byBatchSize = BATCH_SIZES.map((batchSize) => {
          const these = runs.get(batchSize)!;
          const rate = summarize(these.map((r) => r.eventsPerSec));
          const ratio = round(rate.mean / raw.mean);
          return {
            batchSize,
            eventsPerSec: rate.mean,
            spreadPct: rate.spreadPct,
            ratio,
            meetsTarget: rate.mean >= TARGET_EVENTS_PER_SEC && ratio >= TARGET_RATIO,
            runs: these.map((r) => ({ ms: round(r.ms, 1), eventsPerSec: r.eventsPerSec, verified: r.verification.ok })),
            verification: these.find((r) => !r.verification.ok)?.verification ?? these[0]!.verification,
          };
        });
        const best = byBatchSize.reduce((a, b) => (b.eventsPerSec > a.eventsPerSec ? b : a));
        const ok = [...runs.values()].flat().every((r) => r.verification.ok) && baselineRuns.every((r) => r.rows === head);
        const targets = {
          judgedOn: `best batch size (${best.batchSize}); per batch size see byBatchSize[].meetsTarget`,
          eventsPerSec: { min: TARGET_EVENTS_PER_SEC, actual: best.eventsPerSec, met: best.eventsPerSec >= TARGET_EVENTS_PER_SEC },
          ratio: { min: TARGET_RATIO, actual: best.ratio, met: best.ratio >= TARGET_RATIO },
        };
        return {
          ok,
          meetsTarget: targets.eventsPerSec.met && targets.ratio.met,
          events: head,
          streams: streamCount,
          eventsPerStream: EVENTS_PER_STREAM,
          layout: `waves of ${WAVE} streams, each appended as ${EVENTS_PER_STREAM} appendMany calls of one event per stream`,
          prepareMs: round(prep.ms, 0),
          projection: `foldDocuments into ${COLLECTION} (one doc per stream, index on status), handles ObjectCreated/ObjectUpdated`,
          byBatchSize,
          baseline: {
            what: 'raw better-sqlite3: one transaction inserting as many rows (id TEXT PRIMARY KEY, doc TEXT) as there are events, docs of the projection\'s final shape, JSON.stringify in the loop, same pragmas',
            avgDocBytes: Math.round(docs.reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0) / docs.length),
            rowsPerSec: raw.mean,
            spreadPct: raw.spreadPct,
            runs: baselineRuns.map((r) => ({ ms: round(r.ms, 1), rowsPerSec: r.rowsPerSec, rows: r.rows })),
          },
          targets,
        };
      } finally {
        await events.close();
      }
    });
  },
};
