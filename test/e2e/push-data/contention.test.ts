/**
 * Pushes that touch the same record at the same time (parallel sync workers): none may fail
 * because another touched the record; all are applied, in some order, to one project.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminObject, defineApi, EXAMPLE_CONTROL, plain, type Api, type PushBody } from '../../support/push-data.ts';
import { basic, call } from '../../support/fixtures.ts';
import { WrongExpectedRevisionError } from '../../../src/events/event-store.ts';
import { startTestService, type TestService } from '../../support/service.ts';

interface Ctx {
  svc: TestService;
  api: Api;
}
const test = suite<Ctx>('Push data under contention', {} as Ctx);

test.before(async (ctx) => {
  // A bound no busy test machine reaches: queueing, not the bound, is what these tests are about.
  ctx.svc = await startTestService({ SVC_WAIT_TIMEOUT_MS: '60000' });
  ctx.api = await defineApi(ctx.svc, EXAMPLE_CONTROL);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const newUser = async ({ svc }: { svc: TestService }, username: string) => {
  const made = await call(svc, '/api/admin/users', { method: 'POST', body: { username, name: { first: 'Par', last: 'Allel' } } });
  assert.is(made.status, 201, JSON.stringify(made.body));
};

const pushAll = (ctx: Ctx, username: string, titles: string[]) =>
  Promise.all(titles.map((title) => ctx.api.push({ username, title })));

test('50 parallel pushes for one user all answer 200 and leave one project', async (ctx) => {
  await newUser(ctx, 'contended');
  const titles = Array.from({ length: 50 }, (_, i) => `Title ${i}`);
  const replies = await pushAll(ctx, 'contended', titles);
  const failed = replies.filter((r) => r.status !== 200 || r.body.result !== 'success');
  assert.equal(failed.map((r) => `${r.status} ${r.text.slice(0, 200)}`), [], `${failed.length} of 50 failed`);
  const refs = new Set(replies.flatMap((r) => r.body.actions[0]!.changed.map((c) => c.ref)));
  assert.is(refs.size, 1, `one project for one user, got ${refs.size}`);
  const created = replies.filter((r) => r.body.actions[0]!.changed.some((c) => c.new));
  assert.is(created.length, 1, 'exactly one push created the project');
  // Every push saved (no two titles equal), so the project went through 50 versions; the last title stands.
  const saves = replies.filter((r) => r.body.actions[0]!.changed.length === 1).length;
  assert.is(saves, 50, 'every push saved its title');
  const project = await adminObject(ctx.svc, [...refs][0]!);
  assert.is(project.recordVersion, 50, 'one version per push');
  assert.ok(titles.includes(plain(project, 'dc:attribute:title')[0] as string));
});

test('50 parallel pushes for one user whose project exists: every title applied, one version each', async (ctx) => {
  await newUser(ctx, 'contended-existing');
  const first = await ctx.api.push({ username: 'contended-existing', title: 'First' });
  assert.is(first.status, 200, first.text);
  const ref = first.body.actions[0]!.changed[0]!.ref;
  const titles = Array.from({ length: 50 }, (_, i) => `Existing ${i}`);
  const replies = await pushAll(ctx, 'contended-existing', titles);
  const failed = replies.filter((r) => r.status !== 200 || r.body.result !== 'success');
  assert.equal(failed.map((r) => `${r.status} ${r.text.slice(0, 200)}`), [], `${failed.length} of 50 failed`);
  for (const r of replies) assert.equal(r.body.actions[0]!.changed.map((c) => [c.ref, c.new]), [[ref, false]]);
  const project = await adminObject(ctx.svc, ref);
  assert.is(project.recordVersion, 51, 'the first version and one per push');
  assert.ok(titles.includes(plain(project, 'dc:attribute:title')[0] as string));
});

test('parallel pushes for several users, each user contended, keep one project each', async (ctx) => {
  const users = ['u-a', 'u-b', 'u-c', 'u-d'];
  for (const u of users) await newUser(ctx, u);
  const replies = await Promise.all(users.flatMap((u) => Array.from({ length: 10 }, (_, i) => ctx.api.push({ username: u, title: `${u} ${i}` }))));
  assert.equal(replies.filter((r) => r.status !== 200).map((r) => r.text.slice(0, 200)), []);
  users.forEach((u, n) => {
    const mine = replies.slice(n * 10, n * 10 + 10);
    const refs = new Set(mine.flatMap((r) => r.body.actions[0]!.changed.map((c) => c.ref)));
    assert.is(refs.size, 1, `${u}: one project`);
    assert.is(mine.filter((r) => r.body.actions[0]!.changed.some((c) => c.new)).length, 1, `${u}: created once`);
  });
  const projects = new Set(replies.flatMap((r) => r.body.actions[0]!.changed.map((c) => c.ref)));
  assert.is(projects.size, users.length, 'one project per user');
});

test.run();

// ---------------------------------------------------------------------------------------------
// A record that cannot commit within the time bound (SVC_WAIT_TIMEOUT_MS)

interface BusyCtx {
  svc: TestService;
  json: Api;
  xml: Api;
}
const busy = suite<BusyCtx>('Push data: a record that keeps conflicting past the time bound', {} as BusyCtx);

/** Two records per push: the json reader takes an array of them. */
const BATCH_CONTROL = { ...EXAMPLE_CONTROL, files: { DEFAULT: { read: 'json' } } };

