/**
 * Real answers match /openapi.json: a service on the embedded engines is driven across every API
 * family (successes and refusals), and each answer's body is validated with ajv (JSON Schema
 * 2020-12, OpenAPI 3.1's dialect) against the document's schema for its path, method, status and
 * media type. A status the document does not list for the operation fails too.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, createReader, createUser, issueKey, unique, type Reader } from '../../support/fixtures.ts';
import { EXAMPLE_CONTROL, PUSH_DATA_GROUP } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

// A CommonJS module seen from ESM: the plugin is the default export's own default.
const addFormats = formats.default;

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

interface Ctx {
  svc: TestService;
  doc: Doc;
  ajv: Ajv2020;
  reader: Reader;
  /** Operations (`GET /path`) and statuses whose answers were validated. */
  seen: Set<string>;
}
const test = suite<Ctx>('OpenAPI: real answers match the document', { seen: new Set() } as Ctx);

const pointer = (...segments: string[]) => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

const schemaFor = (ctx: Ctx, template: string, method: string, status: number, mediaType = 'application/json') => {
  const answer = ctx.doc.paths[template]?.[method]?.responses[String(status)];
  assert.ok(answer, `${method.toUpperCase()} ${template} answered ${status}, which the document does not list`);
  assert.ok(answer!.content?.[mediaType], `${method.toUpperCase()} ${template} ${status}: the document has no ${mediaType} answer`);
  return ctx.ajv.getSchema(`openapi.json#/paths/${pointer(template, method, 'responses', String(status), 'content', mediaType, 'schema')}`)!;
};

/** Sends a request and validates the answer against the document; returns status and parsed body. */
const check = async (ctx: Ctx, template: string, path: string, init: RequestInit & { admin?: boolean; expect: number }) => {
  const method = (init.method ?? 'GET').toLowerCase();
  const res = await ctx.svc.request(path, init);
  const text = await res.text();
  assert.is(res.status, init.expect, `${method.toUpperCase()} ${path}: ${res.status} ${text.slice(0, 300)}`);
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  const mediaType = ctx.doc.paths[template]?.[method]?.responses[String(res.status)]?.content?.[type] ? type : type === 'application/json' ? type : Object.keys(ctx.doc.paths[template]?.[method]?.responses[String(res.status)]?.content ?? {})[0] ?? type;
  const validate = schemaFor(ctx, template, method, res.status, mediaType);
  const body = type === 'application/json' ? JSON.parse(text) : text;
  assert.ok(validate(body), `${method.toUpperCase()} ${path} ${res.status}: ${JSON.stringify(validate.errors)} in ${text.slice(0, 400)}`);
  ctx.seen.add(`${method.toUpperCase()} ${template} ${res.status}`);
  return { status: res.status, body, headers: res.headers };
};

