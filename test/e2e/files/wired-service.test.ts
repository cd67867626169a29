/**
 * The file routes in the service as `startTestService` starts it for every other suite, with no
 * file settings of its own (download secret generated into the data directory, default limits):
 * upload, metadata, tags and a signed download, and the files projection in the projection list.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../../support/service.ts';
import { png } from '../../support/file-samples.ts';

const BASE = 'https://svc.example.org';

const test = suite<{ svc: TestService }>('files in the default test service', {} as { svc: TestService });
test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: BASE });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('upload, metadata, tags and download through startService', async ({ svc }) => {
  const bytes = await png(30, 20);
  const up = await svc.request('/api/admin/files?filename=x.png', { method: 'POST', body: bytes, headers: { 'Content-Type': 'image/png' } });
  const file = (await up.json()) as any;
  assert.is(up.status, 201, JSON.stringify(file));
  assert.equal(file.properties.dimensions, { width: 30, height: 20, units: 'px' });
  const json = (path: string, body: unknown) =>
    svc.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }).then((r) => r.json() as any);
  await json('/api/admin/groups', { code: 'test:files', title: 'Files', readAll: true });
  await json('/api/admin/users', { username: 'filereader', name: { first: 'File', last: 'Reader' }, groups: ['test:files'] });
  const { key } = await json('/api/admin/users/filereader/api-keys', {});
  const auth = { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` };
  const meta = await svc.request(`/api/v0-file/metadata/${file.digest}?fileSize=${file.fileSize}`, { admin: false, headers: auth });
  const body = (await meta.json()) as any;
  assert.is(meta.status, 200, JSON.stringify(body));
  assert.is(body.kind, 'svc:api-v0:file:metadata');
  assert.equal(body.file, file);
  const writer = await json('/api/admin/users/filereader/api-keys', { path: '/api/v0-file/tags/' });
  const tags = await svc.request(`/api/v0-file/tags/${file.digest}`, {
    method: 'POST',
    admin: false,
    headers: { Authorization: `Basic ${Buffer.from(`svc:${writer.key}`).toString('base64')}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ tags: { a: 'b' } }),
  });
  assert.equal(((await tags.json()) as any).tags, { a: 'b' });
  assert.ok(body.download.url.startsWith(`${BASE}/`));
  const download = await fetch(`${svc.url}${body.download.url.slice(BASE.length)}`);
  assert.is(download.status, 200);
  assert.equal(Buffer.from(await download.arrayBuffer()), bytes);
  assert.ok(JSON.stringify(await (await svc.request('/api/admin/projections')).json()).includes('"files"'), 'the files projection runs');
});

test.run();
