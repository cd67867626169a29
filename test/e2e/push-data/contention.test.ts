/**
 * Pushes that touch the same record at the same time (parallel sync workers): none may fail
 * because another touched the record; all are applied, in some order, to one project.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { adminObject, defineApi, EXAMPLE_CONTROL, plain, type Api } from '../../support/push-data.ts';
import { call } from '../../support/fixtures.ts';
import { startTestService, type TestService } from '../../support/service.ts';

interface Ctx {
  svc: TestService;
  api: Api;
}
const test = suite<Ctx>('Push data under contention', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.api = await defineApi(ctx.svc, EXAMPLE_CONTROL);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const newUser = async (ctx: Ctx, username: string) => {
  const made = await call(ctx.svc, '/api/admin/users', { method: 'POST', body: { username, name: { first: 'Par', last: 'Allel' } } });
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
