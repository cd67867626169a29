/**
 * A projection folded one stream at a time (Projector.byStream, the objects projection) is rebuilt
 * from nothing stream by stream where the event store reads that way: it never reads a folded
 * document back, whatever its cache, and builds what a fold in log order builds, including the
 * events appended while it read and after a stop.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore, type SqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import type { EventStore, ReadByStreamOptions, RecordedEvent } from '../../src/events/event-store.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { objectsProjector } from '../../src/projections/objects-projector.ts';
import { collectionFold } from '../../src/projections/reporting/collection-fold.ts';
import { loadCollections } from '../../src/app/load-collections.ts';
import { snapshotSpec, withSnapshots } from '../../src/projections/reporting/snapshots.ts';
import { helpRebuild, rebuildProjections, type RebuildProgress } from '../../src/projections/rebuild.ts';
import { linkedShares } from '../../src/projections/stream-share.ts';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { seededRandom } from '../../bench/support.ts';
import { changed, created, deleted, link, schema, text, undeleted } from './object-events.ts';
import { tempDir } from '../support/tmp.ts';
import type { GivenEvent } from '../support/projection-spec.ts';

const test = suite('Rebuild by stream');

const collectionsFile = new URL('../../config/collections.json', import.meta.url).pathname;
const decode = eventDecoder(domainCodecs);

const departments = Array.from({ length: 6 }, (_, i) => `dept${String(i).padStart(8, '0')}`);
const people = Array.from({ length: 120 }, (_, i) => `pers${String(i).padStart(8, '0')}`);

/** People linked to departments, then changes, link moves, deletions and undeletions, interleaved. */
const history = (seed: number, count: number, from = 0): GivenEvent[] => {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const ref = pick(people);
    const k = random();
    if (k < 0.35) return changed(ref, { 'svc:attribute:job-title': [text(`Job ${from + i} ${'x'.repeat(Math.floor(random() * 150))}`)] });
    if (k < 0.65) return changed(ref, { 'svc:attribute:department': [link(pick(departments)), ...(random() < 0.5 ? [link(pick(departments))] : [])] });
    if (k < 0.9) return changed(ref, { 'dc:attribute:title': [text(`Person renamed ${from + i}`)] });
    if (k < 0.95) return deleted(ref);
    return undeleted(ref);
  });
};

const start = (): GivenEvent[] => [
  ...departments.map((ref, i) => created(ref, 'svc:type:department', { 'dc:attribute:title': [text(`Department ${i}`)] })),
  ...people.map((ref, i) => created(ref, 'svc:type:person', { 'dc:attribute:title': [text(`Person ${i}`)], 'svc:attribute:department': [link(departments[i % 6]!)] }, ['svc:label:common'])),
];

const append = async (events: EventStore, given: readonly GivenEvent[]) => {
  for (const e of given) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
};

const objects = (): Projector => objectsProjector(decode);
/** The objects projection and the app's collection folds (snapshots every 200 positions). */
const objectsAndFolds = (): Projector[] => [objects(), ...loadCollections(collectionsFile, schema).map((c) => withSnapshots(collectionFold(c, schema, decode), 200))];

/** Counts the documents read back from the rebuild's own copies. */
const countingGets = (reads: SqliteReadStore) => {
  const counter = { gets: 0 };
  const get = reads.get.bind(reads);
  reads.get = ((collection: string, id: string) => {
    if (collection.endsWith('__rebuild')) counter.gets++;
    return get(collection, id);
  }) as SqliteReadStore['get'];
  return counter;
};

const dump = async (reads: SqliteReadStore, projectors: readonly Projector[]) => {
  const out: Record<string, unknown[]> = {};
  for (const p of projectors) for (const c of p.collections) out[c.name] = await reads.find(c.name, { sort: [['id', 'asc']] });
  return out;
};