const json = (method: string, body: unknown, expect: number) => ({ method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' }, expect });

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  const res = await ctx.svc.request('/openapi.json', { admin: false });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', 'application/json');
  ctx.doc = (await res.json()) as Doc;
  ctx.ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ctx.ajv);
  ctx.ajv.addFormat('binary', true);
  // The whole document under one id: answers' $refs to components resolve inside it.
  ctx.ajv.addSchema(ctx.doc as object, 'openapi.json');
  ctx.reader = await createReader(ctx.svc, { readAll: true });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('service: /openapi.json without credentials, /healthz, /readyz', async (ctx) => {
  const doc = await check(ctx, '/openapi.json', '/openapi.json', { admin: false, expect: 200 });
  assert.is(doc.body.openapi, '3.1.0');
  await check(ctx, '/healthz', '/healthz', { admin: false, expect: 200 });
  if (ctx.doc.paths['/readyz']) await check(ctx, '/readyz', '/readyz', { admin: false, expect: 200 });
});

test('admin API: users, keys and groups, with their refusals', async (ctx) => {
  await check(ctx, '/api/admin/users', '/api/admin/users', { admin: false, expect: 401 });
  await check(ctx, '/api/admin/users', '/api/admin/users', { admin: false, headers: { Authorization: 'Bearer wrong-token-0123456789' }, expect: 401 });
  await check(ctx, '/api/admin/users', '/api/admin/users', json('POST', { username: 42 }, 400));
  await check(ctx, '/api/admin/users', '/api/admin/users', { method: 'POST', body: '{"username":', headers: { 'Content-Type': 'application/json' }, expect: 400 });
  await check(ctx, '/api/admin/users', '/api/admin/users', { method: 'POST', body: 'x', headers: { 'Content-Type': 'text/plain' }, expect: 415 });
  const username = unique('oa').toLowerCase();
  await check(ctx, '/api/admin/users', '/api/admin/users', json('POST', { username, name: { first: 'Ada', last: 'Lovelace' }, email: `${username}@example.org` }, 201));
  await check(ctx, '/api/admin/users', '/api/admin/users', json('POST', { username, name: { first: 'Ada', last: 'Lovelace' } }, 409));
  await check(ctx, '/api/admin/users', '/api/admin/users', { expect: 200 });
  await check(ctx, '/api/admin/users/{username}', `/api/admin/users/${username}`, { expect: 200 });
  await check(ctx, '/api/admin/users/{username}', '/api/admin/users/no-such-user', { expect: 404 });
  await check(ctx, '/api/admin/users/{username}', `/api/admin/users/${username}`, json('PATCH', { email: `${username}@example.com` }, 200));
  const key = await check(ctx, '/api/admin/users/{username}/api-keys', `/api/admin/users/${username}/api-keys`, json('POST', { name: 'oa' }, 201));
  await check(ctx, '/api/admin/api-keys', '/api/admin/api-keys', { expect: 200 });
  await check(ctx, '/api/admin/api-keys/{id}', `/api/admin/api-keys/${key.body.id}`, { method: 'DELETE', expect: 200 });
  await check(ctx, '/api/admin/groups', '/api/admin/groups', json('POST', { code: `oa:${username}`, title: 'OpenAPI', readAll: true }, 201));
  await check(ctx, '/api/admin/groups', '/api/admin/groups', { expect: 200 });
});

test('admin API: objects and workflows', async (ctx) => {
  const TITLE = 'dc:attribute:title';
  const created = await check(ctx, '/api/admin/objects', '/api/admin/objects', json('POST', { type: 'phd:type:project', attributes: { [TITLE]: 'Documented' } }, 201));
  const ref = created.body.ref as string;
  await check(ctx, '/api/admin/objects', '/api/admin/objects', json('POST', { type: 'phd:type:project' }, 400));
  await check(ctx, '/api/admin/objects/{ref}', `/api/admin/objects/${ref}`, { expect: 200 });
  await check(ctx, '/api/admin/objects/{ref}', '/api/admin/objects/not-a-ref!', { expect: 400 });
  await check(ctx, '/api/admin/objects/{ref}', `/api/admin/objects/${ref}`, json('PATCH', { attributes: { [TITLE]: 'Documented again' } }, 200));
  const unit = await check(ctx, '/api/admin/objects/{ref}/workflows', `/api/admin/objects/${ref}/workflows`, json('POST', { workType: 'phd:workflow:review', state: 'open' }, 201));
  await check(ctx, '/api/admin/workflows/{id}', `/api/admin/workflows/${unit.body.id}`, { expect: 200 });
  await check(ctx, '/api/admin/workflows/{id}', '/api/admin/workflows/no-such-unit', { expect: 404 });
  await check(ctx, '/api/admin/workflows/{id}/transition', `/api/admin/workflows/${unit.body.id}/transition`, json('POST', { state: 'done', closed: true }, 200));
  await check(ctx, '/api/admin/objects/{ref}', `/api/admin/objects/${ref}`, { method: 'DELETE', expect: 200 });
  await check(ctx, '/api/admin/objects/{ref}/undelete', `/api/admin/objects/${ref}/undelete`, { method: 'POST', expect: 200 });

  await check(ctx, '/api/v0-object/ref/{ref}', `/api/v0-object/ref/${ref}?sources=ALL`, { admin: false, headers: { Authorization: basic(ctx.reader.key) }, expect: 200 });
  await check(ctx, '/api/v0-object/ref/{ref}', `/api/v0-object/ref/${ref}?sources=NONE&at=yesterday`, { admin: false, headers: { Authorization: basic(ctx.reader.key) }, expect: 400 });
  await check(ctx, '/api/v0-object/ref/{ref}', `/api/v0-object/ref/${ref}?sources=NONE`, { admin: false, expect: 401 });
  await check(ctx, '/api/v0-object/ref/{ref}', `/api/v0-object/ref/${ref}?sources=NONE`, { admin: false, headers: { Authorization: basic('not-a-key-0123456789abcdef') }, expect: 403 });
  await check(ctx, '/api/v0-object/linked/{ref}', `/api/v0-object/linked/${ctx.reader.profileRef}`, { admin: false, headers: { Authorization: basic(ctx.reader.key) }, expect: 200 });
  await check(ctx, '/api/v0-object/history/{ref}', `/api/v0-object/history/${ref}`, { admin: false, headers: { Authorization: basic(ctx.reader.key) }, expect: 200 });
});

test('admin API: push-data APIs, models, projections; push-data itself', async (ctx) => {
  const url = unique('oa-').toLowerCase();
  await check(ctx, '/api/admin/rest-apis', '/api/admin/rest-apis', json('POST', { url, description: 'OpenAPI', controlFile: EXAMPLE_CONTROL }, 201));
  await check(ctx, '/api/admin/rest-apis', '/api/admin/rest-apis', json('POST', { url: `${url}-bad`, description: 'bad', controlFile: { model: 'nope' } }, 400));
  await check(ctx, '/api/admin/rest-apis', '/api/admin/rest-apis', { expect: 200 });
  await check(ctx, '/api/admin/rest-apis/{url}', `/api/admin/rest-apis/${url}`, { expect: 200 });
  await check(ctx, '/api/admin/rest-apis/{url}', '/api/admin/rest-apis/no-such-api', { expect: 404 });
  await check(ctx, '/api/admin/rest-apis/{url}', `/api/admin/rest-apis/${url}`, json('PUT', { description: 'OpenAPI, changed' }, 200));
  const key = await check(ctx, '/api/admin/rest-apis/{url}/api-keys', `/api/admin/rest-apis/${url}/api-keys`, { method: 'POST', expect: 201 });

  const pushed = await check(ctx, '/api/push-data/{url}', `/api/push-data/${url}`, {
    method: 'POST',
    admin: false,
    headers: { Authorization: basic(key.body.key), 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: ctx.reader.username, title: 'Pushed' }),
    expect: 200,
  });
  assert.is(pushed.body.result, 'success');
  await check(ctx, '/api/push-data/{url}', `/api/push-data/${url}`, { admin: false, headers: { Authorization: basic(key.body.key) }, expect: 400 });
  await check(ctx, '/api/push-data/{url}', `/api/push-data/${url}`, { method: 'POST', admin: false, body: '{}', expect: 401 });
  await check(ctx, '/api/push-data/{url}', `/api/push-data/${url}`, { method: 'POST', admin: false, headers: { Authorization: basic(ctx.reader.key) }, body: '{}', expect: 403 });

  const models = await check(ctx, '/api/admin/models', '/api/admin/models', { expect: 200 });
  await check(ctx, '/api/admin/models/{model}', `/api/admin/models/${models.body.models[0].name}`, { expect: 200 });
  await check(ctx, '/api/admin/models/{model}', '/api/admin/models/no-such-model', { expect: 404 });
  await check(ctx, '/api/admin/filters', '/api/admin/filters', { expect: 200 });
  await check(ctx, '/api/admin/control-files/generate', '/api/admin/control-files/generate', json('POST', { model: 'no-such-model', include: [] }, 404));
  const projections = await check(ctx, '/api/admin/projections', '/api/admin/projections', { expect: 200 });
  await check(ctx, '/api/admin/projections/{name}/rebuild', '/api/admin/projections/no-such-projection/rebuild', { method: 'POST', expect: 404 });
  assert.ok(projections.body.projections.length > 0);
});

