import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EXAMPLE_CONTROL } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

interface Ctx {
  svc: TestService;
  key: string;
  profile: string;
}
const test = suite<Ctx>('Push data: the contract example', {} as Ctx);

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  const created = await json(ctx.svc, '/api/admin/rest-apis', { url: 'update-title', description: 'Update project title', controlFile: EXAMPLE_CONTROL });
  assert.is(created.status, 201, await created.clone().text());
  const key = await json(ctx.svc, '/api/admin/rest-apis/update-title/api-keys', {});
  assert.is(key.status, 201);
  const issued = (await key.json()) as { key: string; path: string };
  assert.is(issued.path, '=/api/push-data/update-title');
  ctx.key = issued.key;
  const user = await json(ctx.svc, '/api/admin/users', { username: 'jbloggs', name: { first: 'Joe', last: 'Bloggs' } });
  ctx.profile = ((await user.json()) as { ref: string }).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const push = (ctx: Ctx, body: string, headers: Record<string, string> = {}) =>
  ctx.svc.request('/api/push-data/update-title', {
    admin: false,
    method: 'POST',
    body,
    headers: { Authorization: `Basic ${Buffer.from(`svc:${ctx.key}`).toString('base64')}`, ...headers },
  });

const readerKey = async (ctx: Ctx) => {
  await json(ctx.svc, '/api/admin/groups', { code: 'svc:group:everything', title: 'Everything', readAll: true });
  await json(ctx.svc, '/api/admin/users', { username: 'reader', name: { first: 'Re', last: 'Ader' }, groups: ['svc:group:everything'] });
  const res = await json(ctx.svc, '/api/admin/users/reader/api-keys', { path: '/api/v0-object/' });
  return ((await res.json()) as { key: string }).key;
};

test('the first push creates the project linked to the profile; the Object API shows it at once', async (ctx) => {
  const res = await push(ctx, '{"username":"jbloggs","title":"Updated title"}');
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.match(text, '\n    "result": "success"', 'JSON is indented by 4 spaces');
  const body = JSON.parse(text) as { result: string; applied: number; errorCount: number; actions: { changed: { kind: string; destination: string; ref: string; new: boolean }[]; record: string }[] };
  assert.equal(Object.keys(body), ['result', 'applied', 'failures', 'errorCount', 'errors', 'actions']);
  assert.is(body.applied, 1);
  assert.is(body.actions[0]!.record, 'record 0');
  const [saved] = body.actions[0]!.changed;
  assert.is(saved!.destination, 'phd:project');
  assert.is(saved!.new, true);

  const key = await readerKey(ctx);
  const got = await ctx.svc.request(`/api/v0-object/ref/${saved!.ref}?sources=NONE`, {
    admin: false,
    headers: { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` },
  });
  const object = ((await got.json()) as { object: { title: string; type: { code: string }; attributes: Record<string, { ref?: string }[]> } }).object;
  assert.is(object.title, 'Updated title');
  assert.is(object.type.code, 'phd:type:project');
  assert.is(object.attributes['phd:attribute:researcher']?.[0]?.ref, ctx.profile);

  const again = await push(ctx, '{"username":"jbloggs","title":"Second title"}');
  const second = (await again.json()) as typeof body;
  assert.is(second.actions[0]!.changed[0]!.ref, saved!.ref, 'the same project is updated, not a new one');
  assert.is(second.actions[0]!.changed[0]!.new, false);

  const unchanged = (await (await push(ctx, '{"username":"jbloggs","title":"Second title"}')).json()) as typeof body;
  assert.equal(unchanged.actions[0]!.changed, [], 'an unchanged object is not saved');
});

test('an unknown username fails the record with the load error, and the project then reports the unready profile (as Haplo)', async (ctx) => {
  const res = await push(ctx, '{"username":"nobody","title":"x"}');
  assert.is(res.status, 400);
  const body = (await res.json()) as { result: string; failures: number; errors: string[] };
  assert.is(body.result, 'failure');
  assert.is(body.failures, 1);
  assert.equal(body.errors, [
    "Couldn't load destination: profile (record 0)",
    'Destination "profile" needs be made ready with a "new" or "load" instruction, required by use of phd:project (record 0)',
  ]);
});

test('GET is refused with the push-data error body', async (ctx) => {
  const res = await ctx.svc.request('/api/push-data/update-title', { admin: false });
  assert.is(res.status, 400);
  assert.equal(await res.json(), { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: ['Only POST requests supported for push data REST APIs.'] });
});

test('malformed JSON is an error result, not a 500', async (ctx) => {
  const res = await push(ctx, '{"username":');
  assert.is(res.status, 400);
  const body = (await res.json()) as { result: string; errors: string[] };
  assert.is(body.result, 'error');
  assert.match(body.errors[0]!, /^Exception when processing: /);
});

test('the key reaches its own API only', async (ctx) => {
  const res = await ctx.svc.request('/api/push-data/other-api', {
    admin: false,
    method: 'POST',
    body: '{}',
    headers: { Authorization: `Basic ${Buffer.from(`svc:${ctx.key}`).toString('base64')}` },
  });
  assert.is(res.status, 403);
  assert.is(((await res.json()) as { kind: string }).kind, 'svc:auth:invalid-api-key');
});

test('parallel pushes for one user create exactly one project and lose no update', async (ctx) => {
  await json(ctx.svc, '/api/admin/users', { username: 'parallel', name: { first: 'Par', last: 'Allel' } });
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => push(ctx, JSON.stringify({ username: 'parallel', title: `Title ${i}` })).then((r) => r.json() as Promise<{ result: string; actions: { changed: { ref: string; new: boolean }[] }[] }>)),
  );
  assert.ok(results.every((r) => r.result === 'success'), JSON.stringify(results.filter((r) => r.result !== 'success')));
  const refs = new Set(results.flatMap((r) => r.actions[0]!.changed.map((c) => c.ref)));
  assert.is(refs.size, 1, `one project, got ${[...refs].join(', ')}`);
  assert.is(results.filter((r) => r.actions[0]!.changed.some((c) => c.new)).length, 1);
});

test('an Idempotency-Key replays the first answer without applying twice', async (ctx) => {
  const body = JSON.stringify({ username: 'jbloggs', title: 'Idempotent title' });
  const first = await push(ctx, body, { 'Idempotency-Key': 'abc-123' });
  const firstText = await first.text();
  const again = await push(ctx, body, { 'Idempotency-Key': 'abc-123' });
  assert.is(again.status, first.status);
  assert.is(await again.text(), firstText);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  const other = await push(ctx, JSON.stringify({ username: 'jbloggs', title: 'Different' }), { 'Idempotency-Key': 'abc-123' });
  assert.is(other.status, 400);
});

test.run();
