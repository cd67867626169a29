/**
 * The admin interface over HTTP: sign-in and its cookie, CSRF refusals, every page behind the
 * session, the forms (REST APIs, keys, users, groups, generator, projections), the admin API
 * with the session cookie, and escaping.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ADMIN_SESSIONS, SessionStore, type SessionOptions } from '../../../src/http/admin-ui/sessions.ts';
import { openSqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../../support/tmp.ts';
import { basic, call } from '../../support/fixtures.ts';
import { control, push } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { Client, fieldErrors, h1, hiddenField, metaCsrf, unescape, valueOf } from './client.ts';

interface Ctx {
  svc: TestService;
}

const TITLE_CONTROL = control('TYPE:phd:type:project', [
  { action: 'new', destination: 'object' },
  { source: 'title', destination: 'object', name: 'dc:attribute:title' },
]);

const PAGES = [
  '/admin/rest-apis',
  '/admin/new-rest-api',
  '/admin/api-keys',
  '/admin/control-files/generate',
  '/admin/control-files/generate?model=svc%3Aperson',
  '/admin/models',
  '/admin/models/svc%3Aperson',
  '/admin/models/svc:user-sync',
  '/admin/users',
  '/admin/groups',
  '/admin/projections',
];

const cookieLine = (res: { headers: Headers }, name: string) => res.headers.getSetCookie().find((l) => l.startsWith(`${name}=`));

// ------------------------------------------------------------------------------------------

const signing = suite<Ctx>('Admin UI: sign-in, session cookie, sign-out', {} as Ctx);
signing.before(async (ctx) => {
  ctx.svc = await startTestService();
});
signing.after(async (ctx) => {
  await ctx.svc?.stop();
});

signing('the sign-in page is public and sets a SameSite=Strict, HttpOnly form-token cookie', async ({ svc }) => {
  const client = new Client(svc);
  const page = await client.get('/admin/sign-in');
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  assert.is(h1(page.text), 'Sign in');
  assert.match(page.text, '<label for="f-token">Admin token</label>');
  const line = cookieLine(page, 'svc_admin_signin');
  assert.ok(line, 'sign-in form cookie');
  assert.match(line!, /HttpOnly/);
  assert.match(line!, /SameSite=Strict/);
  assert.not.match(line!, /Secure/);
  assert.is(hiddenField(page.text, 'csrf'), client.cookies.get('svc_admin_signin'));
  assert.match(page.headers.get('content-security-policy') ?? '', "script-src 'self'");
  assert.is(page.headers.get('x-frame-options'), 'DENY');
});

signing('signing in with the admin token sets an HttpOnly, SameSite=Strict, expiring session cookie with a random id', async ({ svc }) => {
  const client = new Client(svc);
  const form = await client.get('/admin/sign-in?next=%2Fadmin%2Fmodels');
  const reply = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: svc.adminToken, next: hiddenField(form.text, 'next') });
  assert.is(reply.status, 303);
  assert.is(reply.location, '/admin/models');
  const line = cookieLine(reply, 'svc_admin_session')!;
  assert.ok(line, 'session cookie set');
  assert.match(line, /; HttpOnly/);
  assert.match(line, /; SameSite=Strict/);
  assert.match(line, /; Path=\//);
  assert.match(line, /; Max-Age=28800/);
  assert.not.match(line, /Secure/, 'not Secure on an http base URL');
  const id = client.cookies.get('svc_admin_session')!;
  assert.match(id, /^[A-Za-z0-9_-]{43}$/);
  assert.not.ok(id.includes(svc.adminToken), 'the id is not the token');
  assert.not.ok(client.cookies.has('svc_admin_signin'), 'the sign-in form cookie is cleared');

  const other = new Client(svc);
  await other.signIn();
  assert.is.not(other.cookies.get('svc_admin_session'), id, 'every sign-in gets a new id');
  assert.is.not(await other.csrf(), await client.csrf(), 'and its own CSRF token');
});

signing('a wrong token is refused with the reason in words, and no session', async ({ svc }) => {
  const client = new Client(svc);
  const form = await client.get('/admin/sign-in');
  const reply = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: 'not-the-token-at-all', next: '/admin' });
  assert.is(reply.status, 401);
  assert.match(reply.text, 'That is not the admin token.');
  assert.not.ok(cookieLine(reply, 'svc_admin_session'));
  assert.is((await client.get('/admin/rest-apis')).status, 303);
});

signing('the sign-in form is refused (403) without its token or with a wrong one', async ({ svc }) => {
  const client = new Client(svc);
  await client.get('/admin/sign-in');
  const without = await client.post('/admin/sign-in', { token: svc.adminToken });
  assert.is(without.status, 403);
  assert.match(without.text, 'security token is missing or wrong');
  assert.not.ok(cookieLine(without, 'svc_admin_session'));
  const wrong = await client.post('/admin/sign-in', { csrf: 'x'.repeat(43), token: svc.adminToken });
  assert.is(wrong.status, 403);
  const noCookie = new Client(svc);
  const form = await client.get('/admin/sign-in');
  const stolen = await noCookie.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: svc.adminToken });
  assert.is(stolen.status, 403, 'the field alone (without its cookie) is not enough');
});

signing('next must stay inside /admin (no open redirect)', async ({ svc }) => {
  for (const next of ['https://evil.example/', '//evil.example/admin', '/api/admin/rest-apis', '/admin\\..\\x', 'javascript:alert(1)']) {
    const client = new Client(svc);
    const form = await client.get('/admin/sign-in');
    const reply = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: svc.adminToken, next });
    assert.is(reply.status, 303);
    assert.is(reply.location, '/admin/rest-apis', next);
  }
});

signing('sign-out ends the session: the cookie is cleared and no longer works for pages or the API', async ({ svc }) => {
  const client = new Client(svc);
  const csrf = await client.signIn();
  const id = client.cookies.get('svc_admin_session')!;
  const out = await client.post('/admin/sign-out', { csrf });
  assert.is(out.status, 303);
  assert.is(out.location, '/admin/sign-in?signed-out=1');
  assert.match(cookieLine(out, 'svc_admin_session') ?? '', /Max-Age=0/);
  const replay = new Client(svc);
  replay.cookies.set('svc_admin_session', id);
  assert.is((await replay.get('/admin/rest-apis')).status, 303);
  assert.is((await replay.get('/api/admin/projections')).status, 401);
  assert.match((await client.get('/admin/sign-in?signed-out=1')).text, 'You have signed out.');
});

signing('sign-out without the CSRF token is refused and the session stays', async ({ svc }) => {
  const client = new Client(svc);
  await client.signIn();
  const out = await client.post('/admin/sign-out', {});
  assert.is(out.status, 403);
  assert.is((await client.get('/admin/rest-apis')).status, 200);
});

signing('failed sign-ins are throttled per address', async ({ svc }) => {
  const client = new Client(svc);
  const form = await client.get('/admin/sign-in');
  const csrf = hiddenField(form.text, 'csrf');
  let attempts = 0;
  while ((await client.post('/admin/sign-in', { csrf, token: `wrong-${attempts}` })).status === 401) assert.ok(++attempts <= 10, 'blocked after at most 10 failures');
  const blocked = await client.post('/admin/sign-in', { csrf, token: svc.adminToken });
  assert.is(blocked.status, 429);
  assert.match(blocked.text, 'Too many failed sign-in attempts');
});

signing.run();

// ------------------------------------------------------------------------------------------

const secure = suite<Ctx>('Admin UI: cookies on an https base URL', {} as Ctx);
secure.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: 'https://svc.example.org' });
});
secure.after(async (ctx) => {
  await ctx.svc?.stop();
});

secure('the session cookie is Secure and __Host- prefixed; the admin API accepts it', async ({ svc }) => {
  const client = new Client(svc);
  const form = await client.get('/admin/sign-in');
  assert.match(cookieLine(form, '__Host-svc_admin_signin') ?? '', /; Secure/);
  const reply = await client.post('/admin/sign-in', { csrf: hiddenField(form.text, 'csrf'), token: svc.adminToken });
  const line = cookieLine(reply, '__Host-svc_admin_session')!;
  assert.ok(line, JSON.stringify(reply.headers.getSetCookie()));
  assert.match(line, /; Secure/);
  assert.match(line, /; HttpOnly/);
  assert.match(line, /; SameSite=Strict/);
  assert.match(line, /; Path=\//);
  assert.not.match(line, /Domain=/);
  assert.is((await client.get('/api/admin/projections')).status, 200);
  const details = await client.get('/admin/new-rest-api');
  assert.is(details.status, 200);
});

secure.run();

// ------------------------------------------------------------------------------------------

const pages = suite<Ctx & { client: Client; csrf: string }>('Admin UI: pages behind the session', {} as Ctx & { client: Client; csrf: string });
pages.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: 'http://svc.test:8080/' });
  const created = await call(ctx.svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'seen', description: 'Seen <b>here</b> & "there"', controlFile: TITLE_CONTROL } });
  assert.is(created.status, 201);
  await call(ctx.svc, '/api/admin/users', { method: 'POST', body: { username: 'carol', name: { first: 'Carol', last: '<Example>' } } });
  ctx.client = new Client(ctx.svc);
  ctx.csrf = await ctx.client.signIn();
});
pages.after(async (ctx) => {
  await ctx.svc?.stop();
});

pages('without a session every page redirects to sign-in (with the page to come back to)', async ({ svc }) => {
  const anonymous = new Client(svc);
  for (const path of [...PAGES, '/admin', '/admin/rest-apis/seen', '/admin/rest-apis/seen/edit', '/admin/users/carol', '/admin/no-such-page']) {
    const page = await anonymous.get(path);
    assert.is(page.status, 303, path);
    assert.is(page.location, `/admin/sign-in?next=${encodeURIComponent(path)}`, path);
    assert.not.match(page.text, 'Seen', path);
  }
});

pages('without a session forms do nothing and redirect to sign-in', async ({ svc }) => {
  const anonymous = new Client(svc);
  const reply = await anonymous.post('/admin/rest-apis', { url: 'sneaky', description: 'x', controlFile: JSON.stringify(TITLE_CONTROL), csrf: 'whatever' });
  assert.is(reply.status, 303);
  assert.is(reply.location, '/admin/sign-in?expired=1');
  assert.is((await call(svc, '/api/admin/rest-apis/sneaky')).status, 404);
  for (const path of ['/admin/users', '/admin/groups', '/admin/projections/users/rebuild', '/admin/sign-out']) {
    assert.is((await anonymous.post(path, {})).status, 303, path);
  }
});

pages('static assets are public, typed and cacheable by ETag', async ({ svc }) => {
  const anonymous = new Client(svc);
  const css = await anonymous.get('/admin/assets/admin.css');
  assert.is(css.status, 200);
  assert.match(css.headers.get('content-type') ?? '', 'text/css');
  const etag = css.headers.get('etag')!;
  assert.ok(etag);
  assert.is((await anonymous.get('/admin/assets/admin.css', { 'If-None-Match': etag })).status, 304);
  const js = await anonymous.get('/admin/assets/admin.js');
  assert.is(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', 'text/javascript');
  assert.is((await anonymous.get('/admin/assets/../routes.ts')).status, 303, 'nothing else is served');
  assert.is((await anonymous.get('/admin/assets/nothing.css')).status, 404);
});

pages('every page renders for a signed-in session: HTML, a heading, navigation, no caching', async ({ client }) => {
  for (const path of PAGES) {
    const page = await client.get(path);
    assert.is(page.status, 200, path);
    assert.match(page.headers.get('content-type') ?? '', 'text/html; charset=utf-8', path);
    assert.is(page.headers.get('cache-control'), 'no-store', path);
    assert.ok(h1(page.text), `${path} has a heading`);
    assert.match(page.text, '<nav aria-label="Administration">', path);
    assert.match(page.text, '<html lang="en">', path);
    assert.match(page.text, 'action="/admin/sign-out"', path);
    // Every POST form carries the session's CSRF token.
    const forms = [...page.text.matchAll(/<form method="post"[^>]*>([\s\S]*?)<\/form>/g)];
    for (const f of forms) assert.match(f[1]!, `name="csrf" value="${metaCsrf(page.text)}"`, `${path}: a form without the token`);
  }
});

pages('every link to an admin page leads somewhere', async ({ client }) => {
  const seen = new Set<string>();
  for (const path of [...PAGES, '/admin/rest-apis/seen', '/admin/rest-apis/seen/edit', '/admin/users/carol']) {
    const text = (await client.get(path)).text;
    for (const m of text.matchAll(/href="(\/admin[^"#]*)/g)) {
      const href = unescape(m[1]!);
      if (seen.has(href)) continue;
      seen.add(href);
      const page = await client.get(href);
      assert.ok(page.status === 200 || page.status === 303, `${path} links to ${href}: ${page.status}`);
    }
  }
  assert.ok(seen.size > 15, `${seen.size} links`);
});

pages('every form control has a label', async ({ client }) => {
  for (const path of [...PAGES, '/admin/rest-apis/seen/edit', '/admin/users/carol']) {
    const text = (await client.get(path)).text;
    for (const m of text.matchAll(/<(input|textarea|select)\b([^>]*)>/g)) {
      const attrs = m[2]!;
      if (/type="hidden"/.test(attrs)) continue;
      const id = /\bid="([^"]+)"/.exec(attrs)?.[1];
      assert.ok(id, `${path}: a ${m[1]} without an id: ${attrs}`);
      assert.ok(text.includes(`for="${id}"`) || /aria-label="/.test(attrs), `${path}: #${id} has no label`);
    }
  }
});

pages('the list shows URL, description, (disabled) and response format; text is escaped', async ({ svc, client }) => {
  await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'off-one', description: 'Switched off', enabled: false, response: 'XML', controlFile: TITLE_CONTROL } });
  const page = await client.get('/admin/rest-apis');
  assert.match(page.text, '<a href="/admin/rest-apis/off-one">off-one</a> <span class="disabled">(disabled)</span>');
  assert.match(page.text, '<td>XML</td>');
  assert.match(page.text, 'Seen &lt;b&gt;here&lt;/b&gt; &amp; &quot;there&quot;');
  assert.not.match(page.text, '<b>here</b>');
  assert.not.match(page.text, /seen<\/a> <span class="disabled">/);
});

pages('the details page shows the full endpoint URL and the pretty-printed control file', async ({ client }) => {
  const page = await client.get('/admin/rest-apis/seen');
  assert.is(page.status, 200);
  assert.match(page.text, '<code id="endpoint">http://svc.test:8080/api/push-data/seen</code>');
  assert.match(page.text, unescapeSafe(JSON.stringify(TITLE_CONTROL, null, 4)));
  assert.match(page.text, 'Create API key');
  assert.match(page.text, 'Seen &lt;b&gt;here&lt;/b&gt;');
});

const unescapeSafe = (json: string) => json.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

pages('an unknown REST API, user or model is a 404 page that says so', async ({ client }) => {
  const api = await client.get('/admin/rest-apis/nothing-here');
  assert.is(api.status, 404);
  assert.match(api.text, 'REST API nothing-here does not exist');
  const user = await client.get('/admin/users/nobody');
  assert.is(user.status, 404);
  assert.match(user.text, 'User nobody does not exist');
  const model = await client.get('/admin/models/no:model');
  assert.is(model.status, 404);
  assert.match(model.text, 'Model no:model does not exist');
  const other = await client.get('/admin/nothing/at/all');
  assert.is(other.status, 404);
  assert.match(other.text, 'There is no page at /admin/nothing/at/all.');
});

pages('the model explorer shows destinations with their badges and names with type, MV and required', async ({ client }) => {
  const page = await client.get('/admin/models/svc%3Aperson');
  assert.match(page.text, 'Depends on profile');
  assert.match(page.text, '>Optional<');
  assert.match(page.text, '>Pseudo destination<');
  assert.match(page.text, '{&quot;destination&quot;:&quot;phd:project&quot;}');
  assert.match(page.text, /<th scope="row"><code>svc:attribute:job-title<\/code><\/th>\s*<td>text<\/td>/);
  assert.match(page.text, 'links to');
  const sync = await client.get('/admin/models/svc:user-sync');
  assert.match(sync.text, 'Depends on user');
  assert.match(sync.text, /<code>nameFirst<\/code><\/th>\s*<td>text<\/td>\s*<td class="center"><span class="visually-hidden">no<\/span><\/td>\s*<td class="center"><span aria-label="yes">✓<\/span><\/td>/);
});

pages.run();

// ------------------------------------------------------------------------------------------

const csrf = suite<Ctx & { client: Client; token: string }>('Admin UI: CSRF protection', {} as Ctx & { client: Client; token: string });
csrf.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.client = new Client(ctx.svc);
  ctx.token = await ctx.client.signIn();
  assert.is((await call(ctx.svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'target', description: 'Target', controlFile: TITLE_CONTROL } })).status, 201);
});
csrf.after(async (ctx) => {
  await ctx.svc?.stop();
});

csrf('a form POST without the token, with a wrong one or with another session\'s is a 403 page and changes nothing', async ({ svc, client, token }) => {
  const before = await svc.engines.events.headPosition();
  const other = new Client(svc);
  const otherToken = await other.signIn();
  const fields = { url: 'forged', description: 'Forged', controlFile: JSON.stringify(TITLE_CONTROL), response: 'JSON' };
  for (const bad of [undefined, '', 'wrong', token.slice(1), otherToken]) {
    const reply = await client.post('/admin/rest-apis', bad === undefined ? fields : { ...fields, csrf: bad });
    assert.is(reply.status, 403, `token ${bad}`);
    assert.match(reply.headers.get('content-type') ?? '', 'text/html');
    assert.is(h1(reply.text), 'Forbidden');
    assert.match(reply.text, 'security token is missing or wrong');
  }
  for (const path of ['/admin/rest-apis/target/api-keys', '/admin/rest-apis/target', '/admin/users', '/admin/groups', '/admin/projections/users/rebuild', '/admin/api-keys/x/revoke']) {
    assert.is((await client.post(path, { description: 'x', code: 'a:b', username: 'mallory' })).status, 403, path);
  }
  assert.is(await svc.engines.events.headPosition(), before, 'nothing was written');
  assert.is((await call(svc, '/api/admin/rest-apis/target')).body.description, 'Target');
});

csrf('the admin API with the session cookie: GET needs no token, other methods need X-CSRF-Token', async ({ svc, client, token }) => {
  assert.is((await client.get('/api/admin/rest-apis')).status, 200);
  const body = JSON.stringify({ url: 'by-cookie', description: 'Made with the cookie', controlFile: TITLE_CONTROL });
  const headers = { 'Content-Type': 'application/json' };
  const without = await client.request('/api/admin/rest-apis', { method: 'POST', headers, body });
  assert.is(without.status, 403);
  const error = JSON.parse(without.text);
  assert.is(error.success, false);
  assert.is(error.kind, 'svc:api:admin:csrf');
  assert.match(error.error.message, 'X-CSRF-Token');
  const wrong = await client.request('/api/admin/rest-apis', { method: 'POST', headers: { ...headers, 'X-CSRF-Token': 'nope' }, body });
  assert.is(wrong.status, 403);
  assert.is((await call(svc, '/api/admin/rest-apis/by-cookie')).status, 404);
  const right = await client.request('/api/admin/rest-apis', { method: 'POST', headers: { ...headers, 'X-CSRF-Token': token }, body });
  assert.is(right.status, 201, right.text);
});

csrf('the admin API still takes the Bearer token, and refuses requests with neither', async ({ svc }) => {
  assert.is((await call(svc, '/api/admin/rest-apis')).status, 200);
  const none = await fetch(`${svc.url}/api/admin/rest-apis`);
  assert.is(none.status, 401);
  assert.match(none.headers.get('www-authenticate') ?? '', 'Bearer');
  const forged = await fetch(`${svc.url}/api/admin/rest-apis`, { headers: { Cookie: 'svc_admin_session=forged-session-id' } });
  assert.is(forged.status, 401);
  const badBearer = await fetch(`${svc.url}/api/admin/rest-apis`, { headers: { Authorization: 'Bearer wrong-token-wrong-token' } });
  assert.is(badBearer.status, 401);
});

csrf.run();

// ------------------------------------------------------------------------------------------

type FormCtx = Ctx & { client: Client; token: string };
const forms = suite<FormCtx>('Admin UI: forms', {} as FormCtx);
forms.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.client = new Client(ctx.svc);
  ctx.token = await ctx.client.signIn();
});
forms.after(async (ctx) => {
  await ctx.svc?.stop();
});

forms('create a REST API: 303 to its page with a notice; the definition is as the API shows it', async ({ svc, client, token }) => {
  const reply = await client.post('/admin/rest-apis', [
    ['csrf', token],
    ['url', 'made-in-ui'],
    ['description', 'Made in the UI'],
    ['enabled', 'yes'],
    ['response', 'XML'],
    ['controlFile', JSON.stringify(TITLE_CONTROL)],
  ]);
  assert.is(reply.status, 303, reply.text.slice(0, 500));
  assert.is(reply.location, '/admin/rest-apis/made-in-ui');
  const page = await client.get('/admin/rest-apis/made-in-ui');
  assert.match(page.text, 'REST API made-in-ui created.');
  assert.not.match((await client.get('/admin/rest-apis/made-in-ui')).text, 'created.', 'the notice is shown once');
  const api = (await call(svc, '/api/admin/rest-apis/made-in-ui')).body;
  assert.is(api.description, 'Made in the UI');
  assert.is(api.enabled, true);
  assert.is(api.response, 'XML');
  assert.equal(api.control, TITLE_CONTROL);
});

forms('an invalid control file: 400, every validation message beside the field, the values kept', async ({ svc, client, token }) => {
  const bad = { ...TITLE_CONTROL, instructions: [{ action: 'new', destination: 'nowhere' }, { source: 'x', destination: 'object', name: 'no:such:name' }] };
  const expected = await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'bad-control', description: 'Bad', controlFile: bad } });
  assert.is(expected.status, 400);
  const reply = await client.post('/admin/rest-apis', { csrf: token, url: 'bad-control', description: 'Bad', response: 'JSON', controlFile: JSON.stringify(bad) });
  assert.is(reply.status, 400);
  assert.equal(fieldErrors(reply.text, 'f-controlFile'), expected.body.errors, 'the same messages as the API');
  assert.ok(expected.body.errors.length >= 2);
  assert.match(reply.text, 'aria-describedby="f-controlFile-hint f-controlFile-errors" aria-invalid="true"');
  assert.match(reply.text, unescapeSafe(expected.body.error.message), 'and the API\'s message in the summary');
  assert.is(valueOf(reply.text, 'f-url'), 'bad-control');
  assert.is(valueOf(reply.text, 'f-controlFile'), JSON.stringify(bad));
  const syntax = await client.post('/admin/rest-apis', { csrf: token, url: 'bad-json', description: 'Bad', response: 'JSON', controlFile: '{"oops": ' });
  assert.is(syntax.status, 400);
  assert.equal(fieldErrors(syntax.text, 'f-controlFile'), ['Invalid JSON, check syntax']);
  assert.is((await call(svc, '/api/admin/rest-apis/bad-control')).status, 404);
});

forms('all problems at once: bad URL, no description and a bad control file each shown by its field', async ({ client, token }) => {
  const reply = await client.post('/admin/rest-apis', { csrf: token, url: 'Not OK', description: '  ', response: 'JSON', controlFile: '[' });
  assert.is(reply.status, 400);
  assert.equal(fieldErrors(reply.text, 'f-url'), ['must match ^[a-z0-9-]+$ (lower-case letters, digits and hyphens)']);
  assert.equal(fieldErrors(reply.text, 'f-description'), ['is required']);
  assert.equal(fieldErrors(reply.text, 'f-controlFile'), ['Invalid JSON, check syntax']);
});

forms('a URL in use: 409 "URL is already in use." beside the URL', async ({ svc, client, token }) => {
  await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'taken', description: 'First', controlFile: TITLE_CONTROL } });
  const reply = await client.post('/admin/rest-apis', { csrf: token, url: 'taken', description: 'Second', response: 'JSON', controlFile: JSON.stringify(TITLE_CONTROL) });
  assert.is(reply.status, 409);
  assert.equal(fieldErrors(reply.text, 'f-url'), ['URL is already in use.']);
  assert.match(reply.text, 'svc:rest-api:url-in-use');
});

forms('edit: URL fixed, description, enabled, response and control file saved', async ({ svc, client, token }) => {
  await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'to-edit', description: 'Before', controlFile: TITLE_CONTROL } });
  const form = await client.get('/admin/rest-apis/to-edit/edit');
  assert.is(form.status, 200);
  assert.not.match(form.text, 'name="url"', 'no URL field when editing');
  assert.match(form.text, '<code>/api/push-data/to-edit</code>');
  assert.is(valueOf(form.text, 'f-description'), 'Before');
  assert.equal(JSON.parse(valueOf(form.text, 'f-controlFile')), TITLE_CONTROL);
  const changed = { ...TITLE_CONTROL, files: { DEFAULT: { read: 'json' } } };
  const reply = await client.post('/admin/rest-apis/to-edit', { csrf: token, url: 'sneaky-rename', description: 'After', response: 'XML', controlFile: JSON.stringify(changed) });
  assert.is(reply.status, 303, reply.text.slice(0, 300));
  const api = (await call(svc, '/api/admin/rest-apis/to-edit')).body;
  assert.is(api.url, 'to-edit');
  assert.is(api.description, 'After');
  assert.is(api.enabled, false, 'unticked');
  assert.is(api.response, 'XML');
  assert.equal(api.control, changed);
  assert.is((await call(svc, '/api/admin/rest-apis/sneaky-rename')).status, 404);
  assert.match((await client.get('/admin/rest-apis')).text, '<a href="/admin/rest-apis/to-edit">to-edit</a> <span class="disabled">(disabled)</span>');
  const invalid = await client.post('/admin/rest-apis/to-edit', { csrf: token, description: '', response: 'JSON', controlFile: JSON.stringify(changed) });
  assert.is(invalid.status, 400);
  assert.equal(fieldErrors(invalid.text, 'f-description'), ['is required']);
  assert.is((await call(svc, '/api/admin/rest-apis/to-edit')).body.description, 'After');
});

forms('create a key from the details page: shown once, works for that API only; revoke: refused', async ({ svc, client, token }) => {
  await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'keyed', description: 'Keyed', controlFile: TITLE_CONTROL } });
  const reply = await client.post('/admin/rest-apis/keyed/api-keys', { csrf: token });
  assert.is(reply.status, 201);
  assert.is(reply.headers.get('cache-control'), 'no-store');
  const key = valueOf(reply.text, 'api-key');
  assert.match(key, /^[A-Za-z0-9_-]{44}$/);
  assert.match(reply.text, 'data-copy="api-key"');
  assert.match(reply.text, 'shown only this once');
  const details = await client.get('/admin/rest-apis/keyed');
  assert.not.match(details.text, key, 'the key is not shown again');
  assert.match(details.text, 'REST API: Keyed');
  assert.match(details.text, '=/api/push-data/keyed');

  const pushed = await push(svc, 'keyed', key, { title: 'From a UI key' });
  assert.is(pushed.status, 200, pushed.text);
  const other = await push(svc, 'made-elsewhere', key, { title: 'x' });
  assert.is(other.status, 403, 'the key is for its one API');

  const id = (await call(svc, '/api/admin/api-keys')).body.apiKeys.find((k: { path: string }) => k.path === '=/api/push-data/keyed').id as string;
  const revoked = await client.post(`/admin/api-keys/${id}/revoke`, { csrf: token, back: '/admin/rest-apis/keyed#keys' });
  assert.is(revoked.status, 303);
  assert.is(revoked.location, '/admin/rest-apis/keyed#keys');
  const after = await client.get('/admin/rest-apis/keyed');
  assert.match(after.text, 'API key &quot;REST API: Keyed&quot; revoked.');
  assert.match(after.text, 'Revoked');
  const refused = await push(svc, 'keyed', key, { title: 'After revoke' });
  assert.is(refused.status, 403);
  // The list page stays short: it links to the service user's keys, listed (and searched) on the API keys page.
  const list = await client.get('/admin/rest-apis');
  assert.match(list.text, 'href="/admin/api-keys?q=svc-data-import-api"');
  assert.match((await client.get('/admin/api-keys?q=svc-data-import-api')).text, 'REST API: Keyed', 'push-data keys are listed under the service user');
});

forms('revoke goes back only to admin pages; an unknown key is reported in words', async ({ client, token }) => {
  const reply = await client.post('/admin/api-keys/no-such-key/revoke', { csrf: token, back: 'https://evil.example/' });
  assert.is(reply.status, 303);
  assert.is(reply.location, '/admin/api-keys');
  const page = await client.get('/admin/api-keys');
  assert.match(page.text, 'The key was not revoked: API key no-such-key does not exist');
});

forms('generate a control file: the same JSON as the API, 4-space indented, ready to start a REST API', async ({ svc, client, token }) => {
  const include = [
    { destination: 'profile', name: 'svc:attribute:job-title' },
    { destination: 'profile', name: 'svc:attribute:email', multivalue: true },
  ];
  const expected = await call(svc, '/api/admin/control-files/generate', { method: 'POST', body: { model: 'svc:person', include } });
  assert.is(expected.status, 200);
  const reply = await client.post('/admin/control-files/generate', [
    ['csrf', token],
    ['model', 'svc:person'],
    ['include', 'profile^svc:attribute:job-title'],
    ['include', 'profile^svc:attribute:email'],
    ['multivalue', 'profile^svc:attribute:email'],
  ]);
  assert.is(reply.status, 200);
  const generated = valueOf(reply.text, 'generated');
  assert.equal(JSON.parse(generated), expected.body.control);
  assert.is(generated, JSON.stringify(expected.body.control, null, 4));
  assert.match(reply.text, /id="inc-\d+-\d+" name="include" value="profile\^svc:attribute:email" checked/, 'the ticks are kept');
  assert.match(reply.text, '<form method="post" action="/admin/new-rest-api" class="inline">');
  const prefill = await client.post('/admin/new-rest-api', { csrf: token, controlFile: hiddenField(reply.text, 'controlFile') });
  assert.is(prefill.status, 200);
  assert.is(h1(prefill.text), 'New REST API');
  assert.equal(JSON.parse(valueOf(prefill.text, 'f-controlFile')), expected.body.control);
  assert.is(valueOf(prefill.text, 'f-url'), '');
});

forms('the generator lists only destinations it may use and reports bad selections in words', async ({ client, token }) => {
  const page = await client.get('/admin/control-files/generate?model=svc%3Aperson');
  assert.match(page.text, 'value="profile^dc:attribute:title"');
  assert.match(page.text, 'value="phd:project^phd:attribute:researcher"');
  assert.not.match(page.text, 'value="load:by-ref^ref"', 'pseudo destinations are not offered');
  assert.match(page.text, '<label for="mv-0-0">multivalue<span class="visually-hidden"> for dc:attribute:title</span></label>');
  const bad = await client.post('/admin/control-files/generate', { csrf: token, model: 'svc:person', include: 'load:by-ref^ref' });
  assert.is(bad.status, 400);
  assert.match(bad.text, 'Destination load:by-ref cannot be used when generating a control file');
  const unknown = await client.get('/admin/control-files/generate?model=nope');
  assert.is(unknown.status, 404);
  assert.match(unknown.text, 'Model nope does not exist');
});

forms('users: create (errors beside fields), change groups, issue a read key shown once, revoke it', async ({ svc, client, token }) => {
  const group = await client.post('/admin/groups', [['csrf', token], ['code', 'test:group:readers'], ['title', 'Readers'], ['readLabels', 'svc:label:common']]);
  assert.is(group.status, 303, group.text.slice(0, 400));
  const groups = await client.get('/admin/groups');
  assert.match(groups.text, 'Group test:group:readers created.');
  assert.match(groups.text, '<code>test:group:readers</code>');
  const dupGroup = await client.post('/admin/groups', { csrf: token, code: 'test:group:readers', title: 'Again' });
  assert.is(dupGroup.status, 409);
  assert.equal(fieldErrors(dupGroup.text, 'f-code'), ['Group test:group:readers already exists']);
  const badGroup = await client.post('/admin/groups', { csrf: token, code: 'Bad Code', title: 'x' });
  assert.is(badGroup.status, 400);
  assert.equal(fieldErrors(badGroup.text, 'f-code'), ['a namespaced code such as svc:group:readers']);

  const badUser = await client.post('/admin/users', { csrf: token, username: 'Not Valid', last: 'X' });
  assert.is(badUser.status, 400);
  assert.is(fieldErrors(badUser.text, 'f-username').length, 1);
  assert.is(valueOf(badUser.text, 'f-last'), 'X', 'values kept');

  const created = await client.post('/admin/users', [['csrf', token], ['username', 'dave'], ['first', 'Dave'], ['last', 'Reader'], ['email', 'dave@example.org'], ['groups', 'test:group:readers']]);
  assert.is(created.status, 303, created.text.slice(0, 400));
  assert.is(created.location, '/admin/users/dave');
  const user = (await call(svc, '/api/admin/users/dave')).body;
  assert.equal(user.groups, ['test:group:readers']);
  assert.is(user.email, 'dave@example.org');
  const dup = await client.post('/admin/users', { csrf: token, username: 'dave', last: 'Again' });
  assert.is(dup.status, 409);
  assert.equal(fieldErrors(dup.text, 'f-username'), ['User dave already exists']);

  const change = await client.post('/admin/users/dave', { csrf: token, active: 'yes' });
  assert.is(change.status, 303);
  assert.equal((await call(svc, '/api/admin/users/dave')).body.groups, []);

  const badKey = await client.post('/admin/users/dave/api-keys', { csrf: token, name: 'Bad', path: 'no-slash' });
  assert.is(badKey.status, 400);
  assert.is(fieldErrors(badKey.text, 'f-path').length, 1);
  const issued = await client.post('/admin/users/dave/api-keys', { csrf: token, name: 'Dashboard', path: '/api/v0-object/' });
  assert.is(issued.status, 201);
  const key = valueOf(issued.text, 'api-key');
  assert.match(issued.text, 'shown only this once');
  const objectRead = await fetch(`${svc.url}/api/v0-object/ref/${user.profileRef}`, { headers: { Authorization: basic(key) } });
  assert.is.not(objectRead.status, 403, 'the key authenticates');
  const keys = (await call(svc, '/api/admin/users/dave')).body.apiKeys;
  assert.is(keys.length, 1);
  const userPage = await client.get('/admin/users/dave');
  assert.match(userPage.text, 'Dashboard');
  assert.not.match(userPage.text, key);
  const revoke = await client.post(`/admin/api-keys/${keys[0].id}/revoke`, { csrf: token, back: '/admin/users/dave#keys' });
  assert.is(revoke.status, 303);
  assert.is((await call(svc, '/api/admin/users/dave')).body.apiKeys[0].revoked, true);
  const refused = await fetch(`${svc.url}/api/v0-object/ref/${user.profileRef}`, { headers: { Authorization: basic(key) } });
  assert.is(refused.status, 403);
  assert.match((await client.get('/admin/api-keys')).text, 'Dashboard');
});

forms('projections: the rebuild button starts a rebuild and the page shows its progress', async ({ svc, client, token }) => {
  const list = await client.get('/admin/projections');
  assert.match(list.text, 'data-projection="users"');
  assert.match(list.text, /data-field="lag">\d+</);
  const reply = await client.post('/admin/projections/users/rebuild', { csrf: token });
  assert.is(reply.status, 303);
  assert.is(reply.location, '/admin/projections');
  const page = await client.get('/admin/projections');
  assert.match(page.text, 'Rebuild of users started.');
  assert.match(page.text, /Rebuilding: |Rebuilt: |Switching/);
  // The rebuild runs in a worker thread that has to start first: a longer (bounded) wait.
  for (let i = 0; i < 400 && !(await svc.runner.status()).find((p) => p.name === 'users')?.rebuild?.phase.match(/done/); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match((await client.get('/admin/projections')).text, /Rebuilt: \d+ events read/);
  const unknown = await client.post('/admin/projections/nope/rebuild', { csrf: token });
  assert.is(unknown.status, 404);
  assert.match(unknown.text, 'Unknown projection: nope');
});

forms('a form that is not URL-encoded is refused in words (415)', async ({ client, token }) => {
  const reply = await client.request('/admin/groups', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ csrf: token }) });
  assert.is(reply.status, 415);
  assert.match(unescape(reply.text), 'Request body must be a form (application/x-www-form-urlencoded)');
});

forms.run();

// ------------------------------------------------------------------------------------------

const store = suite('Admin UI: session store');

/** A session store over a fresh embedded read store (what every service process shares). */
const sessionStore = (options: SessionOptions) => {
  const tmp = tempDir('svc-sessions');
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  return { reads, sessions: new SessionStore(reads, options), close: async () => (await reads.close(), tmp.remove()) };
};

