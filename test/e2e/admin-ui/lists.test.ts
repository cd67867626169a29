/**
 * The admin interface's lists over HTTP (issue 16, item 6): paging (50 a page, Previous / Next
 * keeping the search, counts) and server-side search on every list, the object browser, the file
 * list and page, the event-log view, the "Using it" example per format, and 400 pages (never a
 * 500) for malformed query parameters.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createGroup, createObject, createUser, issueKey, patchObject } from '../../support/fixtures.ts';
import { control } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { tempDir } from '../../support/tmp.ts';
import { Client, h1, unescape } from './client.ts';

interface Ctx {
  svc: TestService;
  client: Client;
  /** A project whose title was changed 4 times (5 events). */
  project: string;
  file: { digest: string; fileSize: number; bytes: Buffer };
}

const TITLE = 'dc:attribute:title';
const PROJECT_CONTROL = (read: Record<string, unknown>) =>
  control('TYPE:phd:type:project', [{ action: 'new', destination: 'object' }, { source: 'title', destination: 'object', name: TITLE }], {}, read);

const test = suite<Ctx>('Admin UI: paged and searchable lists, object browser, files, events, examples', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  // 61 REST APIs: a page of 50 and one of 11.
  for (let i = 0; i < 61; i++) {
    const url = `api-${String(i).padStart(3, '0')}`;
    const made = await call(ctx.svc, '/api/admin/rest-apis', { method: 'POST', body: { url, description: `API number ${i}`, controlFile: PROJECT_CONTROL({ read: 'json', singleRecord: true }) } });
    assert.is(made.status, 201, JSON.stringify(made.body));
  }
  ctx.project = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Zebra study 0' })).ref;
  for (let i = 1; i <= 4; i++) assert.is((await patchObject(ctx.svc, ctx.project, { attributes: { [TITLE]: `Zebra study ${i}` } })).status, 200);
  await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Apple project' });
  await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Apple department' });
  await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Banana department' });
  const bytes = Buffer.from('name\tsize\nsmall\t1\n');
  const stored = await ctx.svc.request('/api/admin/files?filename=sizes.tsv', { method: 'POST', body: bytes, headers: { 'Content-Type': 'text/tab-separated-values' } });
  assert.ok(stored.status === 201 || stored.status === 200, `file: ${stored.status}`);
  const meta = (await stored.json()) as { digest: string; fileSize: number };
  ctx.file = { digest: meta.digest, fileSize: meta.fileSize, bytes };
  ctx.client = new Client(ctx.svc);
  await ctx.client.signIn();
});

test.after(async ({ svc }) => {
  await svc?.stop();
});

