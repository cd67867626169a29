/**
 * The push-data command's order of work (haplo-behaviour.md §2.2): the guards (API not defined, not
 * authorised, disabled) answer before the body is read, so an oversized body gets their answer, not
 * 413; the Idempotency-Key is checked after the body is read, and a refusal by a guard reserves no key.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, call, createUser, issueKey } from '../../support/fixtures.ts';
import { EXAMPLE_CONTROL, defineApi, expectSuccess, head, push, PUSH_DATA_USER, type Api } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const LIMIT = 16 * 1024;
const OVERSIZE = { username: 'pusher', title: 'Too big', pad: 'x'.repeat(LIMIT) };

interface Ctx {
  svc: TestService;
  api: Api;
  /** A push-data service key for every API. */
  serviceKey: string;
}
const test = suite<Ctx>('Push data: guards, body and Idempotency-Key in order', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BODY_LIMIT: String(LIMIT) });
  await createUser(ctx.svc, { username: 'pusher', first: 'Push', last: 'Er' });
  ctx.api = await defineApi(ctx.svc, EXAMPLE_CONTROL);
  ctx.serviceKey = (await issueKey(ctx.svc, PUSH_DATA_USER, { path: '/api/push-data/' })).key;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/** Push-data's own answer for a push refused before its control file ran. */
const refusal = (message: string) => ({ result: 'error', applied: 0, failures: 0, errorCount: 1, errors: [message], actions: [] });

const setEnabled = async (ctx: Ctx, url: string, enabled: boolean) => {
  const changed = await call(ctx.svc, `/api/admin/rest-apis/${url}`, { method: 'PUT', body: { enabled } });
  assert.is(changed.status, 200, JSON.stringify(changed.body));
};

test('an oversized body gets the guards\' answers (the body is read only once they pass), then 413', async (ctx) => {
  const outsider = await createUser(ctx.svc, { username: 'outsider', first: 'Out', last: 'Sider' });
  const outsiderKey = (await issueKey(ctx.svc, outsider.username, { path: '/api/push-data/' })).key;
  const before = await head(ctx.svc);
  const undefinedApi = await push(ctx.svc, 'never-defined', ctx.serviceKey, OVERSIZE);
  assert.is(undefinedApi.status, 400, undefinedApi.text);
  assert.equal(undefinedApi.body.errors, ['API not defined: never-defined']);

  const unauthorised = await push(ctx.svc, ctx.api.url, outsiderKey, OVERSIZE);
  assert.is(unauthorised.status, 403, unauthorised.text);
  assert.is(unauthorised.body.result, 'not authorised');
  assert.is(await head(ctx.svc), before, 'nothing written');

  await setEnabled(ctx, ctx.api.url, false);
  const disabledAt = await head(ctx.svc);
  const disabled = await ctx.api.push(OVERSIZE);
  assert.is(disabled.status, 400, disabled.text);
  assert.equal(disabled.body.errors, [`API is disabled: ${ctx.api.url}`]);
  assert.is(await head(ctx.svc), disabledAt, 'nothing written');
  await setEnabled(ctx, ctx.api.url, true);

  const enabledAt = await head(ctx.svc);
  const tooLarge = await ctx.api.push(OVERSIZE);
  assert.is(tooLarge.status, 413, tooLarge.text);
  assert.equal(tooLarge.body, refusal(`Request body is larger than the limit of ${LIMIT} bytes`), 'in push-data\'s own shape');
  assert.is(await head(ctx.svc), enabledAt, 'nothing written');
});

test('a malformed Idempotency-Key is refused (400, in push-data\'s shape) after the body is read, and nothing is written', async (ctx) => {
  const before = await head(ctx.svc);
  for (const key of ['a b', 'x'.repeat(256), 'é']) {
    const refused = await ctx.api.push({ username: 'pusher', title: 'Keyed' }, { 'Idempotency-Key': key });
    assert.is(refused.status, 400, refused.text);
    assert.equal(refused.body, refusal('Idempotency-Key must be 1-255 printable ASCII characters'), 'in push-data\'s own shape');
  }
  const oversize = await ctx.api.push(OVERSIZE, { 'Idempotency-Key': 'a b' });
  assert.is(oversize.status, 413, 'the body is read (and refused) before the key is looked at');
  assert.is(await head(ctx.svc), before);
});

test('a refusal by a guard reserves no Idempotency-Key: the same key runs once the API is enabled, and replays after', async (ctx) => {
  const body = { username: 'pusher', title: 'Once enabled' };
  await setEnabled(ctx, ctx.api.url, false);
  const disabled = await ctx.api.push(body, { 'Idempotency-Key': 'guarded-1' });
  assert.is(disabled.status, 400);
  assert.equal(disabled.body.errors, [`API is disabled: ${ctx.api.url}`]);
  await setEnabled(ctx, ctx.api.url, true);

  const keyed = () =>
    ctx.svc.request(`/api/push-data/${ctx.api.url}`, {
      admin: false,
      method: 'POST',
      body: JSON.stringify(body),
      headers: { Authorization: basic(ctx.api.key), 'Idempotency-Key': 'guarded-1' },
    });
  const ran = await keyed();
  assert.is(ran.headers.get('idempotent-replayed'), null, 'ran, not replayed');
  const first = await ran.text();
  expectSuccess({ status: ran.status, contentType: ran.headers.get('content-type') ?? '', text: first, body: JSON.parse(first) });

  const again = await keyed();
  assert.is(again.status, 200);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  assert.is(await again.text(), first);
});

test('an Idempotency-Key reused with another body is refused in push-data\'s shape; nothing is written', async (ctx) => {
  const first = await ctx.api.push({ username: 'pusher', title: 'Reused key' }, { 'Idempotency-Key': 'reused-1' });
  expectSuccess(first);
  const before = await head(ctx.svc);
  const other = await ctx.api.push({ username: 'pusher', title: 'Another body' }, { 'Idempotency-Key': 'reused-1' });
  assert.is(other.status, 400, other.text);
  assert.equal(other.body, refusal('This Idempotency-Key was already used for a request with a different body'));
  assert.is(await head(ctx.svc), before);
});

test('an XML API answers a refusal before the engine in XML', async (ctx) => {
  const xmlApi = await defineApi(ctx.svc, EXAMPLE_CONTROL, { response: 'XML' });
  const tooLarge = await xmlApi.push(OVERSIZE);
  assert.is(tooLarge.status, 413, tooLarge.text);
  assert.match(tooLarge.contentType, 'application/xml');
  assert.match(tooLarge.text, `<response result="error" applied="0" failures="0" errorCount="1"><errors><error>Request body is larger than the limit of ${LIMIT} bytes</error></errors><actions></actions></response>`);
});

test.run();
