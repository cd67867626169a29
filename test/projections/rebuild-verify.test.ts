import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rebuildCheckpoint, rebuildProjection, type RebuildProgress } from '../../src/projections/rebuild.ts';
import { verifyProjection } from '../../src/projections/verify.ts';
import type { Projector } from '../../src/projections/projector.ts';
import { startTestService, type TestService } from '../support/service.ts';

interface Ctx {
  svc: TestService;
  refs: string[];
}
const test = suite<Ctx>('Rebuild and verify', {} as Ctx);

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
const createPerson = async (svc: TestService, i: number) => {
  const res = await json(svc, '/api/admin/objects', { type: 'svc:type:person', attributes: { 'dc:attribute:title': `Person ${i}`, 'svc:attribute:job-title': `Job ${i % 7}` } });
  return ((await res.json()) as { ref: string }).ref;
};
const projectorOf = (ctx: Ctx, name: string): Projector => ctx.svc.runner.projectors.find((p) => p.name === name)!;

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: '50' });
  ctx.refs = [];
  for (let i = 0; i < 120; i++) ctx.refs.push(await createPerson(ctx.svc, i));
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const verifyAll = async (ctx: Ctx) => {
  for (const p of ctx.svc.runner.projectors) {
    const result = await verifyProjection(ctx.svc.engines.events, ctx.svc.engines.reads, p);
    assert.ok(result.ok, `${p.name}: ${JSON.stringify(result.differences.slice(0, 2))}`);
  }
};

test('verify finds nothing wrong with read models the runner built', async (ctx) => {
  await verifyAll(ctx);
});

test('verify catches a corrupted, a missing and an unexpected document', async (ctx) => {
  const objects = projectorOf(ctx, 'objects');
  const reads = ctx.svc.engines.reads;
  const [a, b] = ctx.refs;
  const original = (await reads.get('objects', a!))!;
  const removed = (await reads.get('objects', b!))!;
  await reads.upsert('objects', { ...original, title: 'Tampered' });
  await reads.delete('objects', b!);
  await reads.upsert('objects', { id: 'zzzzzzzzzzzz', title: 'Ghost' });
  const result = await verifyProjection(ctx.svc.engines.events, reads, objects);
  assert.not.ok(result.ok);
  assert.is(result.differenceCount, 3);
  assert.equal(result.differences.map((d) => `${d.kind}:${d.id}`).sort(), [`different:${a}`, `missing:${b}`, 'unexpected:zzzzzzzzzzzz'].sort());
  await reads.upsert('objects', original);
  await reads.upsert('objects', removed);
  await reads.delete('objects', 'zzzzzzzzzzzz');
  assert.ok((await verifyProjection(ctx.svc.engines.events, reads, objects)).ok);
});

test('a rebuild under concurrent writes misses nothing and applies nothing twice', async (ctx) => {
  const objects = projectorOf(ctx, 'objects');
  let writing = true;
  const writes = (async () => {
    let i = 1000;
    while (writing) {
      const ref = await createPerson(ctx.svc, i++);
      ctx.refs.push(ref);
      await json(ctx.svc, `/api/admin/objects/${ctx.refs[i % ctx.refs.length]}`, { attributes: { 'svc:attribute:job-title': `Changed ${i}` } }, 'PATCH');
    }
  })();
  const phases: string[] = [];
  const done = await rebuildProjection({ events: ctx.svc.engines.events, reads: ctx.svc.engines.reads, projector: objects, batchSize: 25, onProgress: (p) => phases.push(p.phase) });
  writing = false;
  await writes;
  assert.is(done.phase, 'done');
  assert.ok(phases.filter((p) => p === 'building').length > 3, 'built in several batches');
  // The live runner notices its checkpoint moved and carries on from the rebuilt position.
  const head = await ctx.svc.engines.events.headPosition();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const status = (await ctx.svc.runner.status()).find((p) => p.name === 'objects')!;
    if (status.checkpoint >= head && status.state === 'live') break;
    await json(ctx.svc, `/api/admin/objects/${ctx.refs[0]}`, { attributes: { 'svc:attribute:job-title': `Nudge ${Date.now()}` } }, 'PATCH');
  }
  assert.is(await ctx.svc.engines.reads.count('objects'), ctx.refs.length);
  await verifyAll(ctx);
});