store('sessions end after inactivity and at their maximum age; only hashes of ids are kept', async () => {
  let now = 1_000_000;
  const { reads, sessions, close } = sessionStore({ idleMs: 1000, maxAgeMs: 5000, clock: () => now });
  try {
    const { id, session } = await sessions.create();
    assert.equal(await sessions.get(id), session);
    now += 999;
    assert.equal((await sessions.get(id))?.csrf, session.csrf, 'activity restarts the idle timer');
    now += 999;
    assert.ok(await sessions.get(id));
    now += 1000;
    assert.is(await sessions.get(id), undefined, 'idle too long');
    const second = await sessions.create();
    for (let i = 0; i < 6; i++) {
      now += 900;
      if (i < 5) assert.ok(await sessions.get(second.id), `alive at ${i}`);
    }
    assert.is(await sessions.get(second.id), undefined, 'past the maximum age');
    assert.is(await sessions.get('made-up'), undefined);
    const third = await sessions.create();
    const stored = JSON.stringify(await reads.find(ADMIN_SESSIONS));
    assert.ok(stored.includes(third.session.csrf), 'the session is in the read store');
    assert.not.ok(stored.includes(third.id), 'but not its id');
  } finally {
    await close();
  }
});

store('the store keeps at most maxSessions, dropping the least recently used', async () => {
  let now = 1_000_000;
  const { sessions, close } = sessionStore({ maxSessions: 2, touchMs: 0, clock: () => now });
  try {
    const a = await sessions.create();
    now += 10;
    const b = await sessions.create();
    now += 10;
    await sessions.get(a.id);
    now += 10;
    const c = await sessions.create();
    assert.ok(await sessions.get(a.id));
    assert.is(await sessions.get(b.id), undefined);
    assert.ok(await sessions.get(c.id));
    assert.is(await sessions.size(), 2);
  } finally {
    await close();
  }
});

store('a session ended by one store object is ended for another over the same read store, and stays ended', async () => {
  const { reads, sessions, close } = sessionStore({});
  try {
    const other = new SessionStore(reads, { touchMs: 0 });
    const { id } = await sessions.create();
    const seen = await other.get(id);
    assert.ok(seen, 'known to the other');
    await sessions.destroy(id);
    assert.is(await other.get(id), undefined);
    // A process that loaded the session just before the sign-out writes it back afterwards: still ended.
    seen!.flash = { kind: 'success', text: 'late write' };
    await other.save(id, seen!);
    assert.is(await other.get(id), undefined);
    assert.is(await sessions.get(id), undefined);
  } finally {
    await close();
  }
});

store.run();
