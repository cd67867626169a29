/**
 * A rebuild spread over worker threads: the projections shared out by cost (each collection fold
 * in its own thread), progress reported as one, an interrupted run resumed by the next, and the
 * rebuilt read models the same as the live fold's.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadAppModel } from '../../src/app/app-model.ts';
import { openEngines } from '../../src/app/engines.ts';
import { rebuildInWorker } from '../../src/app/rebuild-in-worker.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { snapshotSpec } from '../../src/projections/reporting/snapshots.ts';
import { combinedProgress, readRebuilds, rebuildCheckpoint, rebuildGroups, rebuildLease, type RebuildProgress } from '../../src/projections/rebuild.ts';
import type { LeaseStore } from '../../src/projections/read-store.ts';
import { verifyProjection } from '../../src/projections/verify.ts';
import { seededRandom } from '../../bench/support.ts';
import { changed, created, link, text } from '../projections/object-events.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('Rebuild in worker threads');

const fake = (name: string, snapshots = false, byStream = false): Projector => ({
  name,
  collections: [],
  apply: () => undefined,
  ...(snapshots ? { afterBatch: async () => undefined } : {}),
  ...(byStream ? { byStream: { streamPrefix: 'object-' } } : {}),
});

const appLike = () => [fake('objects', false, true), fake('users'), fake('work-units'), fake('rest-apis'), fake('files'), fake('collection:a', true), fake('collection:b', true)];

test('two workers: each collection fold in its own, the rest shared out, every projection once, listed order kept', () => {
  const groups = rebuildGroups(appLike(), 2);
  assert.is(groups.length, 2);
  const names = groups.map((g) => g.projectors.map((p) => p.name));
  assert.equal(names.flat().sort(), appLike().map((p) => p.name).sort());
  for (const g of names) assert.is(g.filter((n) => n.startsWith('collection:')).length, 1);
  const order = appLike().map((p) => p.name);
  for (const g of names) assert.equal(g, [...g].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
});

test('two workers: the objects projection\'s streams shared by both (its owner beside one collection fold, a helper beside the other), the four small ones two and two', () => {
  // Measured alone over 1M events: the collection folds 51 and 59 s, objects 33 s, each small one
  // about half a second. The objects projection in one group left it half a minute behind the other.
  const groups = rebuildGroups(appLike(), 2);
  const owner = groups.find((g) => g.projectors.some((p) => p.name === 'objects'))!;
  const helper = groups.find((g) => g !== owner)!;
  assert.equal(owner.share, { role: 'owner', projection: 'objects', workers: 2 });
  assert.equal(helper.share, { role: 'helper', projection: 'objects' });
  assert.is(helper.projectors.some((p) => p.name === 'objects'), false);
  for (const g of groups) assert.is(g.projectors.filter((p) => !p.name.startsWith('collection:') && p.name !== 'objects').length, 2);
  assert.is(owner.cost, helper.cost);
});

test('the objects projection alone over two workers: its owner and a helper with nothing else to do; one worker: no sharing', () => {
  const objects = fake('objects', false, true);
  const two = rebuildGroups([objects], 2);
  assert.equal(two.map((g) => [g.projectors.map((p) => p.name), g.share?.role]), [[['objects'], 'owner'], [[], 'helper']]);
  assert.equal(rebuildGroups([objects], 3).map((g) => g.share), [
    { role: 'owner', projection: 'objects', workers: 3 },
    { role: 'helper', projection: 'objects' },
    { role: 'helper', projection: 'objects' },
  ]);
  assert.equal(rebuildGroups([objects, fake('users')], 1).map((g) => [g.projectors.length, g.share]), [[2, undefined]]);
});

test('two workers: the document cache is shared by the documents each group keeps, not by its CPU cost', () => {
  // Each group holds one collection fold, whose state (an entry for every object) is most of what a
  // rebuild keeps; the objects projection folded by stream keeps little of it.
  const groups = rebuildGroups(appLike(), 2);
  const total = groups.reduce((n, g) => n + g.state, 0);
  for (const g of groups) assert.ok(Math.abs(g.state / total - 0.5) < 0.01, `share ${g.state}/${total}`);
  // One collection fold, the objects projection shared, users: the fold's group costs 3.5 times the
  // other (5.25 against 1.5) but keeps six times its documents (4.5 against 0.75).
  const uneven = rebuildGroups([fake('collection:a', true), fake('objects', false, true), fake('users')], 2);
  const fold = uneven.find((g) => g.projectors.some((p) => p.name === 'collection:a'))!;
  const other = uneven.find((g) => g !== fold)!;
  assert.equal([fold.cost, other.cost, fold.state, other.state], [5.25, 1.5, 4.5, 0.75]);
});

test('one worker takes them all; never more groups than projections', () => {
  assert.equal(rebuildGroups(appLike(), 1).map((g) => g.projectors.length), [7]);
  assert.is(rebuildGroups([fake('objects'), fake('users')], 8).length, 2);
  assert.is(rebuildGroups([fake('objects')], 0).length, 1);
});

const part = (projection: string, position: number, phase: RebuildProgress['phase'], eta: number | null = 5): RebuildProgress => ({
  projection,
  processed: position,
  position,
  head: 1000,
  eventsPerSecond: position,
  etaSeconds: eta,
  phase,
});

test('combined progress: as far as the slowest, ended when the last has ended', () => {
  const both = combinedProgress([part('a', 400, 'building', 3), part('b', 900, 'building', 1)]);
  assert.equal(both, { projection: 'a, b', processed: 900, position: 400, head: 1000, eventsPerSecond: 400, etaSeconds: 3, phase: 'building' });
  assert.is(combinedProgress([part('a', 1000, 'done'), part('b', 900, 'building')]).phase, 'building');
  assert.is(combinedProgress([part('a', 1000, 'done'), part('b', 1000, 'switching')]).phase, 'switching');
  // An interruption shows only once every worker has stopped (the CLI ends its progress line on it).
  assert.is(combinedProgress([part('a', 500, 'interrupted'), part('b', 900, 'building')]).phase, 'building');
  assert.is(combinedProgress([part('a', 500, 'interrupted'), part('b', 1000, 'done')]).phase, 'interrupted');
  assert.is(combinedProgress([part('a', 500, 'building', null), part('b', 1000, 'done')]).etaSeconds, null);
});

/** People and departments, then changes to them: every projection of the app has work. */
const history = (changes = 600) => {
  const random = seededRandom(5);
  const departments = Array.from({ length: 5 }, (_, i) => `dept${String(i).padStart(8, '0')}`);
  const people = Array.from({ length: 80 }, (_, i) => `pers${String(i).padStart(8, '0')}`);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  return [
    ...departments.map((ref, i) => created(ref, 'svc:type:department', { 'dc:attribute:title': [text(`Department ${i}`)] })),
    ...people.map((ref, i) => created(ref, 'svc:type:person', { 'dc:attribute:title': [text(`Person ${i}`)], 'svc:attribute:department': [link(pick(departments))] }, ['svc:label:common'])),
    ...Array.from({ length: changes }, (_, i) => {
      const ref = pick(people);
      return random() < 0.5 ? changed(ref, { 'svc:attribute:department': [link(pick(departments))] }) : changed(ref, { 'dc:attribute:title': [text(`Person renamed ${i}`)] });
    }),
  ];
};

