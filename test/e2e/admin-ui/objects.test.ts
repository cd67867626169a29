/**
 * The admin interface's object page (issue 14, item 17): `/admin/objects/<ref>` shows the object as it
 * is now with its history, and `?at=` as it was then; unknown refs are the not-found page, a bad `at` a 400.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../../support/service.ts';
import { call, createObject, createUser, ManualClock, patchObject } from '../../support/fixtures.ts';
import { Client, h1 } from './client.ts';

const TITLE = 'dc:attribute:title';
const SCRIPT = '<script>alert("x")</script>';

interface Ctx {
  svc: TestService;
  client: Client;
  /** Titled 'First' at 10:00, 'Second' at 11:00 (request id change-to-second), 'Third' at 12:00 on 2025-04-01. */
  ref: string;
  /** A department titled with markup. */
  hostile: string;
  /** A project linking to the hostile department. */
  linker: string;
}

const test = suite<Ctx>('admin interface: an object through time', {} as Ctx);

test.before(async (ctx) => {
  const clock = new ManualClock(Date.parse('2025-04-01T10:00:00Z'));
  ctx.svc = await startTestService({}, clock.fn);
  ctx.ref = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'First' })).ref;
  ctx.hostile = (await createObject(ctx.svc, 'svc:type:department', { [TITLE]: SCRIPT })).ref;
  ctx.linker = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Linker', 'svc:attribute:department': { type: 'link', ref: ctx.hostile } })).ref;
  clock.set('2025-04-01T11:00:00Z');
  const second = await call(ctx.svc, `/api/admin/objects/${ctx.ref}`, {
    method: 'PATCH',
    body: { attributes: { [TITLE]: 'Second' } },
    headers: { 'X-Request-Id': 'change-to-second' },
  });
  assert.is(second.status, 200, JSON.stringify(second.body));
  clock.set('2025-04-01T12:00:00Z');
  assert.is((await patchObject(ctx.svc, ctx.ref, { attributes: { [TITLE]: 'Third' } })).status, 200);
  ctx.client = new Client(ctx.svc);
  await ctx.client.signIn();
});

test.after(async ({ svc }) => {
  await svc?.stop();
});

const versionRows = (text: string) => [...text.matchAll(/<tr data-version="(\d+)"/g)].map((m) => Number(m[1]));

test('the page shows the title, type, attributes and all three versions with their request ids', async ({ client, ref }) => {
  const page = await client.get(`/admin/objects/${ref}`);
  assert.is(page.status, 200, page.text.slice(0, 500));
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  assert.is(h1(page.text), 'Third');
  assert.match(page.text, 'phd:type:project');
  assert.equal(versionRows(page.text), [1, 2, 3]);
  assert.match(page.text, 'change-to-second');
  assert.match(page.text, 'ObjectAttributesChanged');
  assert.match(page.text, TITLE);
  assert.not.match(page.text, 'class="notice notice-warning as-at"', 'no "as at" banner now');
  assert.match(page.text, /<form method="get" action="\/admin\/objects\/[0-9a-z]{12}" class="inline-form"/);
});

test('?at= between the changes shows the middle title under an "as at" banner with a link back to now', async ({ client, ref }) => {
  const page = await client.get(`/admin/objects/${ref}?at=${encodeURIComponent('2025-04-01T11:30:00Z')}`);
  assert.is(page.status, 200, page.text.slice(0, 500));
  assert.is(h1(page.text), 'Second');
  assert.not.match(page.text, /<h1>[^<]*Third/);
  assert.match(page.text, 'class="notice notice-warning as-at"');
  assert.match(page.text, /As at <time datetime="2025-04-01T11:30:00.000Z">/);
  assert.match(page.text, `<a href="/admin/objects/${ref}">`);
});

test('?at= before the object existed says so with a 404 and a link to now', async ({ client, ref }) => {
  const page = await client.get(`/admin/objects/${ref}?at=2025-04-01T09:00:00Z`);
  assert.is(page.status, 404);
  assert.match(page.text, 'did not exist');
  assert.match(page.text, `<a href="/admin/objects/${ref}">`);
});

test('an unknown ref, or something that is not a ref, is the not-found page', async ({ client }) => {
  for (const path of ['/admin/objects/zzzzzzzzzzzz', '/admin/objects/not-a-ref']) {
    const page = await client.get(path);
    assert.is(page.status, 404, path);
    assert.is(h1(page.text), 'Not found', path);
  }
});

test('a bad at is a 400 page with the reason, not a 500', async ({ client, ref }) => {
  const page = await client.get(`/admin/objects/${ref}?at=yesterday`);
  assert.is(page.status, 400);
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  assert.match(page.text, 'at must be an ISO 8601 date and time');
});

test('titles are escaped, and links lead to their target\'s page under its title', async ({ client, hostile, linker }) => {
  const own = await client.get(`/admin/objects/${hostile}`);
  assert.is(own.status, 200);
  assert.not.match(own.text, SCRIPT);
  assert.match(own.text, '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  const page = await client.get(`/admin/objects/${linker}`);
  assert.is(page.status, 200);
  assert.match(page.text, `<a href="/admin/objects/${hostile}">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</a>`);
  assert.not.match(page.text, SCRIPT);
});

test('a user page links its profile object to the object page', async ({ svc, client }) => {
  const { username, ref } = await createUser(svc, { first: 'Ada', last: 'Profiled' });
  const page = await client.get(`/admin/users/${username}`);
  assert.is(page.status, 200);
  assert.match(page.text, `<a href="/admin/objects/${ref}">`);
  const object = await client.get(`/admin/objects/${ref}`);
  assert.is(object.status, 200);
  assert.match(h1(object.text), 'Ada');
});

test('the page is behind the session', async ({ svc, ref }) => {
  const page = await new Client(svc).get(`/admin/objects/${ref}`);
  assert.is(page.status, 303);
  assert.match(page.location ?? '', '/admin/sign-in');
});

test.run();