busy.before(async (ctx) => {
  // Short, so that the bound is reached soon, yet long enough for a retry after the first conflict
  // however busy the machine; the tests wait for the read models themselves.
  ctx.svc = await startTestService({ SVC_WAIT_TIMEOUT_MS: '1000' });
  ctx.json = await defineApi(ctx.svc, BATCH_CONTROL);
  ctx.xml = await defineApi(ctx.svc, BATCH_CONTROL, { response: 'XML' });
});
busy.after(async (ctx) => {
  await ctx.svc?.stop();
});

/**
 * Every append touching `stream` is refused as if another process had just written it (what the
 * store answers to a stale expected revision), until `stop()`; it counts the refusals.
 */
const keepConflicting = (svc: TestService, stream: string) => {
  const events = svc.engines.events;
  const appendMany = events.appendMany;
  let refused = 0;
  events.appendMany = async (appends) => {
    const hit = appends.find((a) => a.stream === stream);
    if (!hit) return appendMany.call(events, appends);
    refused += 1;
    throw new WrongExpectedRevisionError(stream, hit.expectedRevision ?? 'any', 1_000_000 + refused);
  };
  return {
    get refused() {
      return refused;
    },
    stop() {
      events.appendMany = appendMany;
    },
  };
};

/** Read models caught up with the whole log (the service's own wait is bounded by the small SVC_WAIT_TIMEOUT_MS). */
const settled = async (svc: TestService) => svc.runner.waitFor(await svc.engines.events.headPosition(), { timeoutMs: 30_000 });

const projectOf = async (ctx: BusyCtx, username: string, title: string) => {
  await newUser(ctx, username);
  const first = await ctx.json.push([{ username, title }]);
  assert.is(first.status, 200, first.text);
  return first.body.actions[0]!.changed[0]!.ref as string;
};

/** A push, with the response's headers. */
const pushTo = async (svc: TestService, api: Api, records: unknown, headers: Record<string, string> = {}) => {
  const res = await svc.request(`/api/push-data/${api.url}`, { admin: false, method: 'POST', body: JSON.stringify(records), headers: { Authorization: basic(api.key), ...headers } });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, contentType, text, body: (contentType.includes('json') ? JSON.parse(text) : undefined) as PushBody };
};

