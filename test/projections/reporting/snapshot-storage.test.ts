/**
 * What snapshots cost in the read store: chunks are stored compressed, and stores written before
 * that (chunks with plain entries) still load.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import type { Projector } from '../../../src/projections/projector.ts';
import type { Doc } from '../../../src/projections/read-store.ts';
import { SNAPSHOTS, latestSnapshot, loadSnapshot, withSnapshots } from '../../../src/projections/reporting/snapshots.ts';
import { chunkEntries, chunkText as textOf, encodeChunk, encodeEntry, type Entry, type StoredChunk } from '../../../src/projections/reporting/snapshot-chunks.ts';
import { openSnapshotStore, snapshotStoreSuite, type SnapshotStoreCtx } from '../../support/snapshot-store.ts';

const test = snapshotStoreSuite('snapshot storage', 'svc-snapshot-storage');
const open = openSnapshotStore;

const fold: Projector = { name: 'people', collections: [{ name: 'objects' }], apply: () => undefined };

const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald'];
const JOBS = ['Lecturer', 'Reader', 'Professor', 'Research Fellow'];
/** Documents shaped like a collection fold's objects: the same keys in every one, values that vary. */
const people = (count: number): Doc[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `0${(i * 7919).toString(36).padStart(11, '0')}`,
    objectType: 'svc:type:person',
    title: `${FIRST[i % FIRST.length]} ${i}`,
    parent: null,
    deleted: false,
    labels: ['svc:label:common'],
    attributes: {
      'svc:attribute:email': [{ type: 'email-address', value: `person.${i}@example.ac.uk` }],
      'svc:attribute:job-title': [{ type: 'text', value: JOBS[i % JOBS.length] }],
      'svc:attribute:department': [{ type: 'link', ref: `dept${i % 37}` }],
    },
  }));

const event = (position: number) => ({ position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)) }) as RecordedEvent;

/** A full snapshot of 5,000 generated people: the bytes stored for it against the JSON of its entries. */
const storePeople = async (ctx: SnapshotStoreCtx) => {
  const reads = await open(ctx);
  const docs = people(5000);
  await withSnapshots(fold, 1).afterBatch!({ reads, last: event(10), changes: [], state: async () => [docs] });
  const entriesJson = docs.reduce((n, doc) => n + Buffer.byteLength(JSON.stringify(['objects', doc.id, doc])), 0);
  const db = new Database(join(ctx.dir, 'read.db'), { readonly: true });
  const { stored } = db.prepare(`SELECT sum(length(CAST(doc AS BLOB)) + coalesce(length(bin), 0)) AS stored FROM "${SNAPSHOTS}"`).get() as { stored: number };
  db.close();
  return { reads, docs, entriesJson, stored };
};

test('a snapshot is stored in at most a quarter of its entries’ JSON, and loads back unchanged', async (ctx) => {
  const { reads, docs, entriesJson, stored } = await storePeople(ctx);
  assert.ok(stored * 4 <= entriesJson, `${stored} bytes stored for ${entriesJson} bytes of entries`);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'people'))!);
  assert.equal([...state.collections.get('objects')!.values()], docs);
});

test('chunks are compressed at a quality that stores such documents in at most a sixteenth of their JSON', async (ctx) => {
  const { entriesJson, stored } = await storePeople(ctx);
  assert.ok(stored * 16 <= entriesJson, `${stored} bytes stored for ${entriesJson} bytes of entries`);
});