const rowsOf = (text: string, table = ''): string[] => {
  const body = table ? new RegExp(`<table class="data[^"]*" id="${table}">[\\s\\S]*?</table>`).exec(text)?.[0] ?? '' : text;
  return [...body.matchAll(/<th scope="row">([\s\S]*?)<\/th>/g)].map((m) => unescape(m[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim()));
};
const countOf = (text: string) => unescape(/<p class="count" role="status">([\s\S]*?)<\/p>/.exec(text)?.[1]?.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim() ?? '');
const linkOf = (text: string, rel: 'next' | 'prev') => {
  const m = new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(text);
  return m ? unescape(m[1]!) : undefined;
};

test('REST APIs: 50 a page, Next and Previous, counts; the page stays short', async ({ client }) => {
  const first = await client.get('/admin/rest-apis');
  assert.is(first.status, 200);
  const apis = rowsOf(first.text).filter((r) => r.startsWith('api-'));
  assert.is(apis.length, 50);
  assert.is(apis[0], 'api-000');
  assert.is(apis[49], 'api-049');
  assert.is(countOf(first.text), '1–50 of 61 REST APIs');
  assert.is(linkOf(first.text, 'prev'), undefined);
  const next = linkOf(first.text, 'next');
  assert.ok(next, 'a Next link');

  const second = await client.get(next!);
  assert.is(second.status, 200);
  assert.equal(rowsOf(second.text).filter((r) => r.startsWith('api-')), Array.from({ length: 11 }, (_, i) => `api-${String(50 + i).padStart(3, '0')}`));
  assert.is(countOf(second.text), '51–61 of 61 REST APIs');
  assert.is(linkOf(second.text, 'next'), undefined);
  const back = await client.get(linkOf(second.text, 'prev')!);
  assert.equal(rowsOf(back.text).filter((r) => r.startsWith('api-')), apis);
  assert.is(countOf(back.text), '1–50 of 61 REST APIs');
});

test('REST APIs: search by URL prefix, on the server; the links keep the search', async ({ client }) => {
  const found = await client.get('/admin/rest-apis?q=API-05');
  assert.is(found.status, 200);
  assert.equal(rowsOf(found.text).filter((r) => r.startsWith('api-')), ['api-050', 'api-051', 'api-052', 'api-053', 'api-054', 'api-055', 'api-056', 'api-057', 'api-058', 'api-059']);
  assert.is(countOf(found.text), '1–10 of 10 REST APIs');
  assert.match(found.text, 'value="api-05"');

  const paged = await client.get('/admin/rest-apis?q=api-0&size=7');
  assert.is(countOf(paged.text), '1–7 of 61 REST APIs');
  const next = linkOf(paged.text, 'next')!;
  assert.match(next, 'q=api-0');
  assert.match(next, 'size=7');
  const second = await client.get(next);
  assert.equal(rowsOf(second.text).filter((r) => r.startsWith('api-')), ['api-007', 'api-008', 'api-009', 'api-010', 'api-011', 'api-012', 'api-013']);
  assert.is(countOf(second.text), '8–14 of 61 REST APIs');

  const none = await client.get('/admin/rest-apis?q=nothing-like-this');
  assert.match(none.text, 'Nothing matches this search.');
  assert.is(countOf(none.text), '0 REST APIs');
});

test('users, groups and API keys: paged and searched by their names', async ({ svc, client }) => {
  for (const name of ['carol', 'carl', 'dave']) await createUser(svc, { username: name });
  await createGroup(svc, { code: 'example:group:alpha', title: 'Alpha' });
  await createGroup(svc, { code: 'example:group:beta', title: 'Beta' });
  await issueKey(svc, 'carol', { name: 'Carol key' });
  await issueKey(svc, 'dave', { name: 'Dave key' });

  const users = await client.get('/admin/users?q=car');
  assert.equal(rowsOf(users.text), ['carl', 'carol']);
  assert.is(countOf(users.text), '1–2 of 2 users');
  const pagedUsers = await client.get('/admin/users?size=1&q=car');
  assert.equal(rowsOf(pagedUsers.text), ['carl']);
  assert.equal(rowsOf((await client.get(linkOf(pagedUsers.text, 'next')!)).text), ['carol']);

  const groups = await client.get('/admin/groups?q=example:group:b');
  assert.equal(rowsOf(groups.text), ['example:group:beta']);

  const keys = await client.get('/admin/api-keys?q=dav');
  assert.equal(rowsOf(keys.text), ['Dave key']);
  assert.is(countOf(keys.text), '1–1 of 1 API keys');
});

test('models: searched and paged in memory by number', async ({ client }) => {
  const all = await client.get('/admin/models');
  assert.is(all.status, 200);
  const person = await client.get('/admin/models?q=PERSON');
  assert.match(person.text, 'svc:person');
  assert.not.match(person.text, 'svc:user-sync');
  assert.match(countOf(person.text), / models$/);
});

test('object browser: search by title prefix and by type; results link to the object page', async ({ client, project }) => {
  const apples = await client.get('/admin/objects?q=Apple');
  assert.is(apples.status, 200);
  assert.equal(rowsOf(apples.text, 'objects'), ['Apple department', 'Apple project']);
  const departments = await client.get('/admin/objects?type=svc:type:department');
  assert.equal(rowsOf(departments.text, 'objects'), ['Apple department', 'Banana department']);
  const both = await client.get('/admin/objects?q=Apple&type=phd:type:project');
  assert.equal(rowsOf(both.text, 'objects'), ['Apple project']);

  const zebra = await client.get('/admin/objects?q=Zebra');
  assert.equal(rowsOf(zebra.text, 'objects'), ['Zebra study 4']);
  assert.match(zebra.text, `<a href="/admin/objects/${project}">Zebra study 4</a>`);
  const page = await client.get(`/admin/objects/${project}`);
  assert.is(h1(page.text), 'Zebra study 4');
  assert.match(page.text, `href="/admin/events?stream=object-${project}"`, 'the object page links to its events');
});

test('file list: name, size, type, digest, created; the file page has a working signed download link', async ({ svc, client, file }) => {
  const list = await client.get('/admin/files');
  assert.is(list.status, 200);
  assert.equal(rowsOf(list.text, 'files'), ['sizes.tsv']);
  assert.match(list.text, `${file.fileSize} bytes`);
  assert.match(list.text, 'text/tab-separated-values');
  assert.match(list.text, file.digest.slice(0, 12));
  assert.is(rowsOf((await client.get(`/admin/files?q=${file.digest.slice(0, 6)}`)).text, 'files').length, 1);
  assert.is(rowsOf((await client.get(`/admin/files?q=${file.digest.startsWith('0') ? '1' : '0'}`)).text, 'files').length, 0);

  const href = /<a href="(\/admin\/files\/[^"]+)">sizes\.tsv<\/a>/.exec(list.text)?.[1];
  assert.ok(href, 'the name links to the file page');
  const details = await client.get(href!);
  assert.is(details.status, 200);
  assert.match(details.text, file.digest);
  const download = /<a class="button" href="([^"]+)" id="download">/.exec(details.text)?.[1];
  assert.ok(download, 'a download link');
  const got = await fetch(`${svc.url}${unescape(download!)}`);
  assert.is(got.status, 200);
  assert.equal(Buffer.from(await got.arrayBuffer()), file.bytes);
  assert.is((await client.get('/admin/files/nope')).status, 404);
});