test('a rebuild over two worker threads stopped part-way resumes on the next run and verifies', async () => {
  const tmp = tempDir();
  try {
    const config = loadConfig({ SVC_DATA_DIR: tmp.dir, SVC_SNAPSHOT_INTERVAL: '100' });
    const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
    for (const e of history()) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    await events.close();
    // As the service and the CLI do before any fold.
    const setup = await openEngines(config);
    await setup.reads.ensureCollection(snapshotSpec);
    await setup.close();
    const model = loadAppModel(config);
    const projectors = model.projectors;
    assert.ok(projectors.filter((p) => p.afterBatch).length >= 2, 'the app has two collection folds');

    const controller = new AbortController();
    const seen: RebuildProgress[] = [];
    const stopped = await rebuildInWorker(config, {
      workers: 2,
      batchSize: 50,
      resumeAfterStop: false,
      onProgress: (p) => {
        seen.push(p);
        controller.abort();
      },
    })(projectors, { owner: 'test-first', signal: controller.signal });
    assert.is(stopped.phase, 'interrupted');
    assert.ok(seen.length > 0);
    // Both workers had reported, each on its own group (one pass would name them in the listed order).
    const groups = rebuildGroups(projectors, 2);
    assert.is(groups.length, 2);
    assert.is(seen[0]!.projection, groups.flatMap((g) => g.projectors.map((p) => p.name)).join(', '));
    assert.is.not(seen[0]!.projection, projectors.map((p) => p.name).join(', '));

    const engines = await openEngines(config);
    try {
      const records = await readRebuilds(engines.reads, projectors.map((p) => p.name));
      // The stop reaches each worker after its page in progress: a worker whose projections read few
      // events (users, REST APIs) may have finished by then, on a busy machine or a fast one.
      let interrupted = 0;
      for (const p of projectors) {
        const phase = records.get(p.name)?.phase;
        assert.ok(phase === 'interrupted' || phase === 'done', `${p.name}: ${phase}`);
        if (phase === 'done') continue;
        interrupted++;
        const checkpoint = await engines.reads.getCheckpoint(rebuildCheckpoint(p.name));
        // A worker stopped while it folded the objects projection stream by stream had folded nothing in
        // log order yet: it keeps no checkpoint, and its projections start over (rebuild-by-stream.test.ts).
        if (checkpoint === null) assert.is(records.get(p.name)?.position, 0, `${p.name} folded nothing it could resume from`);
        else assert.ok(checkpoint.position > 0, `${p.name} committed before it stopped`);
      }
      assert.ok(interrupted > 0, 'some projection was stopped part-way');
    } finally {
      await engines.close();
    }

    const done = await rebuildInWorker(config, { workers: 2, batchSize: 50, resumeAfterStop: false })(projectors, { owner: 'test-second', signal: new AbortController().signal });
    assert.is(done.phase, 'done');
    const engines2 = await openEngines(config);
    try {
      const head = await engines2.events.headPosition();
      assert.ok(done.position >= head);
      const records = await readRebuilds(engines2.reads, projectors.map((p) => p.name));
      for (const p of projectors) {
        assert.is(records.get(p.name)?.phase, 'done', p.name);
        assert.is((await engines2.reads.getCheckpoint(p.name))?.position, head, `${p.name} switched in at the head`);
        const verified = await verifyProjection(engines2.events, engines2.reads, p);
        assert.equal(verified.differences, [], `${p.name} verifies`);
      }
    } finally {
      await engines2.close();
    }
  } finally {
    tmp.remove();
  }
});

