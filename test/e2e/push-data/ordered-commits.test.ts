/**
 * A record's commit on an engine without multi-stream transactions (EventStoreDB / KurrentDB before 25.1, where
 * `appendMany` appends stream after stream and stops at the first failure). The embedded store is atomic, so here
 * its `appendMany` is replaced by that ordered behaviour, and "another process" writes straight to the store to win
 * a race at the moment this process commits. A lost race must leave nothing behind: one project per user, one
 * profile per user.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AppendResult, EventStore, StreamAppend } from '../../../src/events/event-store.ts';
import type { Doc, ReadStore } from '../../../src/projections/read-store.ts';
import { USERS } from '../../../src/projections/read-models.ts';
import { encodeRef } from '../../../src/domain/objects/ref.ts';
import { call } from '../../support/fixtures.ts';
import { adminObject, control, defineApi, EXAMPLE_CONTROL, expectSuccess, plain, type Api } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SYNC = control('svc:user-sync', [
  { source: 'username', destination: 'user', name: 'username' },
  { source: 'first', destination: 'user', name: 'nameFirst' },
  { source: 'last', destination: 'user', name: 'nameLast' },
  { source: 'email', destination: 'user', name: 'email' },
]);

interface Ctx {
  svc: TestService;
  projects: Api;
  sync: Api;
}
const test = suite<Ctx>('Push data: record commits on an engine that appends stream after stream', {} as Ctx);

type AppendMany = EventStore['appendMany'];

/** The store's own appendMany, and a hook in its place for one test. */
const engine = (ctx: Ctx) => {
  const store = ctx.svc.engines.events as EventStore & { appendMany: AppendMany };
  const atomic: AppendMany = ownAppendMany(store);
  /** What KurrentDB without multiStreamAppend does: each stream on its own, in order, stopping at the first failure. */
  const inOrder: AppendMany = async (appends) => {
    const results: AppendResult[] = [];
    for (const a of appends) results.push(...(await atomic([a])));
    return results;
  };
  return {
    atomic,
    inOrder,
    hook(appendMany: AppendMany) {
      store.appendMany = appendMany;
    },
    restore() {
      delete (store as { appendMany?: AppendMany }).appendMany;
    },
  };
};
const ownAppendMany = (store: EventStore): AppendMany => Object.getPrototypeOf(store).appendMany.bind(store);

/** The same appends as another process would make them for its own record: its own event ids, each `[from, to]` replaced everywhere. */
const asOtherProcess = (appends: readonly StreamAppend[], ...replace: [string, string][]): StreamAppend[] => {
  const swap = (text: string) => replace.reduce((t, [from, to]) => t.replaceAll(from, to), text);
  return appends.map((a) => ({
    stream: swap(a.stream),
    expectedRevision: a.expectedRevision,
    events: a.events.map((e) => ({
      id: randomUUID(),
      type: e.type,
      data: JSON.parse(swap(JSON.stringify(e.data))),
      metadata: { correlationId: 'another-process', actor: 'test' },
    })),
  }));
};

const objectRefOf = (appends: readonly StreamAppend[]) => appends.find((a) => a.stream.startsWith('object-'))!.stream.slice('object-'.length);
const otherRef = () => encodeRef(randomBytes(8));

/** Objects created (of any type) after log position `after`, by ref. */
const createdSince = async (ctx: Ctx, after: number): Promise<string[]> => {
  const refs: string[] = [];
  for await (const e of ctx.svc.engines.events.readAll({ after, types: ['ObjectCreated'] })) refs.push((e.data as { ref: string }).ref);
  return refs;
};

const newUser = async (ctx: Ctx, username: string) => {
  const made = await call(ctx.svc, '/api/admin/users', { method: 'POST', body: { username, name: { first: 'Race', last: 'Lost' } } });
  assert.is(made.status, 201, JSON.stringify(made.body));
};

const userDoc = async (ctx: Ctx, username: string) => {
  const reply = await call(ctx.svc, `/api/admin/users/${username}`);
  return reply.status === 200 ? reply.body : null;
};

/** Waits (bounded) until the read model shows `username` with profile `ref`. */
const untilUserHasProfile = async (ctx: Ctx, username: string, ref: string) => {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if ((await userDoc(ctx, username))?.profileRef === ref) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.unreachable(`the read model never showed ${username} with profile ${ref}`);
};

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.projects = await defineApi(ctx.svc, EXAMPLE_CONTROL);
  ctx.sync = await defineApi(ctx.svc, SYNC);
});
test.after.each((ctx) => {
  engine(ctx).restore();
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('a new dependent is committed claim first, then its object', async (ctx) => {
  await newUser(ctx, 'order-check');
  const e = engine(ctx);
  const calls: string[][] = [];
  e.hook(async (appends) => {
    calls.push(appends.map((a) => a.stream));
    return e.inOrder(appends);
  });
  expectSuccess(await ctx.projects.push({ username: 'order-check', title: 'Ordered' }));
  assert.is(calls.length, 1, JSON.stringify(calls));
  assert.is(calls[0]!.length, 2);
  assert.match(calls[0]![0]!, /^dependent-/, 'the claim, which can lose a race, goes first');
  assert.match(calls[0]![1]!, /^object-/, 'the new object, which only this record can create, goes last');
});

test('a claim lost to another process leaves no second project: the retry updates the winner’s', async (ctx) => {
  await newUser(ctx, 'claim-race');
  const start = await ctx.svc.engines.events.headPosition();
  const e = engine(ctx);
  let winner: string | undefined;
  e.hook(async (appends) => {
    if (winner === undefined && appends.some((a) => a.stream.startsWith('dependent-'))) {
      winner = otherRef();
      await e.atomic(asOtherProcess(appends, [objectRefOf(appends), winner], ['After the race', 'The winner’s title']));
    }
    return e.inOrder(appends);
  });
  const reply = expectSuccess(await ctx.projects.push({ username: 'claim-race', title: 'After the race' }));
  assert.ok(winner, 'the race was run');
  assert.equal(await createdSince(ctx, start), [winner], 'only the winner’s project was ever created');
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[winner, false]], 'the retry saved the winner’s project');
  assert.equal(plain(await adminObject(ctx.svc, winner!), 'dc:attribute:title'), ['After the race']);
});