/** The read models a rebuild with everything in memory, reading in log order, makes of `events`. */
const inLogOrder = async (dir: string, events: EventStore, projectors: () => Projector[]) => {
  const reads = openSqliteReadStore(join(dir, `log-order-${Math.random()}.db`));
  try {
    await reads.ensureCollection(snapshotSpec);
    // Without readByStream the rebuild reads the log in order.
    const logOrder: EventStore = Object.assign(Object.create(events), { readByStream: undefined });
    const p = await rebuildProjections({ events: logOrder, reads, projectors: projectors(), batchSize: 50 });
    assert.is(p.phase, 'done');
    return await dump(reads, projectors());
  } finally {
    await reads.close();
  }
};

/** `events`, appending `late` once the first event is read by stream. */
const appendingWhileRead = (events: SqliteEventStore, late: readonly GivenEvent[]) => {
  let appended = false;
  const store: EventStore = Object.assign(Object.create(events), {
    async *readByStream(options: ReadByStreamOptions): AsyncIterable<RecordedEvent> {
      for await (const e of events.readByStream(options)) {
        if (!appended) {
          appended = true;
          await append(events, late);
        }
        yield e;
      }
    },
  });
  return { store, appended: () => appended };
};

const withStore = async (run: (dir: string, events: SqliteEventStore) => Promise<void>) => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  try {
    await run(tmp.dir, events);
  } finally {
    await events.close();
    tmp.remove();
  }
};

test('the objects projection rebuilt from nothing reads no document back, with a cache far smaller than its state', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(5, 1500)]);
    const expected = await inLogOrder(dir, events, () => [objects()]);
    assert.ok((expected['objects'] ?? []).length === 126 && (expected['object_links'] ?? []).length > 120, 'objects and links were made');
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      const gets = countingGets(reads);
      const reports: RebuildProgress[] = [];
      const p = await rebuildProjections({ events, reads, projectors: [objects()], batchSize: 50, cacheBytes: 4 * 1024, onProgress: (r) => reports.push(r) });
      assert.is(p.phase, 'done');
      assert.is(gets.gets, 0);
      // Progress moves while the streams are read (positions are dense where a store reads by stream): a bar does not sit at 0%.
      const head = await events.headPosition();
      const building = reports.filter((r) => r.phase === 'building').map((r) => r.position);
      assert.ok(building.filter((x) => x > 0 && x < head).length >= 10, `positions reported while building: ${building.join(' ')}`);
      assert.equal(building, [...building].sort((a, b) => a - b));
      assert.equal(await dump(reads, [objects()]), expected);
      assert.is((await reads.getCheckpoint('objects'))?.position, await events.headPosition());
    } finally {
      await reads.close();
    }
  });
});

test('beside folds read in log order, and with events appended while the streams are read', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(7, 900)]);
    const projectors = objectsAndFolds;
    // Appended once the stream-by-stream read has begun: past the position it reads to.
    const { store: appending, appended } = appendingWhileRead(events, history(8, 120, 900));
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      await reads.ensureCollection(snapshotSpec);
      const p = await rebuildProjections({ events: appending, reads, projectors: projectors(), batchSize: 50, cacheBytes: 16 * 1024 });
      assert.ok(appended());
      assert.is(p.phase, 'done');
      const head = await events.headPosition();
      assert.is(p.position, head);
      for (const projector of projectors()) assert.is((await reads.getCheckpoint(projector.name))?.position, head, projector.name);
      assert.equal(await dump(reads, projectors()), await inLogOrder(dir, events, projectors));
    } finally {
      await reads.close();
    }
  });
});

test('stopped while reading by stream, the next run starts the projection over and builds the same', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(9, 1200)]);
    const expected = await inLogOrder(dir, events, () => [objects()]);
    const stop = new AbortController();
    let read = 0;
    const stopping: EventStore = Object.assign(Object.create(events), {
      async *readByStream(options: ReadByStreamOptions): AsyncIterable<RecordedEvent> {
        for await (const e of events.readByStream(options)) {
          if (++read === 700) stop.abort();
          yield e;
        }
      },
    });
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      const reports: RebuildProgress[] = [];
      const first = await rebuildProjections({ events: stopping, reads, projectors: [objects()], signal: stop.signal, resumeAfterStop: true, batchSize: 100, cacheBytes: 4 * 1024, onProgress: (p) => reports.push(p) });
      assert.is(first.phase, 'interrupted');
      assert.ok(read < 1326, `stopped after ${read} of 1326 events`);
      // Nothing the stopped run wrote passes for a finished part.
      assert.is(await reads.getCheckpoint('rebuild:objects'), null);
      const second = await rebuildProjections({ events, reads, projectors: [objects()], cacheBytes: 4 * 1024 });
      assert.is(second.phase, 'done');
      assert.equal(await dump(reads, [objects()]), expected);
    } finally {
      await reads.close();
    }
  });
});

