import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startTestService, type TestService } from '../support/service.ts';
import { call } from '../support/fixtures.ts';
import { defineApi, EXAMPLE_CONTROL } from '../support/push-data.ts';

const test = suite<{ svc: TestService }>('POST actions without a meaningful body accept an empty one', {} as { svc: TestService });

test.before(async (ctx) => {
  ctx.svc = await startTestService();
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/**
 * A POST as curl sends it with `-X POST` and nothing else: no Content-Type, and either
 * `Content-Length: 0` or no length header at all. Written on a raw socket, as fetch adds its own headers.
 */
const bareRequest = (svc: TestService, path: string, lengthHeader: boolean): Promise<{ status: number; body: any }> =>
  new Promise((resolve, reject) => {
    const url = new URL(svc.url);
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]);
      const raw = rest.join('\r\n\r\n');
      // Answers are small; chunked ones come as `<size>\r\n<json>\r\n0`.
      const json = /^[0-9a-f]+\r\n/.test(raw) ? raw.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '') : raw;
      resolve({ status, body: json ? JSON.parse(json) : undefined });
    });
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${svc.adminToken}\r\n${lengthHeader ? 'Content-Length: 0\r\n' : ''}Connection: close\r\n\r\n`,
    );
  });

for (const lengthHeader of [true, false]) {
  const how = lengthHeader ? 'Content-Length: 0' : 'no length header';

  test(`user api-keys, REST API api-keys, undelete and rebuild: ${how}, no Content-Type`, async ({ svc }) => {
    const username = `empty${lengthHeader ? 'a' : 'b'}`;
    assert.is((await call(svc, '/api/admin/users', { method: 'POST', body: { username, name: { last: 'Empty' } } })).status, 201);
    const userKey = await bareRequest(svc, `/api/admin/users/${username}/api-keys`, lengthHeader);
    assert.is(userKey.status, 201, JSON.stringify(userKey.body));
    assert.type(userKey.body.key, 'string');

    const api = await defineApi(svc, EXAMPLE_CONTROL);
    const apiKey = await bareRequest(svc, `/api/admin/rest-apis/${api.url}/api-keys`, lengthHeader);
    assert.is(apiKey.status, 201, JSON.stringify(apiKey.body));
    assert.type(apiKey.body.key, 'string');

    const created = await call(svc, '/api/admin/objects', { method: 'POST', body: { type: 'phd:type:project', attributes: { 'dc:attribute:title': 'Empty body' } } });
    assert.is(created.status, 201);
    assert.is((await call(svc, `/api/admin/objects/${created.body.ref}`, { method: 'DELETE' })).status, 200);
    const undeleted = await bareRequest(svc, `/api/admin/objects/${created.body.ref}/undelete`, lengthHeader);
    assert.is(undeleted.status, 200, JSON.stringify(undeleted.body));
    assert.is(undeleted.body.deleted, false);

    const rebuild = await bareRequest(svc, '/api/admin/projections/objects/rebuild', lengthHeader);
    assert.ok(rebuild.status === 202 || rebuild.status === 409, JSON.stringify(rebuild.body));
    assert.ok(rebuild.body.projection === 'objects' || rebuild.body.kind === 'svc:projection:rebuild-in-progress', JSON.stringify(rebuild.body));
  });
}

test('a POST with a body still needs JSON: text/plain is 415', async ({ svc }) => {
  const res = await svc.request('/api/admin/users', { method: 'POST', body: 'username=x', headers: { 'Content-Type': 'text/plain' } });
  assert.is(res.status, 415);
});

test.run();