test('a user created by another process first leaves no second profile: user first, profile after', async (ctx) => {
  const start = await ctx.svc.engines.events.headPosition();
  const e = engine(ctx);
  let winner: string | undefined;
  const calls: string[][] = [];
  e.hook(async (appends) => {
    calls.push(appends.map((a) => a.stream));
    if (winner === undefined && appends.some((a) => a.stream === 'user-synced' && a.expectedRevision === 'no_stream')) {
      winner = otherRef();
      await e.atomic(asOtherProcess(appends, [objectRefOf(appends), winner], ['Lovelace', 'Byron']));
      // Isolates the order: the retry then finds the winner's profile through the users read model.
      await untilUserHasProfile(ctx, 'synced', winner);
    }
    return e.inOrder(appends);
  });
  const reply = expectSuccess(await ctx.sync.push({ username: 'synced', first: 'Ada', last: 'Lovelace', email: 'ada@example.com' }));
  assert.ok(winner, 'the race was run');
  assert.equal(calls[0]!.map((s) => s.replace(/-.*/, '')), ['user', 'object'], 'the user, which can lose a race, goes first');
  assert.equal(await createdSince(ctx, start), [winner], 'only the winner’s profile was ever created');
  assert.is((await userDoc(ctx, 'synced')).profileRef, winner);
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[winner, false]], 'the retry saved the winner’s profile');
  assert.is((await adminObject(ctx.svc, winner!)).title, 'Ada Lovelace');
});

test('a user race lost to this same code finds the winner’s profile by its derived ref while the users read model lags', async (ctx) => {
  const start = await ctx.svc.engines.events.headPosition();
  const e = engine(ctx);
  let raced = false;
  e.hook(async (appends) => {
    if (!raced && appends.some((a) => a.stream === 'user-twin' && a.expectedRevision === 'no_stream')) {
      raced = true;
      // Another process running this code chose the same profile ref for the same new user.
      await e.atomic(asOtherProcess(appends, ['Sync', 'Other']));
    }
    return e.inOrder(appends);
  });
  // The users read model of a busy cluster has not caught up with the other process's user yet.
  const reads = ctx.svc.engines.reads as ReadStore & { get: ReadStore['get'] };
  reads.get = async <T extends Doc>(collection: string, id: string) =>
    collection === USERS && id === 'twin' ? null : Object.getPrototypeOf(reads).get.call(reads, collection, id) as Promise<T | null>;
  let reply;
  try {
    reply = expectSuccess(await ctx.sync.push({ username: 'twin', first: 'Twin', last: 'Sync', email: 'twin@example.com' }));
  } finally {
    delete (reads as { get?: unknown }).get;
  }
  assert.ok(raced, 'the race was run');
  const created = await createdSince(ctx, start);
  assert.is(created.length, 1, `one profile, got ${created.join(', ')}`);
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[created[0], false]], 'the retry saved the winner’s profile');
  assert.is((await adminObject(ctx.svc, created[0]!)).title, 'Twin Sync');
  await untilUserHasProfile(ctx, 'twin', created[0]!);
});

test('a commit cut off after its claim is finished under the claimed ref by the next push', async (ctx) => {
  await newUser(ctx, 'cut-off');
  const start = await ctx.svc.engines.events.headPosition();
  const e = engine(ctx);
  let cut = false;
  e.hook(async (appends) => {
    if (!cut && appends.some((a) => a.stream.startsWith('dependent-'))) {
      cut = true;
      await e.atomic(appends.slice(0, 1));
      throw new Error('connection to the event store lost');
    }
    return e.inOrder(appends);
  });
  const failed = await ctx.projects.push({ username: 'cut-off', title: 'First try' });
  assert.ok(cut, 'the commit was cut off');
  assert.is(failed.body.result, 'error', failed.text);
  assert.equal(await createdSince(ctx, start), [], 'the claim was written, the object not');
  const reply = expectSuccess(await ctx.projects.push({ username: 'cut-off', title: 'Second try' }));
  const created = await createdSince(ctx, start);
  assert.is(created.length, 1);
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[created[0], true]]);
  const claims: string[] = [];
  for await (const ev of ctx.svc.engines.events.readAll({ after: start, types: ['DependentObjectClaimed'] })) claims.push((ev.data as { ref: string }).ref);
  assert.equal(claims, created, 'one claim, naming the one project');
  const again = expectSuccess(await ctx.projects.push({ username: 'cut-off', title: 'Third try' }));
  assert.equal(again.actions[0]!.changed.map((c) => [c.ref, c.new]), [[created[0], false]]);
});

test.run();
