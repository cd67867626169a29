import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { handleErrors } from '../../src/http/middleware/handle-errors.ts';
import { jsonOutput } from '../../src/http/middleware/json-output.ts';
import { requestId } from '../../src/http/middleware/request-id.ts';
import type { AppState } from '../../src/http/state.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';

const test = suite<{ svc: TestService }>('HTTP skeleton', {} as { svc: TestService });
test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BODY_LIMIT: '1kb' });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const errorOf = async (res: Response) => {
  assert.match(res.headers.get('content-type') ?? '', 'application/json');
  const body = (await res.json()) as { success: boolean; kind: string; error: { message: string } };
  assert.is(body.success, false);
  assert.type(body.error.message, 'string');
  return body;
};

test('GET /healthz answers ok with the projections', async ({ svc }) => {
  const res = await svc.request('/healthz', { admin: false });
  assert.is(res.status, 200);
  const body = (await res.json()) as { status: string; projections: unknown[] };
  assert.is(body.status, 'ok');
  assert.ok(Array.isArray(body.projections));
});

test('every response carries a request id; a sane caller id is kept', async ({ svc }) => {
  const mine = await svc.request('/healthz', { headers: { 'X-Request-Id': 'abc-123' } });
  assert.is(mine.headers.get('x-request-id'), 'abc-123');
  const odd = await svc.request('/healthz', { headers: { 'X-Request-Id': 'no spaces <allowed>' } });
  assert.match(odd.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('unknown routes are JSON 404s', async ({ svc }) => {
  const res = await svc.request('/no/such/thing', { admin: false });
  assert.is(res.status, 404);
  assert.is((await errorOf(res)).kind, 'svc:api:not-found');
});

test('a wrong method is a JSON 405 with Allow', async ({ svc }) => {
  const res = await svc.request('/healthz', { method: 'DELETE', admin: false });
  assert.is(res.status, 405);
  assert.match(res.headers.get('allow') ?? '', 'GET');
  assert.is((await errorOf(res)).kind, 'svc:api:method-not-allowed');
});

test('admin routes need the bearer token: missing or wrong is 401 with a challenge', async ({ svc }) => {
  const missing = await svc.request('/api/admin/projections', { admin: false });
  assert.is(missing.status, 401);
  assert.match(missing.headers.get('www-authenticate') ?? '', 'Bearer');
  assert.is((await errorOf(missing)).kind, 'svc:api:admin:unauthorised');
  const wrong = await svc.request('/api/admin/projections', { admin: false, headers: { Authorization: 'Bearer not-the-token-at-all' } });
  assert.is(wrong.status, 401);
  const unknownAdmin = await svc.request('/api/admin/whatever', { admin: false });
  assert.is(unknownAdmin.status, 401, 'admin paths are not even revealed without the token');
  const ok = await svc.request('/api/admin/projections');
  assert.is(ok.status, 200);
  assert.ok(Array.isArray(((await ok.json()) as { projections: unknown[] }).projections));
});

test('malformed JSON is a 400, an oversize body a 413, a non-JSON body a 415', async ({ svc }) => {
  const post = (body: string, type = 'application/json') =>
    svc.request('/api/admin/projections', { method: 'POST', body, headers: { 'Content-Type': type } });
  const malformed = await post('{"a": ');
  assert.is(malformed.status, 400);
  assert.is((await errorOf(malformed)).kind, 'svc:api:malformed-json');
  const scalar = await post('42');
  assert.is(scalar.status, 400, 'only objects and arrays are accepted');
  const big = await post(JSON.stringify({ pad: 'x'.repeat(2000) }));
  assert.is(big.status, 413);
  assert.is((await errorOf(big)).kind, 'svc:api:payload-too-large');
  const text = await post('hello', 'text/plain');
  assert.is(text.status, 415);
});

test('output=pretty indents JSON, errors included', async ({ svc }) => {
  const compact = await (await svc.request('/healthz')).text();
  assert.not.match(compact, '\n');
  const pretty = await (await svc.request('/healthz?output=pretty')).text();
  assert.match(pretty, '\n  "status": "ok"');
  const prettyError = await (await svc.request('/nope?output=pretty')).text();
  assert.match(prettyError, '\n  "success": false');
});

test('an unexpected exception is a 500 naming the request id, without a stack trace', async () => {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(requestId(pino({ level: 'silent' })));
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(() => {
    throw new TypeError('secret internal detail');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: { 'X-Request-Id': 'req-500' } });
  server.close();
  assert.is(res.status, 500);
  const body = await errorOf(res);
  assert.is(body.kind, 'svc:api:internal-error');
  assert.match(body.error.message, 'req-500');
  assert.not.match(JSON.stringify(body), 'secret internal detail');
});

test.run();