test('the objects projection alone over two worker threads: each folds half its streams, and the copy switched in verifies', async () => {
  const tmp = tempDir();
  try {
    const config = loadConfig({ SVC_DATA_DIR: tmp.dir });
    const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
    for (const e of history()) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    // Both halves are needed: the owner folds only the streams before the cut.
    const cuts = await events.splitStreams({ streamPrefix: 'object-', parts: 2 });
    assert.is(cuts.length, 1);
    await events.close();
    const objects = loadAppModel(config).projectors.filter((p) => p.name === 'objects');
    assert.equal(rebuildGroups(objects, 2).map((g) => g.share?.role), ['owner', 'helper']);
    const done = await rebuildInWorker(config, { workers: 2, batchSize: 50 })(objects, { owner: 'test-shared', signal: new AbortController().signal });
    assert.is(done.phase, 'done');
    assert.is(done.projection, 'objects');
    const engines = await openEngines(config);
    try {
      const head = await engines.events.headPosition();
      assert.is((await engines.reads.getCheckpoint('objects'))?.position, head);
      assert.ok((await engines.reads.find('objects', {})).length === 85, 'every object is in');
      assert.equal((await verifyProjection(engines.events, engines.reads, objects[0]!)).differences, []);
    } finally {
      await engines.close();
    }
  } finally {
    tmp.remove();
  }
});

test('a worker\'s failure comes with the stack it was thrown with (the statement that failed, not only its message)', async () => {
  const tmp = tempDir();
  try {
    // The log's file is a directory: the worker fails as it opens its engines.
    mkdirSync(join(tmp.dir, 'events.db'));
    const config = loadConfig({ SVC_DATA_DIR: tmp.dir });
    const projectors = loadAppModel(config).projectors.filter((p) => p.name === 'users');
    const failed = await rebuildInWorker(config, { workers: 1 })(projectors, { owner: 'test-failed', signal: new AbortController().signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(failed, Error);
    assert.match((failed as Error).message, /directory|open/i);
    assert.match((failed as Error).stack ?? '', /engines\.ts/, 'a frame of the worker thread, where it was thrown');
  } finally {
    tmp.remove();
  }
});

test('the launching thread renews the workers\' rebuild leases while they run', async () => {
  const tmp = tempDir();
  try {
    const config = loadConfig({ SVC_DATA_DIR: tmp.dir, SVC_LEASE_TTL_MS: '1000', SVC_LEASE_RENEW_MS: '100' });
    const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
    // Long enough that the workers hold their leases for several renewal periods (about 600 ms against 100):
    // with 600 changes they held them for 15-190 ms after taking them, and one run in six saw no renewal.
    for (const e of history(8000)) await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    await events.close();
    const engines = await openEngines(config);
    try {
      await engines.reads.ensureCollection(snapshotSpec);
      const projectors = loadAppModel(config).projectors;
      const renewed = new Map<string, number>();
      const asked = new Set<string>();
      const leases: LeaseStore = {
        acquireLease: (...a) => engines.reads.acquireLease(...a),
        releaseLease: (...a) => engines.reads.releaseLease(...a),
        getLease: (name) => engines.reads.getLease(name),
        renewLease: async (name, owner, ttlMs) => {
          asked.add(`${name} ${owner}`);
          const ok = await engines.reads.renewLease(name, owner, ttlMs);
          if (ok) renewed.set(name, (renewed.get(name) ?? 0) + 1);
          return ok;
        },
      };
      const done = await rebuildInWorker(config, { workers: 2, batchSize: 5, leases })(projectors, { owner: 'test-kept', signal: new AbortController().signal });
      assert.is(done.phase, 'done');
      assert.equal([...asked].sort(), projectors.map((p) => `${rebuildLease(p.name)} test-kept`).sort(), 'every lease of the rebuild, by its owner');
      assert.ok(renewed.size > 0, 'renewed while the workers held them');
      for (const p of projectors) assert.is(await engines.reads.getLease(rebuildLease(p.name)), null, `${p.name}: released at the end, not kept alive`);
    } finally {
      await engines.close();
    }
  } finally {
    tmp.remove();
  }
});

test.run();