busy('answers 503 with Retry-After in push-data shape; the record before it stays, the busy one changes nothing', async (ctx) => {
  const free = await projectOf(ctx, 'busy-free', 'Free 0');
  const contended = await projectOf(ctx, 'busy-contended', 'Contended 0');
  const conflicts = keepConflicting(ctx.svc, `object-${contended}`);
  let reply;
  try {
    reply = await pushTo(ctx.svc, ctx.json, [
      { username: 'busy-free', title: 'Free 1' },
      { username: 'busy-contended', title: 'Contended 1' },
      { username: 'busy-free', title: 'Free 2' },
    ]);
  } finally {
    conflicts.stop();
  }
  assert.is(reply.status, 503, reply.text);
  assert.is(reply.headers.get('retry-after'), '1');
  assert.ok(reply.contentType.startsWith('application/json'), reply.contentType);
  assert.ok(conflicts.refused >= 2, `retried after the first conflict (${conflicts.refused} refused)`);
  const body = reply.body;
  assert.is(body.result, 'error');
  assert.is(body.applied, 1, 'record 0 was committed');
  assert.is(body.failures, 0);
  assert.equal(body.actions, [{ record: 'record 0', changed: [{ kind: 'object:save', destination: 'phd:project', ref: free, new: false }] }], 'record 2 was not run');
  assert.is(body.errors.length, 1, JSON.stringify(body.errors));
  assert.match(body.errors[0]!, /^Busy: record 1 could not be committed within 1000 ms/);
  await settled(ctx.svc);
  const freeProject = await adminObject(ctx.svc, free);
  assert.equal(plain(freeProject, 'dc:attribute:title'), ['Free 1']);
  assert.is(freeProject.recordVersion, 2);
  const contendedProject = await adminObject(ctx.svc, contended);
  assert.equal(plain(contendedProject, 'dc:attribute:title'), ['Contended 0'], 'the busy record changed nothing');
  assert.is(contendedProject.recordVersion, 1);
  // Once the conflicts stop, the same push goes through.
  const again = await ctx.json.push([{ username: 'busy-contended', title: 'Contended 1' }]);
  assert.is(again.status, 200, again.text);
});

busy('answers 503 in the API\'s response format (XML)', async (ctx) => {
  const contended = await projectOf(ctx, 'busy-xml', 'Xml 0');
  const conflicts = keepConflicting(ctx.svc, `object-${contended}`);
  let reply;
  try {
    reply = await pushTo(ctx.svc, ctx.xml, [{ username: 'busy-xml', title: 'Xml 1' }]);
  } finally {
    conflicts.stop();
  }
  assert.is(reply.status, 503, reply.text);
  assert.is(reply.headers.get('retry-after'), '1');
  assert.ok(reply.contentType.startsWith('application/xml'), reply.contentType);
  assert.match(reply.text, /<response result="error" applied="0" failures="0" errorCount="0"><errors><error>Busy: record 0 could not be committed within 1000 ms[^<]*<\/error><\/errors><actions><\/actions><\/response>/);
});

busy('a busy answer is not kept for its Idempotency-Key: the retry runs the push', async (ctx) => {
  const contended = await projectOf(ctx, 'busy-key', 'Key 0');
  const push = [{ username: 'busy-key', title: 'Key 1' }];
  const headers = { 'Idempotency-Key': 'busy-key-1' };
  const conflicts = keepConflicting(ctx.svc, `object-${contended}`);
  let first;
  try {
    first = await pushTo(ctx.svc, ctx.json, push, headers);
  } finally {
    conflicts.stop();
  }
  assert.is(first.status, 503, first.text);
  const retry = await pushTo(ctx.svc, ctx.json, push, headers);
  assert.is(retry.status, 200, retry.text);
  assert.is(retry.headers.get('idempotent-replayed'), null, 'run, not replayed');
  assert.equal(retry.body.actions[0]!.changed, [{ kind: 'object:save', destination: 'phd:project', ref: contended, new: false }]);
  const replay = await pushTo(ctx.svc, ctx.json, push, headers);
  assert.is(replay.status, 200);
  assert.is(replay.headers.get('idempotent-replayed'), 'true', 'the success is what the key keeps');
  assert.is(replay.text, retry.text);
});

busy('an admin object command that keeps conflicting answers a JSON 503 with Retry-After and changes nothing', async (ctx) => {
  const contended = await projectOf(ctx, 'busy-admin', 'Admin 0');
  const conflicts = keepConflicting(ctx.svc, `object-${contended}`);
  let reply;
  try {
    reply = await call(ctx.svc, `/api/admin/objects/${contended}`, { method: 'PATCH', body: { attributes: { 'dc:attribute:title': 'Admin 1' } } });
  } finally {
    conflicts.stop();
  }
  assert.is(reply.status, 503, JSON.stringify(reply.body));
  assert.is(reply.headers.get('retry-after'), '1');
  assert.is(reply.body.success, false);
  assert.is(reply.body.kind, 'svc:api:busy');
  assert.ok(conflicts.refused >= 2, `retried (${conflicts.refused} refused)`);
  await settled(ctx.svc);
  assert.equal(plain(await adminObject(ctx.svc, contended), 'dc:attribute:title'), ['Admin 0']);
});

busy.run();
