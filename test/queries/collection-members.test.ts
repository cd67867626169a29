/**
 * A collection-data answer's bytes are made and kept as slices: a long answer is never one
 * contiguous string or buffer (encoding and copying megabytes at once held the event loop for
 * milliseconds per answer and per request), and the slices joined are the answer's JSON.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CollectionDef } from '../../src/domain/reporting/collection.ts';
import type { Schema } from '../../src/domain/schema.ts';
import type { RowDoc } from '../../src/projections/read-models.ts';
import { collectionMembers, mentionedRefs, SLICE_ROWS } from '../../src/queries/collection-members.ts';
import type { InfoSummary } from '../../src/queries/live-infos.ts';

const collection = {
  name: 'c',
  description: '',
  categories: [],
  types: ['t'],
  facts: [
    { name: 'title', type: 'text', description: '', source: { attribute: 'dc:attribute:title' } },
    { name: 'researcher', type: 'ref', description: '', source: { attribute: 'phd:attribute:researcher' } },
  ],
} as unknown as CollectionDef;

test('30,000 rows: slices of at most 256 KiB whose concatenation is the JSON members', async () => {
  const n = 30_000;
  const rows: RowDoc[] = [];
  const infos = new Map<string, InfoSummary>();
  for (let i = 0; i < n; i++) {
    const id = `r${String(i).padStart(8, '0')}`;
    const person = `p${String(i % 5000).padStart(8, '0')}`;
    rows.push({ id, values: [id, `A project title number ${i} with some words`, person], labels: ['l'], linkedTo: [] });
    infos.set(id, { title: `Project ${i}`, parent: undefined, behaviour: undefined, labels: ['l'] } as unknown as InfoSummary);
    infos.set(person, { title: `Person ${i % 5000}`, parent: undefined, behaviour: undefined, labels: ['l'] } as unknown as InfoSummary);
  }
  const slices = await collectionMembers({
    collection,
    schema: { byRef: () => undefined } as unknown as Schema,
    rows,
    infos,
    current: infos,
    access: { all: true, labels: new Set() },
    pause: async () => undefined,
  });
  assert.ok(Array.isArray(slices), 'a list of slices');
  const total = slices.reduce((a, s) => a + s.length, 0);
  assert.ok(total > 2 * 1024 * 1024, `${total} bytes`);
  for (const s of slices) assert.ok(s.length <= 256 * 1024, `a slice of ${s.length} bytes`);
  const parsed = JSON.parse(`{${Buffer.concat(slices).toString()}}`) as { columns: string[]; rows: unknown[][]; objects: Record<string, { title: string }> };
  assert.equal(parsed.columns, ['ref', 'objectTitle', 'title', 'researcher']);
  assert.is(parsed.rows.length, n);
  assert.equal(parsed.rows[7], ['r00000007', 'Project 7', 'A project title number 7 with some words', 'p00000007']);
  assert.is(Object.keys(parsed.objects).length, 5000);
  assert.equal(parsed.objects.p00000042, { title: 'Person 42' });
});

test('no rows: the members of an empty answer', async () => {
  const slices = await collectionMembers({
    collection,
    schema: { byRef: () => undefined } as unknown as Schema,
    rows: [],
    infos: new Map(),
    current: new Map(),
    access: { all: true, labels: new Set() },
    pause: async () => undefined,
  });
  assert.equal(JSON.parse(`{${Buffer.concat(slices).toString()}}`), { columns: ['ref', 'objectTitle', 'title', 'researcher'], rows: [], objects: {} });
});

/**
 * Rows and objects looked at between two pauses: an answer gives the event loop back every
 * SLICE_ROWS of them (object GETs beside a 10,000-row answer wait for one slice, not for a loop).
 */
const counting = (n: number, people: number) => {
  let since = 0;
  let most = 0;
  const plain: RowDoc[] = [];
  const infos = new Map<string, InfoSummary>();
  for (let i = 0; i < n; i++) {
    const id = `r${String(i).padStart(8, '0')}`;
    const person = `p${String(i % people).padStart(8, '0')}`;
    plain.push({ id, values: [id, `Project ${i}`, person], labels: ['l'], linkedTo: [person] });
    infos.set(id, { title: `Project ${i}`, labels: ['l'] } as unknown as InfoSummary);
    infos.set(person, { title: `Person ${i % people}`, labels: ['l'] } as unknown as InfoSummary);
  }
  const rows = new Proxy(plain, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) since++;
      return Reflect.get(target, key, receiver);
    },
  });
  const lookup: Map<string, InfoSummary> = new Proxy(infos, {
    get(target, key) {
      if (key === 'get') return (ref: string) => (since++, target.get(ref));
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const pause = async () => {
    most = Math.max(most, since);
    since = 0;
  };
  return { rows, lookup, pause, most: () => Math.max(most, since) };
};

test('an answer looks at most about SLICE_ROWS rows and objects between two pauses', async () => {
  const c = counting(20_000, 15_000);
  await collectionMembers({
    collection,
    schema: { byRef: () => undefined } as unknown as Schema,
    rows: c.rows,
    infos: c.lookup,
    current: c.lookup,
    access: { all: false, labels: new Set(['l']) },
    pause: c.pause,
  });
  assert.ok(c.most() <= 3 * SLICE_ROWS, `${c.most()} looked at between two pauses`);
});

test('the refs rows name: every row, ref value and linked object, with pauses', async () => {
  const c = counting(20_000, 15_000);
  const refs = await mentionedRefs(collection, c.rows, c.pause);
  assert.is(refs.size, 35_000);
  assert.ok(refs.has('r00019999') && refs.has('p00014999'));
  assert.ok(c.most() <= 3 * SLICE_ROWS, `${c.most()} rows looked at between two pauses`);
});

test.run();
