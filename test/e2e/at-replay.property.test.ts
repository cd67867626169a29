import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { SNAPSHOTS } from '../../src/projections/reporting/snapshots.ts';
import { chunkEntries, type StoredChunk } from '../../src/projections/reporting/snapshot-chunks.ts';
import { collectionNames } from '../../src/projections/reporting/collection-fold.ts';

/**
 * Collections of each snapshot's entries. The dependents (which rows read an object through links)
 * follow from the rows' links: snapshots leave them out, and loading one makes them again, so the
 * answers above hold without them.
 */
const snapshotCollections = async (w: World): Promise<Set<string>> => {
  const out = new Set<string>();
  const docs = await w.svc.engines.reads.find<StoredChunk & { chain?: unknown }>(SNAPSHOTS, {});
  for (const d of docs) if (d.chain === undefined) for (const [collection] of await chunkEntries(d)) out.add(collection);
  return out;
};

/** Deterministic PRNG (mulberry32), so a failing history can be replayed from its seed. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const COLLECTIONS = ['phd_projects', 'people'];
const LABELS = ['svc:label:common', 'svc:label:archived'];

interface World {
  svc: TestService;
  now: number;
  auth: Record<string, string>;
  faculties: string[];
  departments: string[];
  people: string[];
  projects: string[];
}

const call = async (w: World, path: string, body: unknown, method = 'POST') => {
  const res = await w.svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${await res.text()}`);
  return res.json() as Promise<{ ref: string }>;
};

const snapshotOf = async (w: World, atParam?: string) => {
  const out: Record<string, unknown> = {};
  for (const name of COLLECTIONS) {
    const res = await w.svc.request(`/api/reporting/v0/collection-data/${name}${atParam ? `?at=${atParam}` : ''}`, { admin: false, headers: w.auth });
    const body = (await res.json()) as { rows: unknown; objects: unknown };
    out[name] = { rows: body.rows, objects: body.objects };
  }
  return out;
};

const rebuildAndWait = async (w: World, projection: string) => {
  const res = await w.svc.request(`/api/admin/projections/${encodeURIComponent(projection)}/rebuild`, { method: 'POST' });
  assert.is(res.status, 202);
  for (let i = 0; i < 500; i++) {
    const { projections } = (await (await w.svc.request('/api/admin/projections')).json()) as { projections: { name: string; state: string; rebuild?: { phase: string } }[] };
    const p = projections.find((x) => x.name === projection)!;
    if (p.rebuild?.phase === 'done' && p.state === 'live') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${projection} was not rebuilt in time`);
};

/** One random but valid change to the world, recorded at the current clock. */
const step = async (w: World, rnd: () => number) => {
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const link = (ref: string) => ({ type: 'link', ref });
  const r = rnd();
  if (r < 0.08 || w.faculties.length === 0) {
    w.faculties.push((await call(w, '/api/admin/objects', { type: 'svc:type:faculty', attributes: { 'dc:attribute:title': `Faculty ${w.faculties.length}` } })).ref);
  } else if (r < 0.16 || w.departments.length === 0) {
    w.departments.push(
      (await call(w, '/api/admin/objects', { type: 'svc:type:department', attributes: { 'dc:attribute:title': `Dept ${w.departments.length}`, 'svc:attribute:parent': link(pick(w.faculties)) } })).ref,
    );
  } else if (r < 0.26 || w.people.length === 0) {
    w.people.push(
      (await call(w, '/api/admin/objects', {
        type: 'svc:type:person',
        attributes: { 'dc:attribute:title': `Person ${w.people.length}`, 'svc:attribute:department': link(pick(w.departments)), 'svc:attribute:job-title': pick(['Lecturer', 'Reader']) },
        labels: [pick(LABELS)],
      })).ref,
    );
  } else if (r < 0.4 || w.projects.length === 0) {
    w.projects.push(
      (await call(w, '/api/admin/objects', {
        type: pick(['phd:type:project', 'phd:type:project-part-time']),
        attributes: {
          'dc:attribute:title': `Project ${w.projects.length}`,
          'phd:attribute:researcher': link(pick(w.people)),
          'svc:attribute:department': link(pick(w.departments)),
          'phd:attribute:start-date': { type: 'datetime', start: `202${Math.floor(rnd() * 5)}-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 9)}` },
        },
      })).ref,
    );
  } else if (r < 0.6) {
    const attributes = pick([
      { 'dc:attribute:title': `Renamed ${Math.floor(rnd() * 1000)}` },
      { 'phd:attribute:exams-done': { type: 'integer', value: Math.floor(rnd() * 4) } },
      { 'phd:attribute:funded': rnd() < 0.5 ? [] : { type: 'configuration-name', value: 'ukri' } },
      { 'phd:attribute:progress': { type: 'number', value: Math.round(rnd() * 100) / 100 } },
      { 'svc:attribute:department': link(pick(w.departments)) },
      { 'phd:attribute:researcher': link(pick(w.people)) },
    ]);
    await call(w, `/api/admin/objects/${pick(w.projects)}`, { attributes }, 'PATCH');
  } else if (r < 0.7) {
    await call(w, `/api/admin/objects/${pick(w.departments)}`, { attributes: { 'svc:attribute:parent': link(pick(w.faculties)), 'dc:attribute:title': `Dept ${Math.floor(rnd() * 100)}` } }, 'PATCH');
  } else if (r < 0.78) {
    await call(w, `/api/admin/objects/${pick(w.people)}`, { attributes: { 'dc:attribute:title': `Person ${Math.floor(rnd() * 100)}` } }, 'PATCH');
  } else if (r < 0.86) {
    const ref = pick([...w.projects, ...w.people]);
    await call(w, `/api/admin/objects/${ref}`, { labels: rnd() < 0.5 ? { add: ['svc:label:archived'], remove: ['svc:label:common'] } : { add: ['svc:label:common'] } }, 'PATCH');
  } else if (w.projects.length > 1) {
    const ref = pick(w.projects);
    const res = await w.svc.request(`/api/admin/objects/${ref}`, { method: 'DELETE' });
    if (res.status !== 200) throw new Error(`delete ${ref}: ${res.status}`);
    if (rnd() < 0.5) {
      w.now += 1 + Math.floor(rnd() * 500);
      await call(w, `/api/admin/objects/${ref}/undelete`, {});
    } else {
      w.projects = w.projects.filter((p) => p !== ref);
    }
  }
};