test('reporting API', async (ctx) => {
  const auth = { admin: false, headers: { Authorization: basic(ctx.reader.key) } };
  const list = await check(ctx, '/api/reporting/v0/collections', '/api/reporting/v0/collections', { ...auth, expect: 200 });
  const name = list.body.collections[0].name as string;
  await check(ctx, '/api/reporting/v0/collection/{name}', `/api/reporting/v0/collection/${name}`, { ...auth, expect: 200 });
  await check(ctx, '/api/reporting/v0/collection/{name}', '/api/reporting/v0/collection/no_such_collection', { ...auth, expect: 404 });
  await check(ctx, '/api/reporting/v0/collection-data/{name}', `/api/reporting/v0/collection-data/${name}`, { ...auth, expect: 200 });
  await check(ctx, '/api/reporting/v0/collection-data/{name}', `/api/reporting/v0/collection-data/${name}?at=${new Date().toISOString()}`, { ...auth, expect: 200 });
  await check(ctx, '/api/reporting/v0/collection-data/{name}', `/api/reporting/v0/collection-data/${name}?at=not-a-time`, { ...auth, expect: 400 });
  await check(ctx, '/api/reporting/v0/collections', '/api/reporting/v0/collections', { admin: false, expect: 401 });
});

test('file upload and File API, downloads included', async (ctx) => {
  const bytes = Buffer.from(`OpenAPI file ${unique('f')}\n`);
  const upload = (expect: number) =>
    check(ctx, '/api/admin/files', '/api/admin/files?filename=notes.txt', { method: 'POST', body: bytes, headers: { 'Content-Type': 'text/plain' }, expect });
  const file = (await upload(201)).body;
  await upload(200);
  await check(ctx, '/api/admin/files', '/api/admin/files', { method: 'POST', body: bytes, headers: { 'Content-Type': 'text/plain' }, expect: 400 });

  const auth = { admin: false, headers: { Authorization: basic(ctx.reader.key) } };
  const meta = await check(ctx, '/api/v0-file/metadata/{digest}', `/api/v0-file/metadata/${file.digest}`, { ...auth, expect: 200 });
  await check(ctx, '/api/v0-file/metadata/{digest}', '/api/v0-file/metadata/xyz', { ...auth, expect: 400 });
  await check(ctx, '/api/v0-file/metadata/{digest}', `/api/v0-file/metadata/${'0'.repeat(64)}`, { ...auth, expect: 404 });
  await check(ctx, '/api/v0-file/tags/{digest}', `/api/v0-file/tags/${file.digest}`, { ...auth, expect: 200 });
  await check(ctx, '/api/v0-file/tags/{digest}', `/api/v0-file/tags/${file.digest}`, { ...auth, ...json('POST', { tags: { a: 'b' } }, 403), headers: { ...auth.headers, 'Content-Type': 'application/json' } });

  const writer = await createUser(ctx.svc, { groups: [(await createReader(ctx.svc, { readAll: true })).group!] });
  const writerKey = await issueKey(ctx.svc, writer.username, { path: '/api/v0-file/tags/' });
  const writerAuth = { Authorization: basic(writerKey.key), 'Content-Type': 'application/json' };
  await check(ctx, '/api/v0-file/tags/{digest}', `/api/v0-file/tags/${file.digest}`, { ...json('POST', { tags: { topic: 'openapi' } }, 200), admin: false, headers: writerAuth });
  await check(ctx, '/api/v0-file/tags/{digest}', `/api/v0-file/tags/${file.digest}`, { ...json('POST', { tags: 'none' }, 400), admin: false, headers: writerAuth });

  const download = new URL(meta.body.download.url as string);
  const res = await ctx.svc.request(`${download.pathname}${download.search}`, { admin: false });
  assert.is(res.status, 200);
  assert.ok(ctx.doc.paths['/api/v0-file/download/{digest}/{size}/{filename}']?.get?.responses['200']?.content?.['*/*']);
  assert.equal(Buffer.from(await res.arrayBuffer()), bytes);
  await check(ctx, '/api/v0-file/download/{digest}/{size}/{filename}', `${download.pathname}?e=1&s=forged`, { admin: false, expect: 403 });
  await check(ctx, '/api/v0-file/download/{rest}', '/api/v0-file/download/too/few', { admin: false, expect: 403 });
});