/** Records the ranges of streams read by stream, and how many events each read gave. */
const recordingRanges = (events: EventStore, reads: { range: string; events: number; streams: Set<string> }[] = []) => {
  const store: EventStore = Object.assign(Object.create(events), {
    async *readByStream(options: ReadByStreamOptions): AsyncIterable<RecordedEvent> {
      const read = { range: `${options.from ?? ''}..${options.before ?? ''}`, events: 0, streams: new Set<string>() };
      reads.push(read);
      for await (const e of events.readByStream!(options)) {
        read.events++;
        read.streams.add(e.stream);
        yield e;
      }
    },
  });
  return { store, reads };
};

test('streams shared with a helper: both take parts of them, and together they build what one fold builds', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(11, 1500)]);
    const expected = await inLogOrder(dir, events, () => [objects()]);
    const all: { range: string; events: number; streams: Set<string> }[] = [];
    const byOwner = recordingRanges(events, all);
    const byHelper = recordingRanges(events, all);
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      const { owner, helpers } = linkedShares('objects', 1);
      // The owner waits for every part before it commits: both run at once, as two workers do.
      const [p, helped] = await Promise.all([
        rebuildProjections({ events: byOwner.store, reads, projectors: [objects()], batchSize: 50, cacheBytes: 4 * 1024, share: owner, owner: 'both' }),
        helpRebuild({ events: byHelper.store, reads, projector: objects(), share: helpers[0]!, owner: 'both', batchSize: 50 }),
      ]);
      assert.is(p.phase, 'done');
      assert.ok(helped);
      // Eight parts (four a worker) of 126 streams of 1 to 40 events, each read once, by one or the other.
      assert.is(all.length, 8);
      assert.ok(byOwner.reads.length > 0 && byHelper.reads.length > 0, `owner ${byOwner.reads.length} parts, helper ${byHelper.reads.length}`);
      assert.is(all.reduce((n, r) => n + r.events, 0), 1626);
      for (const r of all) assert.ok(r.events > 1626 / 8 - 45 && r.events < 1626 / 8 + 45, `a part of ${r.events} events`);
      const streams = all.flatMap((r) => [...r.streams]);
      assert.is(new Set(streams).size, streams.length);
      assert.equal(await dump(reads, [objects()]), expected);
      assert.is((await reads.getCheckpoint('objects'))?.position, await events.headPosition());
    } finally {
      await reads.close();
    }
  });
});

test('streams shared: the owner folds its own projections first, its parts after, then what came since for the shared one', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(15, 900)]);
    const projectors = objectsAndFolds;
    // Appended once the first part is read: past the position the parts are read to.
    const { store: appending, appended } = appendingWhileRead(events, history(16, 120, 900));
    const order: string[] = [];
    const recording: EventStore = Object.assign(Object.create(appending), {
      async *readAll(options: Parameters<EventStore['readAll']>[0]): AsyncIterable<RecordedEvent> {
        if (order.at(-1) !== 'log') order.push('log');
        yield* appending.readAll(options);
      },
      async *readByStream(options: ReadByStreamOptions): AsyncIterable<RecordedEvent> {
        order.push('part');
        yield* appending.readByStream!(options);
      },
    });
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      await reads.ensureCollection(snapshotSpec);
      // Its helper is busy with projections of its own throughout: the owner takes every part itself.
      const { owner } = linkedShares('objects', 1);
      const p = await rebuildProjections({ events: recording, reads, projectors: projectors(), batchSize: 50, cacheBytes: 16 * 1024, share: owner, owner: 'both' });
      assert.ok(appended());
      assert.is(p.phase, 'done');
      // The log for the collection folds, then the eight parts, then the log again from where the parts were read to.
      assert.equal(order, ['log', ...Array(8).fill('part'), 'log']);
      // Each is switched in where it was folded to: the collection folds where the log ended when they
      // read it, the objects projection past the events appended while its parts were read.
      const head = await events.headPosition();
      assert.is(head, 1026 + 120);
      assert.is((await reads.getCheckpoint('objects'))?.position, head);
      for (const projector of projectors().slice(1)) assert.is((await reads.getCheckpoint(projector.name))?.position, 1026, projector.name);
      assert.equal(await dump(reads, [objects()]), await inLogOrder(dir, events, () => [objects()]));
    } finally {
      await reads.close();
    }
  });
});

