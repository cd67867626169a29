/**
 * A rebuild's memory is bounded by its cacheBytes setting, not by the log: past it, folded
 * documents are committed and the least recently written dropped, read back when needed, and the
 * rebuilt read models are the same as with everything kept in memory.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { objectsProjector } from '../../src/projections/objects-projector.ts';
import { collectionFold } from '../../src/projections/reporting/collection-fold.ts';
import { loadCollections } from '../../src/app/load-collections.ts';
import { BatchDocs } from '../../src/projections/batch-docs.ts';
import { loadSnapshot, SNAPSHOTS, snapshotSpec, withSnapshots } from '../../src/projections/reporting/snapshots.ts';
import { rebuildProjections } from '../../src/projections/rebuild.ts';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { seededRandom } from '../../bench/support.ts';
import { changed, created, link, schema, text } from './object-events.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('Rebuild memory bound');

const collectionsFile = new URL('../../config/collections.json', import.meta.url).pathname;

/** People and departments, then changes to their titles, job titles and departments. */
const history = () => {
  const random = seededRandom(3);
  const departments = Array.from({ length: 6 }, (_, i) => `dept${String(i).padStart(8, '0')}`);
  const people = Array.from({ length: 150 }, (_, i) => `pers${String(i).padStart(8, '0')}`);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return [
    ...departments.map((ref, i) => created(ref, 'svc:type:department', { 'dc:attribute:title': [text(`Department ${i}`)] })),
    ...people.map((ref, i) =>
      created(ref, 'svc:type:person', { 'dc:attribute:title': [text(`Person ${i}`)], 'svc:attribute:department': [link(pick(departments))] }, ['svc:label:common']),
    ),
    ...Array.from({ length: 900 }, (_, i) => {
      const ref = pick(people);
      const k = random();
      if (k < 0.4) return changed(ref, { 'svc:attribute:job-title': [text(`Job ${i} ${'x'.repeat(Math.floor(random() * 200))}`)] });
      if (k < 0.7) return changed(ref, { 'svc:attribute:department': [link(pick(departments))] });
      if (k < 0.95) return changed(ref, { 'dc:attribute:title': [text(`Person renamed ${i}`)] });
      return changed(pick(departments), { 'dc:attribute:title': [text(`Department renamed ${i}`)] });
    }),
  ];
};

/** Counts the documents read from the store (a cache holding the whole state reads none). */
const countingGets = (reads: SqliteReadStore) => {
  const counter = { gets: 0 };
  const get = reads.get.bind(reads);
  reads.get = ((collection: string, id: string) => {
    counter.gets++;
    return get(collection, id);
  }) as SqliteReadStore['get'];
  return counter;
};

const projectorsOf = (): Projector[] => {
  const decode = eventDecoder(domainCodecs);
  return [objectsProjector(decode), ...loadCollections(collectionsFile, schema).map((c) => withSnapshots(collectionFold(c, schema, decode), 200))];
};

/** Every snapshot of every fold, loaded: the state `at` would start from. */
const snapshotStates = async (reads: SqliteReadStore) => {
  const out: Record<string, unknown> = {};
  for (const meta of await reads.find<Parameters<typeof loadSnapshot>[2]>(SNAPSHOTS, { where: { position: { $gt: 0 } }, sort: [['position', 'asc']] })) {
    const state = await loadSnapshot(reads, new Map(), meta);
    out[meta.id] = [...state.collections].map(([name, docs]) => [name, [...docs.values()].sort((a, b) => a.id.localeCompare(b.id))]).sort();
  }
  return out;
};

const dump = async (reads: SqliteReadStore, projectors: readonly Projector[]) => {
  const out: Record<string, unknown[]> = {};
  for (const p of projectors) for (const c of p.collections) out[c.name] = await reads.find(c.name);
  return out;
};

test('a rebuild past its cache bound spills to the store and builds the same read models', async () => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const whole = openSqliteReadStore(join(tmp.dir, 'whole.db'));
  const bounded = openSqliteReadStore(join(tmp.dir, 'bounded.db'));
  try {
    for (const e of history()) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    await whole.ensureCollection(snapshotSpec);
    await bounded.ensureCollection(snapshotSpec);
    const wholeGets = countingGets(whole);
    const boundedGets = countingGets(bounded);
    const projectors = projectorsOf();
    const a = await rebuildProjections({ events, reads: whole, projectors, batchSize: 50 });
    const b = await rebuildProjections({ events, reads: bounded, projectors: projectorsOf(), batchSize: 50, cacheBytes: 8 * 1024 });
    assert.is(a.phase, 'done');
    assert.is(b.phase, 'done');
    // Only the rebuild's own bookkeeping (leases, progress records) reads documents when everything fits.
    const bookkeeping = wholeGets.gets;
    assert.ok(boundedGets.gets > bookkeeping + 100, `bounded rebuild read ${boundedGets.gets} documents back, unbounded ${bookkeeping}`);
    const expected = await dump(whole, projectors);
    assert.ok((expected['rc_people_rows'] ?? []).length > 100, 'the collection has rows');
    assert.equal(await dump(bounded, projectors), expected);
    // Snapshots taken while spilled (read back from the store page by page) hold the same states.
    const snapshots = await snapshotStates(whole);
    assert.ok(Object.keys(snapshots).length >= 10, `${Object.keys(snapshots).length} snapshots`);
    assert.equal(await snapshotStates(bounded), snapshots);
  } finally {
    await events.close();
    await whole.close();
    await bounded.close();
    tmp.remove();
  }
});

test('evicting keeps the documents written last and counts their bytes', async () => {
  const tmp = tempDir();
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  try {
    await reads.ensureCollection({ name: 'c' });
    const docs = new BatchDocs(reads, (c) => c, true);
    for (let i = 0; i < 200; i++) docs.put('c', { id: `d${i}`, text: 'y'.repeat(100) });
    // Rewritten last: survives eviction though created first.
    docs.put('c', { id: 'd0', text: 'z'.repeat(100) });
    const bytes = docs.cachedBytes;
    assert.ok(bytes > 200 * 100 && bytes < 200 * 140, `estimated ${bytes} bytes`);
    assert.throws(() => docs.evict(0), /not written/);
    await reads.commitBatch('p', docs.ops(), null, { position: 1 });
    docs.written();
    docs.evict(bytes / 4);
    assert.ok(docs.cachedBytes <= bytes / 4);
    assert.not.ok(docs.complete);
    assert.ok(docs.size < 60 && docs.size > 40, `${docs.size} kept`);
    // Dropped documents are read back from the store; the last written stayed in memory.
    const reading = countingGets(reads);
    assert.equal(await docs.get('c', 'd0'), { id: 'd0', text: 'z'.repeat(100) });
    assert.is(reading.gets, 0);
    assert.equal(await docs.get('c', 'd1'), { id: 'd1', text: 'y'.repeat(100) });
    assert.is(reading.gets, 1);
  } finally {
    await reads.close();
    tmp.remove();
  }
});

test.run();