// Base64 in the JSON document stored a third more than the compressed bytes (format 3).
test('a chunk is stored as its compressed bytes, not as text encoding them', async (ctx) => {
  const { reads } = await storePeople(ctx);
  const chunks = (await reads.find<StoredChunk & { chain?: unknown }>(SNAPSHOTS)).filter((d) => d.chain === undefined);
  assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
  const db = new Database(join(ctx.dir, 'read.db'), { readonly: true });
  const rows = db.prepare(`SELECT id, length(CAST(doc AS BLOB)) + coalesce(length(bin), 0) AS stored FROM "${SNAPSHOTS}"`).all() as { id: string; stored: number }[];
  db.close();
  const stored = new Map(rows.map((r) => [r.id, r.stored]));
  for (const chunk of chunks) {
    assert.instance(chunk.z, Uint8Array, chunk.id);
    const compressed = (chunk.z as Uint8Array).byteLength;
    assert.ok(stored.get(chunk.id)! <= compressed + 64, `${chunk.id}: ${stored.get(chunk.id)} bytes stored for ${compressed} compressed`);
  }
});

// Versions that read formats up to 3 look for `z` before they check the format: without it in the
// stored JSON they took a format 4 chunk for an empty chunk of plain entries and answered `at` with no rows.
test('a chunk\'s stored JSON names z and its format, so a version reading formats up to 3 refuses it instead of reading it as empty', async (ctx) => {
  await storePeople(ctx);
  const db = new Database(join(ctx.dir, 'read.db'), { readonly: true });
  const docs = (db.prepare(`SELECT doc FROM "${SNAPSHOTS}"`).all() as { doc: string }[]).map((r) => JSON.parse(r.doc) as Record<string, unknown>);
  db.close();
  const chunks = docs.filter((d) => d.chain === undefined);
  assert.ok(chunks.length >= 2, `${chunks.length} chunks`);
  for (const chunk of chunks) {
    assert.ok('z' in chunk, `${String(chunk.id)}: z named in its JSON`);
    assert.is(chunk.f, 4);
  }
});

test('chunks written as base64 text (format 3) still load', async (ctx) => {
  const reads = await open(ctx);
  const docs = people(30);
  const doc = await encodeChunk('people@5#0', textOf(docs.map((d) => encodeEntry(['objects', d.id, d]))));
  const meta = { id: 'people@5', collection: 'people', position: 5, recordedAt: event(5).recordedAt.toISOString(), chunks: 1, chain: ['people@5'] };
  await reads.bulkWrite([
    { kind: 'put', collection: SNAPSHOTS, doc: { id: doc.id, f: 3, z: Buffer.from(doc.z as Uint8Array).toString('base64') } },
    { kind: 'put', collection: SNAPSHOTS, doc: meta },
  ]);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'people'))!);
  assert.equal([...state.collections.get('objects')!.values()], docs);
});

test('chunks stored before compression (plain entries) still load, a full snapshot and a delta on it', async (ctx) => {
  const reads = await open(ctx);
  const docs = people(30);
  const changed = { ...docs[3]!, title: 'Changed' };
  const meta = (position: number, chunks: number, chain: string[]) => ({
    id: `people@${position}`,
    collection: 'people',
    position,
    recordedAt: event(position).recordedAt.toISOString(),
    chunks,
    chain,
  });
  // As earlier versions wrote them: the chunks, then the meta.
  await reads.bulkWrite([
    { kind: 'put', collection: SNAPSHOTS, doc: { id: 'people@5#0', entries: docs.slice(0, 20).map((d) => ['objects', d.id, d]) } },
    { kind: 'put', collection: SNAPSHOTS, doc: { id: 'people@5#1', entries: docs.slice(20).map((d) => ['objects', d.id, d]) } },
    { kind: 'put', collection: SNAPSHOTS, doc: meta(5, 2, ['people@5']) },
    { kind: 'put', collection: SNAPSHOTS, doc: { id: 'people@6#0', entries: [['objects', changed.id, changed], ['objects', docs[4]!.id, null]] } },
    { kind: 'put', collection: SNAPSHOTS, doc: meta(6, 1, ['people@5', 'people@6']) },
  ]);
  const full = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'people', event(5).recordedAt))!);
  assert.equal([...full.collections.get('objects')!.values()], docs);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'people'))!);
  const byId = (a: Doc, b: Doc) => a.id.localeCompare(b.id);
  const expected = docs.filter((_, i) => i !== 4).map((d) => (d.id === changed.id ? changed : d));
  assert.equal([...state.collections.get('objects')!.values()].sort(byId), expected.sort(byId));
});

