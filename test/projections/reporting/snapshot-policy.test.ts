/**
 * How dense a rebuild's snapshots are: during a rebuild from the start the deltas on a full copy
 * may add up to three times its documents before the next full copy (live: once), so a growing
 * fold is copied whole less often; every snapshot still loads to the fold's state at its position.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { eventDecoder } from '../../../src/events/decode.ts';
import { domainCodecs } from '../../../src/events/codecs.ts';
import { collectionFold, collectionNames } from '../../../src/projections/reporting/collection-fold.ts';
import type { EventStore } from '../../../src/events/event-store.ts';
import type { ReadStore } from '../../../src/projections/read-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import { loadCollections } from '../../../src/app/load-collections.ts';
import { chunkEntries, type StoredChunk } from '../../../src/projections/reporting/snapshot-chunks.ts';
import { loadSnapshot, SNAPSHOTS, snapshotSpec, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { rebuildProjections } from '../../../src/projections/rebuild.ts';
import { openSqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { seededRandom } from '../../../bench/support.ts';
import { changed, created, link, schema, text } from '../object-events.ts';
import { tempDir } from '../../support/tmp.ts';

const test = suite('Snapshot density during a rebuild');

const collectionsFile = new URL('../../../config/collections.json', import.meta.url).pathname;

/** People created all along (the fold's state grows), their departments and titles changed in between. */
const history = () => {
  const random = seededRandom(11);
  const departments = Array.from({ length: 4 }, (_, i) => `dept${String(i).padStart(8, '0')}`);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const people: string[] = [];
  // 1,200 events in all: the last snapshot is taken at the head.
  const out = departments.map((ref, i) => created(ref, 'svc:type:department', { 'dc:attribute:title': [text(`Department ${i}`)] }));
  for (let i = 0; i < 1196; i++) {
    if (people.length === 0 || random() < 0.35) {
      const ref = `pers${String(people.length).padStart(8, '0')}`;
      people.push(ref);
      out.push(created(ref, 'svc:type:person', { 'dc:attribute:title': [text(`Person ${i}`)], 'svc:attribute:department': [link(pick(departments))] }, ['svc:label:common']));
    } else if (random() < 0.5) out.push(changed(pick(people), { 'svc:attribute:department': [link(pick(departments))] }));
    else out.push(changed(pick(people), { 'dc:attribute:title': [text(`Person renamed ${i}`)] }));
  }
  return out;
};

type Meta = { id: string; collection: string; position: number; chunks: number; chain: string[] };

interface Rebuilt {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly fold: Projector;
  /** Every snapshot meta, oldest first. */
  readonly metas: readonly Meta[];
  /** Entries a snapshot holds. */
  entries(m: Meta): Promise<number>;
  /** The deltas on a full copy, oldest first, and the entries they add up to. */
  deltasOn(full: Meta): Promise<{ readonly chain: readonly Meta[]; readonly entries: number }>;
}

/** `history` appended, the people fold rebuilt from it with a snapshot every `interval` positions, then `check` run on what it wrote. */
const rebuilt = async (history: ReturnType<typeof changed>[], interval: number, batchSize: number, check: (r: Rebuilt) => Promise<void>) => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  try {
    for (const e of history) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    await reads.ensureCollection(snapshotSpec);
    const people = loadCollections(collectionsFile, schema).find((c) => c.name === 'people')!;
    const fold = withSnapshots(collectionFold(people, schema, eventDecoder(domainCodecs)), interval);
    assert.is((await rebuildProjections({ events, reads, projectors: [fold], batchSize })).phase, 'done');

    const all = await reads.find<Meta & Partial<StoredChunk>>(SNAPSHOTS);
    const metas = all.filter((d) => Array.isArray(d.chain)).sort((a, b) => a.position - b.position);
    const entries = async (m: Meta) => {
      let n = 0;
      for (let i = 0; i < m.chunks; i++) n += (await chunkEntries(all.find((d) => d.id === `${m.id}#${i}`) as StoredChunk)).length;
      return n;
    };
    const deltasOn = async (full: Meta) => {
      const chain = metas.filter((m) => m.chain.length > 1 && m.chain[0] === full.id);
      let n = 0;
      for (const m of chain) n += await entries(m);
      return { chain, entries: n };
    };
    await check({ events, reads, fold, metas, entries, deltasOn });
  } finally {
    await events.close();
    await reads.close();
    tmp.remove();
  }
};

