/**
 * Query parameters read without koa's whole-query object (`?output=pretty`, the Object API's
 * `sources`) must mean exactly what they meant through `ctx.query`: decoded, the first of repeated
 * values for `sources`, and `output` only when given once as `pretty`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { queryValue } from '../../src/http/params.ts';
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

test('queryValue: decoded, first of several, undefined when absent', () => {
  assert.is(queryValue('', 'sources'), undefined);
  assert.is(queryValue('a=1', 'sources'), undefined);
  assert.is(queryValue('sources=NONE', 'sources'), 'NONE');
  assert.is(queryValue('sources=NONE&sources=ALL', 'sources'), 'NONE');
  assert.is(queryValue('sources', 'sources'), '');
  assert.is(queryValue('sources=', 'sources'), '');
  assert.is(queryValue('%73ources=%4EONE', 'sources'), 'NONE');
  assert.is(queryValue('sources=svc%3Aworkunit,svc:username', 'sources'), 'svc:workunit,svc:username');
  assert.is(queryValue('sources=a+b', 'sources'), 'a b');
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