/** A stored chunk's text, decompressed. */
const chunkText = (chunk: StoredChunk) => brotliDecompressSync(typeof chunk.z === 'string' ? Buffer.from(chunk.z, 'base64') : chunk.z!).toString('utf8');
const occurrences = (text: string, s: string) => text.split(s).length - 1;

// Ids are random and hardly compress: written twice per entry (as the line's and inside the
// document), they were about 7% of a real history's snapshot bytes.
test('a chunk holds each id once and each collection name once', async (ctx) => {
  const reads = await open(ctx);
  const two: Projector = { name: 'two', collections: [{ name: 'objects' }, { name: 'rows' }], apply: () => undefined };
  const snapshots = withSnapshots(two, 1);
  const docs = people(300);
  const rows = docs.map((d) => ({ id: d.id, values: [d.title] }));
  const state = { objects: docs, rows };
  await snapshots.afterBatch!({ reads, last: event(10), changes: [], state: async (c: string) => [state[c as keyof typeof state]] });
  // A delta lists its changes as they came: collections mixed.
  const changes = docs.slice(0, 40).flatMap((d, i) => [
    { kind: 'put', collection: 'objects', doc: { ...d, title: `Changed ${i}` } } as const,
    i % 3 ? ({ kind: 'put', collection: 'rows', doc: { id: d.id, values: [`Changed ${i}`] } } as const) : ({ kind: 'delete', collection: 'rows', id: d.id } as const),
  ]);
  await snapshots.afterBatch!({ reads, last: event(20), after: 10, changes, state: async () => [] });
  const chunks = (await reads.find<StoredChunk & { chain?: unknown }>(SNAPSHOTS)).filter((d) => d.chain === undefined);
  assert.is(chunks.length, 2);
  for (const chunk of chunks) {
    const text = chunkText(chunk);
    const entries = await chunkEntries(chunk);
    assert.ok(entries.length >= 80, `${entries.length} entries`);
    // Once per entry: an object and its row share an id.
    for (const [, id] of entries) assert.is(occurrences(text, id), entries.filter(([, other]) => other === id).length, `${chunk.id}: ${id}`);
    for (const name of ['objects', 'rows']) assert.is(occurrences(text, name), 1, `${chunk.id}: ${name}`);
  }
  const loaded = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'two'))!);
  const byId = (a: Doc, b: Doc) => a.id.localeCompare(b.id);
  const expected = (c: 'objects' | 'rows') => {
    const out = new Map(state[c].map((d) => [d.id, d as Doc]));
    for (const op of changes) if (op.collection === c) (op.kind === 'put' ? out.set(op.doc.id, op.doc) : out.delete(op.id));
    return [...out.values()].sort(byId);
  };
  for (const c of ['objects', 'rows'] as const) assert.equal([...loaded.collections.get(c)!.values()].sort(byId), expected(c), c);
});

test('entries read back as written: odd ids and names, a document without its id first, one that is only an id, removals', async () => {
  const entries: Entry[] = [
    ['objects', 'plain', { id: 'plain', title: 'Plain', nested: { id: 'inner' } }],
    ['ob\tjects\n\\', 'id\twith\ntabs\\and "quotes"', { id: 'id\twith\ntabs\\and "quotes"', title: 'Odd' }],
    ['objects', 'late', { title: 'Id last', list: [1, 2], id: 'late' }],
    ['rows', 'only', { id: 'only' }],
    ['objects', 'gone', null],
    ['rows', '{"id":', { id: '{"id":', values: ['{"id":"x",'] }],
    ['objects', 'é日本', { id: 'é日本', title: 'naïve \u0000 \\' }],
  ];
  const doc = await encodeChunk('t#0', textOf(entries.map(encodeEntry)));
  // Grouped by collection, in the order each first came (a chunk holds a document once: order within it means nothing).
  const order = [...new Set(entries.map(([c]) => c))];
  assert.equal(await chunkEntries(doc), order.flatMap((c) => entries.filter(([other]) => other === c)));
});