test('streams shared: the owner commits nothing until the part its helper took is written', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(12, 600)]);
    const expected = await inLogOrder(dir, events, () => [objects()]);
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      const { owner, helpers } = linkedShares('objects', 1);
      const stop = new AbortController();
      // The helper asks first, and gets a part it then sits on.
      const taken = helpers[0]!.take();
      const ownerRun = rebuildProjections({ events, reads, projectors: [objects()], batchSize: 50, share: owner, owner: 'both', signal: stop.signal, resumeAfterStop: true });
      assert.ok((await taken) !== null, 'a part was offered');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.is(await reads.getCheckpoint('rebuild:objects'), null);
      assert.is(await reads.getCheckpoint('objects'), null);
      // Stopped while it waits: interrupted, still without a checkpoint, and the next run starts over.
      stop.abort();
      assert.is((await ownerRun).phase, 'interrupted');
      assert.is(await reads.getCheckpoint('rebuild:objects'), null);
      const again = await rebuildProjections({ events, reads, projectors: [objects()], batchSize: 50 });
      assert.is(again.phase, 'done');
      assert.equal(await dump(reads, [objects()]), expected);
    } finally {
      await reads.close();
    }
  });
});

test('streams shared: a helper that fails fails the owner\'s rebuild, which switches nothing in', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(13, 600)]);
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      const { owner, helpers } = linkedShares('objects', 1);
      const failing: EventStore = Object.assign(Object.create(events), {
        // eslint-disable-next-line require-yield
        async *readByStream(): AsyncIterable<RecordedEvent> {
          throw new Error('disk gone');
        },
      });
      const [p, h] = await Promise.allSettled([
        rebuildProjections({ events, reads, projectors: [objects()], batchSize: 50, share: owner, owner: 'both' }),
        helpRebuild({ events: failing, reads, projector: objects(), share: helpers[0]!, owner: 'both' }),
      ]);
      assert.is(h.status, 'rejected');
      assert.is(p.status, 'rejected');
      assert.match(((p as PromiseRejectedResult).reason as Error).message, /disk gone/);
      assert.is(await reads.getCheckpoint('objects'), null);
      assert.is(await reads.getCheckpoint('rebuild:objects'), null);
    } finally {
      await reads.close();
    }
  });
});

test('streams shared, but the projection is resumed in log order: its helpers are given no part and go on', async () => {
  await withStore(async (dir, events) => {
    await append(events, [...start(), ...history(14, 300)]);
    const reads = openSqliteReadStore(join(dir, 'read.db'));
    try {
      // Without readByStream (an engine that reads in log order only) nothing is folded by stream.
      const logOrder: EventStore = Object.assign(Object.create(events), { readByStream: undefined });
      const { owner, helpers } = linkedShares('objects', 1);
      const [p, helped] = await Promise.all([
        rebuildProjections({ events: logOrder, reads, projectors: [objects()], share: owner }),
        helpRebuild({ events: logOrder, reads, projector: objects(), share: helpers[0]!, owner: 'x' }),
      ]);
      assert.is(p.phase, 'done');
      assert.ok(helped);
      assert.is(await helpers[0]!.take(), null);
    } finally {
      await reads.close();
    }
  });
});

test.run();
