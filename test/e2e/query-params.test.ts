/**
 * Query parameters read without koa's whole-query object (`?output=pretty`, the Object API's
 * `sources` and `at`) must mean exactly what they meant through `ctx.query`: decoded, the first of repeated
 * values for `sources`, and `output` only when given once as `pretty`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { queryParams } from '../../src/http/params.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { basic, createObject, createReader, expectError, type Reader } from '../support/fixtures.ts';

interface Ctx {
  svc: TestService;
  reader: Reader;
  ref: string;
}
const test = suite<Ctx>('query parameters', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.ref = (await createObject(ctx.svc, 'phd:type:project', { 'dc:attribute:title': 'Queried' })).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('queryParams: decoded, first of several, undefined when absent', () => {
  const value = (q: string, name = 'sources') => queryParams(q).get(name);
  assert.is(value(''), undefined);
  assert.is(value('a=1'), undefined);
  assert.is(value('sources=NONE'), 'NONE');
  assert.is(value('sources=NONE&sources=ALL'), 'NONE');
  assert.is(value('sources'), '');
  assert.is(value('sources='), '');
  assert.is(value('%73ources=%4EONE'), 'NONE');
  assert.is(value('sources=svc%3Aworkunit,svc:username'), 'svc:workunit,svc:username');
  assert.is(value('sources=a+b'), 'a b');
  const both = queryParams('sources=NONE&at=2024-01-02T03%3A04%3A05%2B01%3A00&at=2020');
  assert.is(both.get('sources'), 'NONE');
  assert.is(both.get('at'), '2024-01-02T03:04:05+01:00');
});

test('sources: repeated, encoded, empty', async ({ reader, ref }) => {
  const get = (query: string) => reader.get(`/api/v0-object/ref/${ref}?${query}`);
  assert.equal((await get('sources=NONE&sources=ALL')).body.object.sources, []);
  assert.equal((await get('sources=ALL&sources=NONE')).body.object.sources, ['std:workunit', 'std:workflow', 'std:username']);
  assert.equal((await get('%73ources=%4EONE')).body.object.sources, []);
  assert.equal((await get('sources=std%3Ausername')).body.object.sources, ['std:username']);
  expectError(await get('sources='), 400, 'svc:api-v0:object:sources-not-specified');
  expectError(await get('sources'), 400, 'svc:api-v0:object:sources-not-specified');
  expectError(await get('other=NONE'), 400, 'svc:api-v0:object:sources-not-specified');
});

test('at: encoded, repeated (the first counts), malformed', async ({ reader, ref }) => {
  const get = (query: string) => reader.get(`/api/v0-object/ref/${ref}?sources=NONE&${query}`);
  const later = new Date(Date.now() + 60_000).toISOString();
  assert.is((await get(`at=${encodeURIComponent(later)}`)).body.object.ref, ref);
  assert.is((await get(`at=${encodeURIComponent(later)}&at=1990-01-01`)).body.object.ref, ref);
  expectError(await get('at=1990-01-01&at=' + encodeURIComponent(later)), 400, 'svc:api-v0:object:no-such-object');
  expectError(await get('at=yesterday'), 400, 'svc:api:reporting:bad-at');
});

test('output=pretty: as given, percent-encoded; not when repeated or only a value', async ({ svc, reader, ref }) => {
  const text = async (query: string) =>
    (await svc.request(`/api/v0-object/ref/${ref}?sources=NONE&${query}`, { admin: false, headers: { Authorization: basic(reader.key) } })).text();
  assert.match(await text('output=pretty'), '\n  "success": true');
  assert.match(await text('outp%75t=pretty'), '\n  "success": true');
  assert.match(await text('output=%70retty'), '\n  "success": true');
  assert.not.match(await text('output=pretty&output=pretty'), '\n');
  assert.not.match(await text('x=output'), '\n');
  assert.not.match(await text('output=compact'), '\n');
});

test.run();