test('the check can fail: bodies unlike the document are rejected', (ctx) => {
  const created = schemaFor(ctx, '/api/admin/users', 'post', 201);
  assert.ok(created({ username: 'ada', ref: '80000' }));
  assert.not.ok(created({ username: 'ada' }), 'a missing property');
  assert.not.ok(created({ username: 1, ref: '80000' }), 'a property of the wrong type');
  const refused = schemaFor(ctx, '/api/admin/users', 'post', 400);
  assert.not.ok(refused({ success: true, kind: 'svc:api:bad-request', error: { message: 'm' } }), 'success must be false');
  assert.not.ok(refused({ success: false, kind: 'svc:api:bad-request', error: 'm' }), 'error must be an object');
  const pushed = schemaFor(ctx, '/api/push-data/{url}', 'post', 200);
  assert.not.ok(pushed({ result: 'done', applied: 0, failures: 0, errorCount: 0, errors: [], actions: [] }), 'an unknown result');
  const health = schemaFor(ctx, '/healthz', 'get', 200);
  assert.not.ok(health({ status: 'ok', projections: [{ name: 'objects', state: 'live', lag: 'none' }] }), 'lag must be a number');
});

test('answers were checked across every family and status class', (ctx) => {
  const seen = [...ctx.seen];
  for (const prefix of ['GET /healthz', 'GET /openapi.json', 'POST /api/push-data/', 'GET /api/reporting/v0/', 'GET /api/v0-object/', 'GET /api/v0-file/', 'POST /api/admin/', 'GET /api/admin/']) {
    assert.ok(seen.some((s) => s.startsWith(prefix)), `nothing checked for ${prefix}`);
  }
  for (const status of [200, 201, 400, 401, 403, 404, 409, 415]) assert.ok(seen.some((s) => s.endsWith(` ${status}`)), `no ${status} answer checked`);
});

test.run();
