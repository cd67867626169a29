/**
 * Push-data keeps what it reads between requests (stream states, REST API definitions, profile
 * refs) and commits records in groups. These tests change things behind its back (admin API,
 * direct appends, a second store on the same file) and check that the next push sees the change.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { GroupCommit } from '../../../src/commands/appending/group-commit.ts';
import { LogWatch, StreamStates } from '../../../src/commands/appending/stream-states.ts';
import { eventDecoder } from '../../../src/events/decode.ts';
import { domainCodecs } from '../../../src/events/codecs.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { WrongExpectedRevisionError, type EventStore, type ReadStreamOptions, type StreamAppend } from '../../../src/events/event-store.ts';
import { evolveObjectState, type ObjectState } from '../../../src/domain/objects/object.ts';
import type { ObjectEvent } from '../../../src/domain/objects/events.ts';
import { call } from '../../support/fixtures.ts';
import { adminObject, defineApi, EXAMPLE_CONTROL, expectSuccess, plain, type Api } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { tempDir } from '../../support/tmp.ts';

const TITLE = 'dc:attribute:title';

// ---------------------------------------------------------------------------------------------
// End to end

interface Ctx {
  svc: TestService;
  api: Api;
}
const e2e = suite<Ctx>('Push data: kept state is never stale', {} as Ctx);

e2e.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.api = await defineApi(ctx.svc, EXAMPLE_CONTROL);
});
e2e.after(async (ctx) => {
  await ctx.svc?.stop();
});

const createUser = async (svc: TestService, username: string) => {
  const reply = await call(svc, '/api/admin/users', { method: 'POST', body: { username, name: { first: 'Kept', last: username } } });
  assert.is(reply.status, 201, JSON.stringify(reply.body));
};

e2e('an admin change between two pushes is seen: a push of the old title writes it again', async ({ svc, api }) => {
  await createUser(svc, 'kept-a');
  const first = expectSuccess(await api.push({ username: 'kept-a', title: 'Title one' }));
  const project = first.actions[0]!.changed[0]!.ref;
  expectSuccess(await api.push({ username: 'kept-a', title: 'Title two' }));
  const patched = await call(svc, `/api/admin/objects/${project}`, { method: 'PATCH', body: { attributes: { [TITLE]: 'Set by an admin' } } });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  const again = expectSuccess(await api.push({ username: 'kept-a', title: 'Title two' }));
  assert.equal(again.actions[0]!.changed, [{ kind: 'object:save', destination: 'phd:project', ref: project, new: false }], 'the push saw the admin title');
  assert.equal(plain(await adminObject(svc, project), TITLE), ['Title two']);
  const same = expectSuccess(await api.push({ username: 'kept-a', title: 'Title two' }));
  assert.equal(same.actions[0]!.changed, [], 'and knows its own write');
});

e2e('a project deleted by an admin is replaced by a new one on the next push', async ({ svc, api }) => {
  await createUser(svc, 'kept-b');
  const first = expectSuccess(await api.push({ username: 'kept-b', title: 'B one' }));
  const project = first.actions[0]!.changed[0]!.ref;
  assert.is((await call(svc, `/api/admin/objects/${project}`, { method: 'DELETE' })).status, 200);
  const next = expectSuccess(await api.push({ username: 'kept-b', title: 'B two' }));
  const saved = next.actions[0]!.changed[0]!;
  assert.is(saved.new, true);
  assert.is.not(saved.ref, project);
  const after = expectSuccess(await api.push({ username: 'kept-b', title: 'B three' }));
  assert.equal(after.actions[0]!.changed.map((c) => [c.ref, c.new]), [[saved.ref, false]], 'the new project is the claimed one from now on');
});

e2e('a user created after a failed look-up is found by the next push', async ({ svc, api }) => {
  const missing = await api.push({ username: 'kept-c', title: 'C' });
  assert.is(missing.status, 400, missing.text);
  await createUser(svc, 'kept-c');
  expectSuccess(await api.push({ username: 'kept-c', title: 'C' }));
});

e2e('a REST API disabled or changed by an admin answers so on the next push', async ({ svc, api }) => {
  await createUser(svc, 'kept-d');
  expectSuccess(await api.push({ username: 'kept-d', title: 'D' }));
  assert.is((await call(svc, `/api/admin/rest-apis/${api.url}`, { method: 'PUT', body: { enabled: false } })).status, 200);
  const disabled = await api.push({ username: 'kept-d', title: 'D2' });
  assert.is(disabled.status, 400);
  assert.equal(disabled.body.errors, [`API is disabled: ${api.url}`]);
  assert.is((await call(svc, `/api/admin/rest-apis/${api.url}`, { method: 'PUT', body: { enabled: true, response: 'XML' } })).status, 200);
  const xml = await api.push({ username: 'kept-d', title: 'D3' });
  assert.is(xml.status, 200);
  assert.match(xml.contentType, 'application/xml');
  assert.is((await call(svc, `/api/admin/rest-apis/${api.url}`, { method: 'PUT', body: { response: 'JSON' } })).status, 200);
});

e2e('concurrent pushes for one user all land, in some order, and the log holds one event each', async ({ svc, api }) => {
  await createUser(svc, 'kept-e');
  const project = expectSuccess(await api.push({ username: 'kept-e', title: 'E0' })).actions[0]!.changed[0]!.ref;
  const before = await svc.engines.events.headPosition();
  const titles = Array.from({ length: 40 }, (_, i) => `E${i + 1}`);
  const replies = await Promise.all(titles.map((title) => api.push({ username: 'kept-e', title })));
  for (const r of replies) assert.equal(expectSuccess(r).actions[0]!.changed.map((c) => c.ref), [project]);
  assert.is((await svc.engines.events.headPosition()) - before, titles.length);
  const final = plain(await adminObject(svc, project), TITLE)[0] as string;
  assert.ok(titles.includes(final), final);
  const again = expectSuccess(await api.push({ username: 'kept-e', title: final }));
  assert.equal(again.actions[0]!.changed, [], 'the kept state is the stored one');
});

e2e.run();

// ---------------------------------------------------------------------------------------------
// Stream states, log watch and group commit over a real embedded store

interface Store {
  tmp: { dir: string; remove(): void };
  events: SqliteEventStore;
  reads: number;
}
const unit = suite<Store>('Kept stream states and group commit', {} as Store);

unit.before.each((ctx) => {
  ctx.tmp = tempDir('kept-state');
  ctx.events = openSqliteEventStore(join(ctx.tmp.dir, 'events.db'));
  ctx.reads = 0;
});
unit.after.each(async (ctx) => {
  await ctx.events.close();
  ctx.tmp.remove();
});

const decode = eventDecoder(domainCodecs);

/** The store, counting stream reads. */
const counting = (ctx: Store): EventStore =>
  new Proxy(ctx.events, {
    get(target, prop, receiver) {
      if (prop === 'readStream') {
        return (stream: string, options?: ReadStreamOptions) => {
          ctx.reads += 1;
          return target.readStream(stream, options);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });

const created = (ref: string, title: string): ObjectEvent => ({
  type: 'ObjectCreated',
  data: { ref, objectType: 'phd:type:project', attributes: { [TITLE]: [{ type: 'text', value: title }] }, labels: [] },
});
const retitled = (ref: string, title: string): ObjectEvent => ({ type: 'ObjectAttributesChanged', data: { ref, set: { [TITLE]: [{ type: 'text', value: title }] } } });
const append = (stream: string, events: ObjectEvent[], expectedRevision: StreamAppend['expectedRevision']): StreamAppend => ({
  stream,
  events: events.map((e) => ({ id: crypto.randomUUID(), type: e.type, data: e.data, metadata: {} })),
  expectedRevision,
});

/** The state as a fold of the whole stream gives it. */
const fullFold = async (events: EventStore, stream: string): Promise<{ state: ObjectState | null; revision: number }> => {
  let state: ObjectState | null = null;
  let revision = -1;
  for await (const e of events.readStream(stream)) {
    state = evolveObjectState(state, decode<ObjectEvent>(e));
    revision = e.revision;
  }
  return { state, revision };
};

unit('own appends are folded in without reading; the result equals a fold of the stream', async (ctx) => {
  const events = counting(ctx);
  const watch = new LogWatch(events);
  const states = new StreamStates(events, decode, evolveObjectState, watch);
  const commits = new GroupCommit(events, (a, r) => watch.appended(a, r));
  await ctx.events.append('object-a', [{ type: 'ObjectCreated', data: created('a', 'one').data }], 'no_stream');
  const first = await states.load('object-a');
  assert.is(first.revision, 0);
  assert.is(ctx.reads, 1);
  const plan = append('object-a', [retitled('a', 'two'), retitled('a', 'three')], 0);
  const [result] = await commits.appendMany([plan]);
  states.appended(plan, result!);
  const after = await states.load('object-a');
  assert.is(ctx.reads, 1, 'no read: the own append was folded in');
  assert.equal(after, await fullFold(ctx.events, 'object-a'));
  assert.equal(after.state!.attributes[TITLE], [{ type: 'text', value: 'three' }]);
});

unit('appends made elsewhere (same store, another store on the file) are read on the next load', async (ctx) => {
  const events = counting(ctx);
  const watch = new LogWatch(events);
  const states = new StreamStates(events, decode, evolveObjectState, watch);
  await ctx.events.append('object-b', [{ type: 'ObjectCreated', data: created('b', 'one').data }], 'no_stream');
  await states.load('object-b');
  await states.load('object-b');
  assert.is(ctx.reads, 1, 'an unchanged log is not read again');
  await ctx.events.append('object-b', [{ type: 'ObjectAttributesChanged', data: retitled('b', 'by a command').data }], 0);
  assert.equal((await states.load('object-b')).state!.attributes[TITLE], [{ type: 'text', value: 'by a command' }]);
  const other = openSqliteEventStore(join(ctx.tmp.dir, 'events.db'));
  try {
    await other.append('object-b', [{ type: 'ObjectAttributesChanged', data: retitled('b', 'by another process').data }], 1);
  } finally {
    await other.close();
  }
  const seen = await states.load('object-b');
  assert.equal(seen, await fullFold(ctx.events, 'object-b'));
  assert.equal(seen.state!.attributes[TITLE], [{ type: 'text', value: 'by another process' }]);
});

unit('after an own append, a foreign append to the same stream is still read', async (ctx) => {
  const events = counting(ctx);
  const watch = new LogWatch(events);
  const states = new StreamStates(events, decode, evolveObjectState, watch);
  const commits = new GroupCommit(events, (a, r) => watch.appended(a, r));
  await ctx.events.append('object-c', [{ type: 'ObjectCreated', data: created('c', 'one').data }], 'no_stream');
  await states.load('object-c');
  // Own append, then a foreign one to the same stream: the head moved beyond what this process wrote.
  const plan = append('object-c', [retitled('c', 'own')], 0);
  states.appended(plan, (await commits.appendMany([plan]))[0]!);
  await ctx.events.append('object-c', [{ type: 'ObjectAttributesChanged', data: retitled('c', 'foreign').data }], 1);
  assert.equal((await states.load('object-c')).state!.attributes[TITLE], [{ type: 'text', value: 'foreign' }]);
});

unit('a load of a stream whose append waits in the group commit answers the state after that append', async (ctx) => {
  const events = counting(ctx);
  const watch = new LogWatch(events);
  const commits = new GroupCommit(events, (a, r) => watch.appended(a, r));
  const states = new StreamStates(events, decode, evolveObjectState, watch, commits);
  await ctx.events.append('object-w', [{ type: 'ObjectCreated', data: created('w', 'one').data }], 'no_stream');
  await states.load('object-w');
  const plan = append('object-w', [retitled('w', 'two')], 0);
  const written = commits.appendMany([plan]).then(([result]) => states.appended(plan, result!));
  const loaded = await states.load('object-w');
  await written;
  assert.is(loaded.revision, 1);
  assert.equal(loaded.state!.attributes[TITLE], [{ type: 'text', value: 'two' }]);
  assert.is(ctx.reads, 1, 'the own append was folded in, not read');
});

unit('group commit: a stale revision fails only its own submission', async (ctx) => {
  const commits = new GroupCommit(ctx.events);
  await ctx.events.append('object-d', [{ type: 'ObjectCreated', data: created('d', 'one').data }], 'no_stream');
  await ctx.events.append('object-e', [{ type: 'ObjectCreated', data: created('e', 'one').data }], 'no_stream');
  const outcomes = await Promise.allSettled([
    commits.appendMany([append('object-d', [retitled('d', 'first')], 0)]),
    commits.appendMany([append('object-d', [retitled('d', 'second')], 0)]),
    commits.appendMany([append('object-e', [retitled('e', 'other')], 0), append('object-f', [created('f', 'new')], 'no_stream')]),
  ]);
  assert.is(outcomes[0].status, 'fulfilled');
  assert.is(outcomes[1].status, 'rejected');
  assert.instance((outcomes[1] as PromiseRejectedResult).reason, WrongExpectedRevisionError);
  assert.is(outcomes[2].status, 'fulfilled');
  assert.is((outcomes[2] as PromiseFulfilledResult<unknown[]>).value.length, 2, 'one result per stream append');
  assert.equal((await fullFold(ctx.events, 'object-d')).state!.attributes[TITLE], [{ type: 'text', value: 'first' }]);
  assert.is((await fullFold(ctx.events, 'object-e')).revision, 1);
  assert.is((await fullFold(ctx.events, 'object-f')).revision, 0);
  assert.is(await ctx.events.headPosition(), 5, 'nothing written twice');
});

unit('group commit: submissions of one turn share one append', async (ctx) => {
  let calls = 0;
  const events = new Proxy(ctx.events, {
    get(target, prop, receiver) {
      if (prop === 'appendMany') {
        return (appends: readonly StreamAppend[]) => {
          calls += 1;
          return target.appendMany(appends);
        };
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const commits = new GroupCommit(events);
  const results = await Promise.all(['g', 'h', 'i'].map((ref) => commits.appendMany([append(`object-${ref}`, [created(ref, ref)], 'no_stream')])));
  assert.is(calls, 1);
  assert.equal(results.map((r) => r.map((x) => x.position)), [[1], [2], [3]]);
});

unit('kept states are bounded in bytes: large states push the least recently used out, small ones are kept by the thousand', async (ctx) => {
  const events = counting(ctx);
  const watch = new LogWatch(events);
  const commits = new GroupCommit(events, (a, r) => watch.appended(a, r));
  const bound = 64 * 1024;
  const states = new StreamStates(events, decode, evolveObjectState, watch, commits, bound);
  // Forty objects of about 10 KB each, loaded from the store: about six fit.
  const big = 'x'.repeat(10_000);
  await ctx.events.appendMany(Array.from({ length: 40 }, (_, i) => append(`object-big${i}`, [created(`big${i}`, big)], 'no_stream')));
  for (let i = 0; i < 40; i++) await states.load(`object-big${i}`);
  assert.ok(states.size <= bound / 10_000, `${states.size} states of 10 KB kept under a bound of ${bound} bytes`);
  assert.ok(states.size >= 3, `${states.size} kept: the bound is used`);
  // The most recently loaded is kept (no read); the first was dropped (read again).
  const reads = ctx.reads;
  await states.load('object-big39');
  assert.is(ctx.reads, reads, 'the latest is kept');
  await states.load('object-big0');
  assert.is(ctx.reads, reads + 1, 'the oldest was dropped');
  // A state that grows by own appends is counted as it grows.
  const plan = append('object-big39', Array.from({ length: 8 }, (_, i) => retitled('big39', `${i}${big}`)), 0);
  states.appended(plan, (await commits.appendMany([plan]))[0]!);
  assert.ok(states.size <= bound / 10_000);
  // Small states: many fit.
  await ctx.events.appendMany(Array.from({ length: 300 }, (_, i) => append(`object-s${i}`, [created(`s${i}`, 'small')], 'no_stream')));
  for (let i = 0; i < 300; i++) await states.load(`object-s${i}`);
  assert.ok(states.size >= 100, `${states.size} small states kept`);
});

unit.run();
