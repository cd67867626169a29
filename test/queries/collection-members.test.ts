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
import { collectionMembers, membersKept, mentionedRefs, SLICE_ROWS, type MembersState, type RowTextMemo } from '../../src/queries/collection-members.ts';
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

/**
 * Rows' JSON kept between answers (RowTextMemo): an answer made with the texts of an earlier one is
 * the answer made without them, whatever changed between the two (titles, labels, rows, the
 * caller's access), and only the rows whose inputs changed are made again.
 */
const linked = {
  ...collection,
  facts: [
    ...collection.facts,
    { name: 'supervisors', type: 'refList', description: '', source: { attribute: 'phd:attribute:supervisor' } },
    { name: 'department', type: 'text', description: '', source: { attribute: 'dc:attribute:title', linked: { attribute: 'phd:attribute:department' } } },
  ],
} as unknown as CollectionDef;

const world = (seed: number) => {
  const next = ((x: number) => () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31))(seed);
  const label = () => (next() < 0.7 ? 'open' : 'secret');
  const infos = new Map<string, InfoSummary>();
  const person = (i: number) => `p${String(i).padStart(3, '0')}`;
  for (let i = 0; i < 40; i++) infos.set(person(i), { title: `Person ${i}`, labels: [label()] } as unknown as InfoSummary);
  const rows = new Map<string, RowDoc>();
  for (let i = 0; i < 200; i++) {
    const id = `r${String(i).padStart(4, '0')}`;
    const dept = `d${i % 5}`;
    if (!infos.has(dept)) infos.set(dept, { title: `Dept ${i % 5}`, labels: [label()] } as unknown as InfoSummary);
    rows.set(id, { id, values: [id, `Project ${i}`, person(i % 40), [person((i + 1) % 40), person((i + 7) % 40), 'p999'], `Dept ${i % 5}`], labels: [label()], linkedTo: [dept] });
    infos.set(id, { title: `Project ${i}`, labels: [label()] } as unknown as InfoSummary);
  }
  const change = () => {
    const ids = [...infos.keys()];
    for (let k = 0; k < 15; k++) {
      const id = ids[Math.floor(next() * ids.length)]!;
      const old = infos.get(id)!;
      infos.set(id, { ...old, ...(next() < 0.5 ? { title: `${old.title}'` } : { labels: [label()] }) } as InfoSummary);
    }
    const rowIds = [...rows.keys()];
    for (let k = 0; k < 5; k++) {
      const id = rowIds[Math.floor(next() * rowIds.length)]!;
      const old = rows.get(id)!;
      rows.set(id, { ...old, values: [id, `${old.values[1]}!`, person(Math.floor(next() * 40)), old.values[3], old.values[4]] });
    }
  };
  return { infos, rows, change };
};

const make = async (w: ReturnType<typeof world>, access: { all: boolean; labels: Set<string> }, rowTexts?: RowTextMemo) => {
  const slices = await collectionMembers({
    collection: linked,
    schema: { byRef: () => undefined } as unknown as Schema,
    rows: [...w.rows.values()],
    infos: w.infos,
    current: w.infos,
    access,
    pause: async () => undefined,
    ...(rowTexts ? { rowTexts } : {}),
  });
  return Buffer.concat(slices).toString();
};

test('with the texts of earlier answers: the same answer as without them, after every change and for every access', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const w = world(seed);
    const memo: RowTextMemo = new WeakMap();
    const open = { all: false, labels: new Set(['open']) };
    const both = { all: false, labels: new Set(['open', 'secret']) };
    const all = { all: true, labels: new Set<string>() };
    for (let round = 0; round < 6; round++) {
      for (const access of [open, both, all, open]) assert.is(await make(w, access, memo), await make(w, access), `seed ${seed}, round ${round}`);
      w.change();
    }
  }
});

test('only the rows whose inputs changed are made again', async () => {
  const w = world(9);
  let made = 0;
  const memo = new WeakMap() as RowTextMemo;
  const set = memo.set.bind(memo);
  memo.set = (k, v) => (made++, set(k, v));
  const open = { all: false, labels: new Set(['open']) };
  await make(w, open, memo);
  const first = made;
  assert.ok(first > 50, `${first} rows made`);
  made = 0;
  await make(w, open, memo);
  assert.is(made, 0, 'nothing changed: no row made again');
  const [id, row] = [...w.rows].find(([, r]) => w.infos.get(r.id)!.labels[0] === 'open')!;
  w.infos.set(id, { ...w.infos.get(id)!, title: 'Renamed' } as InfoSummary);
  assert.ok(row);
  const answer = await make(w, open, memo);
  assert.is(made, 1, 'one title changed: one row made again');
  assert.ok(answer.includes(`["${id}","Renamed"`));
});

/**
 * An answer made from the state of the one before it (membersKept's `previous` and `changed`) is the
 * answer made from nothing, whatever changed between them: titles, labels, parents, rows replaced,
 * added and removed, label lists; and after a small change it looks up only what that change touches.
 */