test('an interrupted rebuild shows as rebuilding and resumes where it stopped', async (ctx) => {
  const projector = projectorOf(ctx, 'collection:people');
  const controller = new AbortController();
  const seen: RebuildProgress[] = [];
  const first = await rebuildProjection({
    events: ctx.svc.engines.events,
    reads: ctx.svc.engines.reads,
    projector,
    batchSize: 40,
    signal: controller.signal,
    onProgress: (p) => {
      seen.push(p);
      if (seen.length === 2) controller.abort();
    },
  });
  assert.is(first.phase, 'interrupted');
  const stopped = first.position;
  assert.ok(stopped > 0);
  assert.equal(await ctx.svc.engines.reads.getCheckpoint(rebuildCheckpoint(projector.name)), { position: stopped });
  assert.is((await ctx.svc.runner.status()).find((p) => p.name === projector.name)?.state, 'rebuilding');
  const collection = await ctx.svc.request('/api/admin/projections');
  assert.is(collection.status, 200);

  const resumed: RebuildProgress[] = [];
  const second = await rebuildProjection({ events: ctx.svc.engines.events, reads: ctx.svc.engines.reads, projector, batchSize: 40, onProgress: (p) => resumed.push(p) });
  assert.is(second.phase, 'done');
  assert.ok(resumed[0]!.position > stopped, 'the second run started after the first one stopped');
  assert.is(await ctx.svc.engines.reads.getCheckpoint(rebuildCheckpoint(projector.name)), null);
  assert.ok((await verifyProjection(ctx.svc.engines.events, ctx.svc.engines.reads, projector)).ok);
});

test('the admin API rebuilds in the background while reads keep answering', async (ctx) => {
  const started = await ctx.svc.request(`/api/admin/projections/${encodeURIComponent('collection:people')}/rebuild`, { method: 'POST' });
  assert.is(started.status, 202);
  const again = await ctx.svc.request(`/api/admin/projections/${encodeURIComponent('collection:people')}/rebuild`, { method: 'POST' });
  assert.ok(again.status === 409 || again.status === 202, `second request: ${again.status}`);
  const objects = await ctx.svc.request('/api/admin/objects/' + ctx.refs[3]);
  assert.is(objects.status, 200);
  const deadline = Date.now() + 20_000;
  let state = '';
  while (Date.now() < deadline) {
    const list = (await (await ctx.svc.request('/api/admin/projections')).json()) as { projections: { name: string; state: string; rebuild?: { phase: string } }[] };
    const p = list.projections.find((x) => x.name === 'collection:people')!;
    state = p.rebuild?.phase ?? '';
    if (state === 'done') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.is(state, 'done');
  assert.is((await ctx.svc.request('/api/admin/projections/nope/rebuild', { method: 'POST' })).status, 404);
});

test('upcasting: a version 1 UserCreated event reads back in the current shape', async (ctx) => {
  const username = `legacy-${randomUUID().slice(0, 8)}`;
  const result = await ctx.svc.engines.events.append(`user-${username}`, [{ id: randomUUID(), type: 'UserCreated', data: { username, email: 'old@example.org' } }]);
  await ctx.svc.runner.waitFor(result.position);
  const res = await ctx.svc.request(`/api/admin/users/${username}`);
  assert.is(res.status, 200);
  const user = (await res.json()) as { groups: string[]; service: boolean; email: string; active: boolean };
  assert.equal([user.groups, user.service, user.email, user.active], [[], false, 'old@example.org', true]);
  const key = await json(ctx.svc, `/api/admin/users/${username}/api-keys`, {});
  assert.is(key.status, 201, 'the upcast user is a normal user');
});

test.run();