test('file list: found by a filename prefix as typed (names are case-sensitive), and by a digest prefix in either case', async ({ svc, client, file }) => {
  const names = ['Quarterly Report.pdf', 'quarterly notes.txt', 'beef stew.txt', 'Ærø map.txt'];
  const digests: Record<string, string> = {};
  for (const name of names) {
    const res = await svc.request(`/api/admin/files?filename=${encodeURIComponent(name)}`, { method: 'POST', body: `the file ${name}`, headers: { 'Content-Type': 'text/plain' } });
    assert.is(res.status, 201, name);
    digests[name] = ((await res.json()) as { digest: string }).digest;
  }
  const found = async (q: string) => {
    const page = await client.get(`/admin/files?q=${encodeURIComponent(q)}`);
    assert.is(page.status, 200, q);
    return rowsOf(page.text, 'files').sort();
  };
  assert.equal(await found('Quarterly'), ['Quarterly Report.pdf']);
  assert.equal(await found('quarterly'), ['quarterly notes.txt']);
  assert.equal(await found('Q'), ['Quarterly Report.pdf']);
  assert.equal(await found('Ærø'), ['Ærø map.txt']);
  assert.equal(await found('sizes.t'), ['sizes.tsv']);
  assert.equal(await found('nothing like it'), []);
  // Looks like hex: names and digests starting with it both count.
  assert.equal(await found('beef'), ['beef stew.txt', ...Object.keys(digests).filter((n) => digests[n]!.startsWith('beef'))].sort());
  assert.equal(await found(digests['Ærø map.txt']!.slice(0, 10)), ['Ærø map.txt']);
  assert.equal(await found(file.digest.slice(0, 10).toUpperCase()), ['sizes.tsv']);
  const page = await client.get('/admin/files?q=Quarterly');
  assert.match(page.text, 'value="Quarterly"', 'the search box keeps the case typed');
});

test('event log of a stream: type, version, time, correlation id, data; paged both ways', async ({ client, project }) => {
  const stream = `object-${project}`;
  const page = await client.get(`/admin/events?stream=${stream}&size=2`);
  assert.is(page.status, 200);
  const versions = (t: string) => [...t.matchAll(/<tr data-revision="(\d+)"/g)].map((m) => Number(m[1]));
  assert.equal(versions(page.text), [0, 1]);
  assert.is(countOf(page.text), '1–2 of 5 events');
  assert.match(page.text, 'ObjectCreated');
  assert.match(page.text, 'Zebra study 0', 'a preview of the data');
  assert.match(page.text, `/admin/objects/${project}`, 'links back to the object');
  const second = await client.get(linkOf(page.text, 'next')!);
  assert.equal(versions(second.text), [2, 3]);
  const third = await client.get(linkOf(second.text, 'next')!);
  assert.equal(versions(third.text), [4]);
  assert.is(linkOf(third.text, 'next'), undefined);
  assert.equal(versions((await client.get(linkOf(third.text, 'prev')!)).text), [2, 3]);

  const log = await client.get('/admin/events?q=object-&type=ObjectCreated');
  assert.is(log.status, 200);
  assert.match(log.text, `object-${project}`);
  assert.not.match(log.text, 'ObjectAttributesChanged');
  assert.match((await client.get('/admin/events?stream=no-such-stream')).text, 'This stream has no events.');
});