const withLabels = {
  ...linked,
  facts: [...linked.facts, { name: 'tags', type: 'labelList', description: '', source: { attribute: 'phd:attribute:tags' } }],
} as unknown as CollectionDef;
const labelSchema = { byRef: (ref: string) => (ref.startsWith('L') ? { name: `Label ${ref}` } : undefined) } as unknown as Schema;

const evolving = (seed: number, scale = 1) => {
  const next = ((x: number) => () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31))(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const label = () => (next() < 0.7 ? 'open' : 'secret');
  const infos = new Map<string, InfoSummary>();
  const person = (i: number) => `p${String(i).padStart(3, '0')}`;
  const dept = (i: number) => `d${i}`;
  const people = 40 * scale;
  const depts = 5 * scale;
  for (let i = 0; i < depts; i++) infos.set(dept(i), { title: `Dept ${i}`, labels: [label()] } as unknown as InfoSummary);
  for (let i = 0; i < people; i++) infos.set(person(i), { title: `Person ${i}`, parent: dept(i % depts), labels: [label()] } as unknown as InfoSummary);
  const rows = new Map<string, RowDoc>();
  let made = 0;
  const addRow = () => {
    const i = made++;
    const id = `r${String(Math.floor(next() * 10_000 * scale)).padStart(6, '0')}`;
    const d = dept(i % depts);
    // Some ref values name labels (L…: no description, a title from the schema) or nothing known (p999).
    rows.set(id, { id, values: [id, `Project ${i}`, next() < 0.1 ? 'L1' : person(i % people), [person((i + 1) % people), next() < 0.2 ? 'L2' : person((i + 7) % people), 'p999'], `Dept ${i % depts}`, i === 3 ? ['L1'] : next() < 0.05 ? [`L${2 + (i % 2)}`] : []], labels: [label()], linkedTo: [d] });
    infos.set(id, { title: `Project ${i}`, labels: [label()] } as unknown as InfoSummary);
  };
  for (let i = 0; i < 150 * scale; i++) addRow();
  /** Changes a few things; returns the objects whose descriptions changed. */
  const change = (): Set<string> => {
    const changed = new Set<string>();
    for (let k = 0; k < 1 + Math.floor(next() * 6); k++) {
      const id = pick([...infos.keys()]);
      const old = infos.get(id)!;
      const r = next();
      if (r < 0.05) infos.delete(id);
      else infos.set(id, { ...old, ...(r < 0.4 ? { title: `${old.title}'` } : r < 0.8 ? { labels: [label()] } : { parent: dept(Math.floor(next() * (depts + 1))) }) } as InfoSummary);
      changed.add(id);
    }
    // The label L1 comes and goes from the label lists (ref values naming it are shown only while it is there).
    if (next() < 0.3) {
      const listing = [...rows.values()].filter((r) => (r.values[5] as string[]).includes('L1'));
      const to = listing.length > 0 ? listing : [pick([...rows.values()])];
      for (const r of to) rows.set(r.id, { ...r, values: [...r.values.slice(0, 5), listing.length > 0 ? [] : ['L1']] });
    }
    for (let k = 0; k < Math.floor(next() * 4); k++) {
      const r = next();
      if (r < 0.3) addRow();
      else if (r < 0.5 && rows.size > 1) rows.delete(pick([...rows.keys()]));
      else {
        const id = pick([...rows.keys()]);
        const old = rows.get(id)!;
        rows.set(id, { ...old, values: [id, `${old.values[1]}!`, person(Math.floor(next() * people)), old.values[3], old.values[4], next() < 0.5 ? [] : old.values[5]] });
      }
    }
    return changed;
  };
  const ordered = () => [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { infos, ordered, change };
};

const members = async (w: ReturnType<typeof evolving>, access: { all: boolean; labels: Set<string> }, kept?: { previous: MembersState; changed: Set<string> }, rowTexts?: RowTextMemo) =>
  membersKept({
    collection: withLabels,
    schema: labelSchema,
    rows: w.ordered(),
    infos: w.infos,
    current: w.infos,
    access,
    pause: async () => undefined,
    ...(rowTexts ? { rowTexts } : {}),
    ...(kept ?? {}),
  });

test('made from the previous answer: the same answer as made from nothing, after every change and for every access', async () => {
  const open = { all: false, labels: new Set(['open']) };
  const both = { all: false, labels: new Set(['open', 'secret']) };
  const all = { all: true, labels: new Set<string>() };
  for (const seed of [11, 12, 13, 14, 15, 16, 17, 18]) {
    const w = evolving(seed);
    const memo: RowTextMemo = new WeakMap();
    const states = new Map<object, MembersState>();
    for (let round = 0; round < 25; round++) {
      const changed = round === 0 ? new Set<string>() : w.change();
      for (const access of [open, both, all]) {
        const previous = states.get(access);
        const kept = await members(w, access, previous ? { previous, changed } : undefined, memo);
        const fresh = await members(w, access);
        assert.is(Buffer.concat(kept.slices).toString(), Buffer.concat(fresh.slices).toString(), `seed ${seed}, round ${round}`);
        states.set(access, kept.state);
      }
    }
  }
});

/** Bytes of `after` that lie in the memory of a slice of `before` (slices of one pooled ArrayBuffer are told apart by their ranges). */
const keptBytes = (before: readonly Buffer[], after: readonly Buffer[]): number => {
  const within = (s: Buffer) => before.some((b) => b.buffer === s.buffer && s.byteOffset >= b.byteOffset && s.byteOffset + s.length <= b.byteOffset + b.length);
  return after.filter(within).reduce((n, s) => n + s.length, 0);
};

test('made from the previous answer, over many runs of rows and objects: the same answer as made from nothing', async () => {
  const open = { all: false, labels: new Set(['open']) };
  const all = { all: true, labels: new Set<string>() };
  let kept = 0;
  let total = 0;
  for (const seed of [21, 22, 23]) {
    // 1,500 rows and about 500 objects: a dozen runs of rows and a few of objects, most of them taken again.
    const w = evolving(seed, 10);
    const memo: RowTextMemo = new WeakMap();
    const states = new Map<object, { state: MembersState; slices: Buffer[] }>();
    for (let round = 0; round < 20; round++) {
      const changed = round === 0 ? new Set<string>() : w.change();
      for (const access of [open, all]) {
        const previous = states.get(access);
        const made = await members(w, access, previous ? { previous: previous.state, changed } : undefined, memo);
        const fresh = await members(w, access);
        assert.is(Buffer.concat(made.slices).toString(), Buffer.concat(fresh.slices).toString(), `seed ${seed}, round ${round}`);
        if (previous) {
          kept += keptBytes(previous.slices, made.slices as Buffer[]);
          total += made.slices.reduce((n, s) => n + s.length, 0);
        }
        states.set(access, { state: made.state, slices: made.slices as Buffer[] });
      }
    }
  }
  // Label lists that gain or lose a label make every row again; most other changes touch a few runs.
  assert.ok(kept > 0.3 * total, `${kept} of ${total} bytes taken from the answer before`);
});

test('after one object changes, an answer made from the previous one looks up only what that object touches', async () => {
  const c = counting(20_000, 15_000);
  const input = { collection, schema: { byRef: () => undefined } as unknown as Schema, rows: c.rows, infos: c.lookup, current: c.lookup, access: { all: false, labels: new Set(['l']) }, pause: c.pause };
  let lookups = 0;
  const lookup = { get: (ref: string) => (lookups++, c.lookup.get(ref)) };
  const first = await membersKept({ ...input, infos: lookup, current: lookup });
  assert.ok(lookups > 20_000, `${lookups} lookups for the first answer`);
  const person = 'p00000042';
  c.lookup.set(person, { title: 'Renamed', labels: ['l'] } as unknown as InfoSummary);
  lookups = 0;
  const second = await membersKept({ ...input, infos: lookup, current: lookup, previous: first.state, changed: new Set([person]) });
  // Two rows name p00000042 (rows 42 and 15,042), each through a link and a ref value.
  assert.ok(lookups <= 20, `${lookups} lookups after one change`);
  const parsed = JSON.parse(`{${Buffer.concat(second.slices).toString()}}`) as { rows: unknown[][]; objects: Record<string, { title: string }> };
  assert.is(parsed.rows.length, 20_000);
  assert.equal(parsed.objects[person], { title: 'Renamed' });
  assert.is(Buffer.concat(second.slices).toString(), Buffer.concat(await collectionMembers(input)).toString());
});

/**
 * An answer made from the previous one after a small change keeps the previous answer's bytes for
 * the runs of rows and objects that change did not touch (the same Buffers, not copies): making and
 * encoding 10,000 rows' and 15,000 objects' text again after every write was most of an answer's
 * time, and of the event loop's beside it.
 */
test('after one object changes, most of the answer is the previous answer\'s bytes', async () => {
  const c = counting(20_000, 15_000);
  const input = { collection, schema: { byRef: () => undefined } as unknown as Schema, rows: c.rows, infos: c.lookup, current: c.lookup, access: { all: false, labels: new Set(['l']) }, pause: c.pause };
  const first = await membersKept(input);
  const person = 'p00000042';
  c.lookup.set(person, { title: 'Renamed', labels: ['l'] } as unknown as InfoSummary);
  const second = await membersKept({ ...input, previous: first.state, changed: new Set([person]) });
  const total = second.slices.reduce((n, s) => n + s.length, 0);
  const kept = keptBytes(first.slices, second.slices);
  assert.ok(kept > 0.9 * total, `${kept} of ${total} bytes kept`);
  // And nothing else moved: the same answer as one made from nothing.
  assert.is(Buffer.concat(second.slices).toString(), Buffer.concat(await collectionMembers(input)).toString());
  // A third answer after a change that moves nothing keeps every byte it can.
  const third = await membersKept({ ...input, previous: second.state, changed: new Set() });
  const thirdTotal = third.slices.reduce((n, s) => n + s.length, 0);
  assert.ok(thirdTotal - keptBytes(second.slices, third.slices) < 100, 'nothing changed: only the frame is new');
});

test.run();