const test = suite('at replay equals the live read model as it stood (generated histories)');

for (const seed of [7, 1234, 99991]) {
  test(`seed ${seed}: every recorded instant, with snapshots every few events`, async () => {
    const w: World = { now: Date.UTC(2025, 5, 1), faculties: [], departments: [], people: [], projects: [] } as unknown as World;
    w.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: String(3 + (seed % 5)) }, () => w.now);
    try {
      await call(w, '/api/admin/groups', { code: 'svc:group:all', title: 'All', readAll: true });
      await call(w, '/api/admin/users', { username: 'analyst', name: { first: 'An', last: 'Alyst' }, groups: ['svc:group:all'] });
      const { key } = (await call(w, '/api/admin/users/analyst/api-keys', {})) as unknown as { key: string };
      w.auth = { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` };
      const rnd = prng(seed);
      const history: { at: number; state: unknown }[] = [];
      for (let i = 0; i < 45; i++) {
        w.now += 1 + Math.floor(rnd() * 5000);
        await step(w, rnd);
        history.push({ at: w.now, state: await snapshotOf(w) });
      }
      for (const { at, state } of history) {
        assert.equal(await snapshotOf(w, new Date(at).toISOString()), state, `seed ${seed}, at ${new Date(at).toISOString()}`);
      }
      const stored = await snapshotCollections(w);
      for (const name of COLLECTIONS) {
        assert.ok(stored.has(collectionNames(name).rows), `${name}: rows in snapshots`);
        assert.not.ok(stored.has(collectionNames(name).dependents), `${name}: no dependents in snapshots`);
      }
      // Between two changes the answer is the earlier state.
      const mid = history[20]!;
      assert.equal(await snapshotOf(w, new Date(mid.at + 1).toISOString().replace('Z', '')), history[21]!.at > mid.at + 1 ? mid.state : history[21]!.state);
      // A rebuild replaces the snapshots with its own (taken from memory): the same answers.
      for (const name of COLLECTIONS) await rebuildAndWait(w, `collection:${name}`);
      for (const { at, state } of history) {
        assert.equal(await snapshotOf(w, new Date(at).toISOString()), state, `after rebuild: seed ${seed}, at ${new Date(at).toISOString()}`);
      }
      assert.not.ok((await snapshotCollections(w)).has(collectionNames('people').dependents), 'no dependents in the rebuilt snapshots');
    } finally {
      await w.svc.stop();
    }
  });
}

test.run();