test('malformed list parameters are a 400 page in HTML, never a 500', async ({ client }) => {
  const bad = [
    '/admin/rest-apis?after=%25%25%25',
    `/admin/rest-apis?after=${Buffer.from('{"x":1}').toString('base64url')}`,
    `/admin/rest-apis?after=${Buffer.from('not json').toString('base64url')}`,
    '/admin/rest-apis?after=WyJhIl0&before=WyJhIl0',
    '/admin/rest-apis?size=0',
    '/admin/rest-apis?size=abc',
    '/admin/rest-apis?size=100000',
    '/admin/users?q=a&q=b',
    `/admin/users?q=${'x'.repeat(201)}`,
    '/admin/groups?q=%00',
    '/admin/api-keys?before=!!',
    '/admin/models?page=abc',
    '/admin/models?page=0',
    '/admin/models?page=99',
    '/admin/objects?type=no:such:type',
    `/admin/objects?after=${Buffer.from('[{"a":1},"x"]').toString('base64url')}`,
    '/admin/files?after=zz',
    '/admin/events?stream=x&from=-1',
    '/admin/events?after=1.5',
    '/admin/events?size=201',
  ];
  for (const path of bad) {
    const page = await client.get(path);
    assert.is(page.status, 400, `${path}: ${page.status} ${page.text.slice(0, 300)}`);
    assert.match(page.headers.get('content-type') ?? '', 'text/html', path);
    assert.match(page.text, 'svc:admin:bad-query', path);
  }
});

// ------------------------------------------------------------------------------------------

const exampleOf = (text: string) => unescape(/<pre class="code" tabindex="0" aria-label="Example request" id="example">([\s\S]*?)<\/pre>/.exec(text)?.[1] ?? '');

test('"Using it": --data-binary and the Content-Type of each format; the TSV example, run as shown, applies every record', async ({ svc, client }) => {
  const formats: [string, Record<string, unknown>, string, string][] = [
    ['fmt-json', { read: 'json' }, 'application/json', 'records.json'],
    ['fmt-tsv', { read: 'tsv-with-name-row' }, 'text/tab-separated-values', 'records.tsv'],
    ['fmt-csv', { read: 'tsv-with-name-row', separator: ',' }, 'text/csv', 'records.csv'],
    ['fmt-xml', { read: 'xml-text-of-children', charset: 'iso-8859-1' }, 'application/xml; charset=iso-8859-1', 'records.xml'],
  ];
  for (const [url, read, type, file] of formats) {
    const made = await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url, description: url, controlFile: PROJECT_CONTROL(read) } });
    assert.is(made.status, 201, JSON.stringify(made.body));
    const details = exampleOf((await client.get(`/admin/rest-apis/${url}`)).text);
    assert.is(details, `curl -u "svc:$API_KEY" -H 'Content-Type: ${type}' --data-binary @${file} '${svc.config.baseUrl.replace(/\/+$/, '')}/api/push-data/${url}'`);
    assert.not.match(details, '--data ');
  }

  const token = await client.csrf();
  const created = await client.post('/admin/rest-apis/fmt-tsv/api-keys', { csrf: token });
  assert.is(created.status, 201);
  const example = exampleOf(created.text);
  assert.match(example, /^curl -u 'svc:[^']+' -H 'Content-Type: text\/tab-separated-values' --data-binary @records\.tsv '/);

  // Run it as an integrator would, from a directory holding records.tsv (against the test's port).
  const dir = tempDir('svc-using-it');
  writeFileSync(join(dir.dir, 'records.tsv'), 'title\nFrom curl one\nFrom curl two\n');
  const args = [...example.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!).slice(1);
  const target = args.pop()!.replace(svc.config.baseUrl.replace(/\/+$/, ''), svc.url);
  const { stdout } = await promisify(execFile)('curl', ['-sS', ...args, target], { cwd: dir.dir });
  const reply = JSON.parse(stdout) as { result: string; applied: number };
  assert.is(reply.result, 'success', stdout);
  assert.is(reply.applied, 2, stdout);
  dir.remove();
});

test.run();