/** A chunk's text as the format describes it (see snapshot-chunks.ts), lines joined, written here with none of its code. */
const formatText = (entries: readonly Entry[]): string => {
  const esc = (s: string) => s.replace(/[\\\t\n]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : '\\n'));
  const lines: string[] = [];
  for (const collection of new Set(entries.map(([c]) => c))) {
    const run = entries.filter(([c]) => c === collection);
    lines.push(`\t${esc(collection)}\t${run.length}`, ...run.map(([, id]) => esc(id)));
    for (const [, id, doc] of run) {
      if (doc === null) lines.push('');
      else {
        const { id: _, ...rest } = doc as Doc;
        lines.push(JSON.stringify(rest));
      }
    }
  }
  return lines.join('\n');
};

test('a chunk\'s text is exactly its lines, whatever its ids, names and documents take in UTF-8', () => {
  const entries: Entry[] = [
    ['objects', 'é日本', { id: 'é日本', title: 'naïve 🦆 \u0000 \\' }],
    ['rows', 'only', { id: 'only' }],
    ['objects', 'gone', null],
    ['rc_é\tx', 'plain', { id: 'plain', list: ['日本', 1], nested: { id: 'inner', s: '\u2028' } }],
    ['objects', '"quoted" \\ id', { id: '"quoted" \\ id', n: 1 }],
    ['objects', '\\\\', { id: '\\\\', n: 2 }],
    ['rows', 'late', { title: 'id last', id: 'late' }],
    ['objects', '\ud800', { id: '\ud800', n: 3 }],
  ];
  // As bytes: a lone surrogate is written as U+FFFD both ways.
  assert.equal(textOf(entries.map(encodeEntry)), Buffer.from(formatText(entries)));
  assert.is(textOf([encodeEntry(['objects', 'one', { id: 'one', t: 'ü' }])]).toString('utf8'), '\tobjects\t1\none\n{"t":"ü"}');
});

test('chunks written before as one line per entry (format 2) still load', async (ctx) => {
  const reads = await open(ctx);
  const docs = people(30);
  const line = (collection: string, id: string, doc: Doc | null) => `${collection}\t${id}\t${doc ? JSON.stringify(doc) : ''}`;
  const z = (lines: string[]) => brotliCompressSync(lines.join('\n')).toString('base64');
  const changed = { ...docs[3]!, title: 'Changed' };
  const meta = (position: number, chain: string[]) => ({ id: `people@${position}`, collection: 'people', position, recordedAt: event(position).recordedAt.toISOString(), chunks: 1, chain });
  await reads.bulkWrite([
    { kind: 'put', collection: SNAPSHOTS, doc: { id: 'people@5#0', f: 2, z: z(docs.map((d) => line('objects', d.id, d))) } },
    { kind: 'put', collection: SNAPSHOTS, doc: meta(5, ['people@5']) },
    { kind: 'put', collection: SNAPSHOTS, doc: { id: 'people@6#0', f: 2, z: z([line('objects', changed.id, changed), line('objects', docs[4]!.id, null)]) } },
    { kind: 'put', collection: SNAPSHOTS, doc: meta(6, ['people@5', 'people@6']) },
  ]);
  const state = await loadSnapshot(reads, new Map(), (await latestSnapshot(reads, 'people'))!);
  const byId = (a: Doc, b: Doc) => a.id.localeCompare(b.id);
  const expected = docs.filter((_, i) => i !== 4).map((d) => (d.id === changed.id ? changed : d));
  assert.equal([...state.collections.get('objects')!.values()].sort(byId), expected.sort(byId));
});

test.run();