test('a growing fold rebuilt: deltas up to three times the full copy they build on, every snapshot loads to the folded state', () =>
  rebuilt(history(), 50, 25, async ({ events, reads, fold, metas, entries, deltasOn }) => {
    const fulls = metas.filter((m) => m.chain.length === 1);
    assert.ok(metas.length >= 20, `${metas.length} snapshots`);
    assert.ok(fulls.length >= 2, `${fulls.length} full copies`);
    // Deltas on each full copy, against its documents: beyond once (the live bound) but within three times (and one delta more).
    let most = 0;
    for (const full of fulls) {
      const base = await entries(full);
      const { chain, entries: deltas } = await deltasOn(full);
      const lastDelta = chain.length > 0 ? await entries(chain[chain.length - 1]!) : 0;
      assert.ok(deltas - lastDelta <= 3 * base, `${deltas} delta entries on ${base}`);
      most = Math.max(most, deltas / base);
    }
    assert.ok(most > 1, `deltas at most ${most.toFixed(2)} times their full copy`);

    // The newest snapshot (at the head) loads to the rebuilt collections; the dependents, left out
    // of snapshots, are made again from the rows (their lists in another order, which means nothing).
    const newest = metas[metas.length - 1]!;
    assert.is(newest.position, await events.headPosition());
    const state = await loadSnapshot(reads, new Map(), newest as never, fold.derived);
    const derived = new Set(fold.derived!.collections);
    const normal = (docs: Iterable<{ id: string; rows?: string[] }>, name: string) =>
      [...docs].map((d) => (derived.has(name) ? { ...d, rows: [...d.rows!].sort() } : d)).sort((a, b) => a.id.localeCompare(b.id));
    for (const spec of fold.collections) {
      const stored = await reads.find<{ id: string }>(spec.name);
      assert.ok(stored.length > 0, spec.name);
      assert.equal(normal(state.collections.get(spec.name)?.values() ?? [], spec.name), normal(stored, spec.name), spec.name);
    }
  }));

/**
 * A fold whose state stops growing (every person created first, then only renamed), snapshotted
 * often: each delta is a few documents, so sixty-four of them add up to less than half the state.
 */
const steadyHistory = () => {
  const random = seededRandom(5);
  const people = Array.from({ length: 900 }, (_, i) => `pers${String(i).padStart(8, '0')}`);
  const out = [created('dept00000000', 'svc:type:department', { 'dc:attribute:title': [text('Department')] })];
  // 2,500 events in all: the last snapshot is taken at the head.
  for (const ref of people) out.push(created(ref, 'svc:type:person', { 'dc:attribute:title': [text(ref)], 'svc:attribute:department': [link('dept00000000')] }, ['svc:label:common']));
  for (let i = 0; i < 1599; i++) out.push(changed(people[Math.floor(random() * people.length)]!, { 'dc:attribute:title': [text(`Renamed ${i}`)] }));
  return out;
};

test('a full copy is written only once the deltas on the one before add up to half its documents: what snapshots take grows with the log, not with the log times the state', () =>
  rebuilt(steadyHistory(), 5, 5, async ({ events, reads, fold, metas, entries, deltasOn }) => {
    // The full copies taken once every person is created (position 901 on), each against the deltas on the one before it.
    const fulls = metas.filter((m) => m.chain.length === 1);
    const steady = fulls.filter((m, i) => i > 0 && fulls[i - 1]!.position > 901);
    assert.ok(steady.length >= 1, `${fulls.length} full copies at ${fulls.map((m) => m.position).join(', ')}`);
    for (const full of steady) {
      const before = fulls[fulls.indexOf(full) - 1]!;
      const base = await entries(before);
      const { chain, entries: deltas } = await deltasOn(before);
      assert.ok(base > 1500, `${base} documents in the full copy at ${before.position}`);
      assert.ok(2 * deltas >= base, `a full copy at ${full.position} after ${chain.length} deltas of ${deltas} entries on one of ${base}`);
    }
    // The newest snapshot (at the head) loads to the rebuilt rows.
    const newest = metas[metas.length - 1]!;
    assert.is(newest.position, await events.headPosition());
    const state = await loadSnapshot(reads, new Map(), newest as never, fold.derived);
    const rowsName = collectionNames('people').rows;
    const rows = await reads.find<{ id: string }>(rowsName);
    assert.is(rows.length, 900);
    assert.equal(
      [...(state.collections.get(rowsName)?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id)),
      rows.sort((a, b) => a.id.localeCompare(b.id)),
    );
  }));

test.run();
