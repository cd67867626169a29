/**
 * Snapshot chunks are bounded in bytes as well as entries (MongoDB refuses documents over 16 MB),
 * and a snapshot is written in as many transactions as the read store's bound needs; either way it
 * reads back unchanged. On the embedded store: the chunking is the same on every engine.
 */
import { randomBytes } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import { writeOpBytes, type Doc } from '../../../src/projections/read-store.ts';
import { pagedDocs } from '../../../src/projections/paged-docs.ts';
import { CHUNK_BYTES, SNAPSHOTS, latestSnapshot, loadSnapshot, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { openSnapshotStore, snapshotStoreSuite } from '../../support/snapshot-store.ts';

const test = snapshotStoreSuite('snapshot chunks', 'svc-snapshots');
const open = openSnapshotStore;

const fold: Projector = { name: 'bigfold', collections: [{ name: 'big' }], apply: () => undefined };

/** `count` documents of about `bytes` each. */
/** Documents of about `bytes` of JSON each that compress little (random base64: to about three quarters). */
const bigDocs = (count: number, bytes: number): Doc[] =>
  Array.from({ length: count }, (_, i) => ({ id: `d${i}`, n: i, text: randomBytes((bytes * 3) / 4).toString('base64'), nested: { list: [i, `é${i}`] } }));

const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;

const snapshotOf = async (reads: SqliteReadStore, docs: readonly Doc[], position: number, rebuild = false) => {
  await withSnapshots(fold, 1).afterBatch!({
    reads,
    last: event(position),
    changes: [],
    ...(rebuild ? { rebuild: { physical: (c: string) => `${c}__rebuild` } } : {}),
    state: async () => [docs],
  });
};

const chunkSizes = async (reads: SqliteReadStore, key: string) => {
  const meta = (await latestSnapshot(reads, key))!;
  const chunks = await reads.getMany(SNAPSHOTS, Array.from({ length: meta.chunks }, (_, i) => `${meta.id}#${i}`));
  assert.is(chunks.size, meta.chunks, 'every chunk is there');
  return [...chunks.values()].map((doc) => writeOpBytes({ kind: 'put', collection: SNAPSHOTS, doc }));
};

test('large documents are split into chunks of at most CHUNK_BYTES, and read back unchanged', async (ctx) => {
  const reads = await open(ctx);
  // 40 documents of 500 kB: 20 MB, far fewer than the 2,000 entries a chunk may hold.
  const docs = bigDocs(40, 500_000);
  await snapshotOf(reads, docs, 10);
  const sizes = await chunkSizes(reads, 'bigfold');
  assert.ok(sizes.length >= 5, `${sizes.length} chunks`);
  for (const size of sizes) assert.ok(size <= CHUNK_BYTES, `a chunk of ${size} bytes`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  assert.equal([...state.collections.get('big')!.values()], docs);
});

test('a snapshot is written within the store’s bound of a transaction, chunks sized to fit it; switched-in rebuild snapshots too', async (ctx) => {
  const limit = { ops: 3, bytes: 1_200_000 };
  const reads = await open(ctx, { maxBatch: limit });
  const docs = bigDocs(12, 400_000);
  // Small documents as well: the entries bound (2,000) still applies.
  const many = Array.from({ length: 4500 }, (_, i) => ({ id: `s${i}`, n: i }));
  // Every bulkWrite past the bound would throw BatchTooLargeError.
  await snapshotOf(reads, [...docs, ...many], 10);
  const sizes = await chunkSizes(reads, 'bigfold');
  for (const size of sizes) assert.ok(size <= limit.bytes, `a chunk of ${size} bytes`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  assert.equal([...state.collections.get('big')!.values()], [...docs, ...many]);

  // A rebuild's snapshots replace the live ones when it is switched in: deletes and moves in parts too.
  const rebuilt = bigDocs(6, 400_000);
  await snapshotOf(reads, rebuilt, 20, true);
  await withSnapshots(fold, 1).afterRebuild!(reads);
  const metas = await reads.find(SNAPSHOTS, { where: { collection: 'bigfold' } });
  assert.equal(metas.map((m) => m.id), ['rebuild:bigfold@20']);
  assert.equal(await reads.find(SNAPSHOTS, { where: { collection: 'rebuild:bigfold' } }), []);
  assert.is(await reads.get(SNAPSHOTS, 'bigfold@10#0'), null, 'the old chunks are gone');
  const after = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  assert.equal([...after.collections.get('big')!.values()], rebuilt);
});

test('a large snapshot on a store without a bound is written in parts of bounded size, each chunk as JSON.stringify writes it', async (ctx) => {
  const reads = await open(ctx);
  const parts: number[] = [];
  const bulkWrite = reads.bulkWrite.bind(reads);
  reads.bulkWrite = async (ops) => {
    parts.push(ops.reduce((n, op) => n + writeOpBytes(op), 0));
    for (const op of ops) if (op.kind === 'put' && op.json !== undefined) assert.is(op.json, JSON.stringify(op.doc));
    return bulkWrite(ops);
  };
  // 60 MB: held at once as JSON it would be what a full snapshot of a large fold costs in memory.
  const docs = [...bigDocs(120, 500_000), ...Array.from({ length: 3000 }, (_, i) => ({ id: `s${i}`, n: i, name: `naïve "quoted" \\ ${i}` }))];
  await snapshotOf(reads, docs, 10);
  assert.ok(parts.length >= 4, `${parts.length} transactions`);
  for (const bytes of parts) assert.ok(bytes <= 20 * 2 ** 20, `a transaction of ${bytes} bytes`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  assert.equal([...state.collections.get('big')!.values()], docs);
});

test('a full snapshot streams the fold state: chunks are written while the documents are still being read', async (ctx) => {
  const reads = await open(ctx);
  const docs = bigDocs(120, 500_000);
  let yielded = 0;
  const yieldedAtWrites: number[] = [];
  const bulkWrite = reads.bulkWrite.bind(reads);
  reads.bulkWrite = async (ops) => {
    yieldedAtWrites.push(yielded);
    return bulkWrite(ops);
  };
  await withSnapshots(fold, 1).afterBatch!({
    reads,
    last: event(10),
    changes: [],
    state: async () =>
      (async function* () {
        for (let i = 0; i < docs.length; i += 5) {
          const page = docs.slice(i, i + 5);
          yielded += page.length;
          yield page;
        }
      })(),
  });
  assert.ok(yieldedAtWrites.length > 2, `${yieldedAtWrites.length} transactions`);
  // A part of chunks (16 MB), and the chunks being compressed ahead of it, are read before the first write.
  assert.ok(yieldedAtWrites[0]! <= (docs.length * 3) / 4, `first write after ${yieldedAtWrites[0]} of ${docs.length} documents`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  assert.equal([...state.collections.get('big')!.values()], docs);
});

test('a full snapshot of a state read back from the store copies each document’s stored text on without parsing it', async (ctx) => {
  const reads = await open(ctx);
  await reads.ensureCollection({ name: 'spilled' });
  // One document whose id is not its first member: its text is put in the chunk's form (id first) all the same.
  const docs: Doc[] = [...Array.from({ length: 4100 }, (_, i) => ({ id: `p${String(i).padStart(4, '0')}`, n: i, name: `naïve "quoted" \\ \t ${i}`, list: [i, null, { x: true }] })), { n: -1, id: 'q-late' }];
  await reads.bulkWrite(docs.map((doc) => ({ kind: 'put', collection: 'spilled', doc })));
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    parsed++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    await withSnapshots(fold, 1).afterBatch!({ reads, last: event(10), changes: [], state: async () => pagedDocs(reads, 'spilled') });
  } finally {
    JSON.parse = parse;
  }
  // Only the document whose text had to be put in order was parsed (the store's own reads of its
  // catalogue and the snapshot's meta may parse a few more).
  assert.ok(parsed < 20, `${parsed} texts parsed for ${docs.length} documents`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'bigfold'))!);
  const byId = (a: Doc, b: Doc) => (a.id < b.id ? -1 : 1);
  assert.equal([...state.collections.get('big')!.values()].sort(byId), [...docs].sort(byId));
});

test.run();
