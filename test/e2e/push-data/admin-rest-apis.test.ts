/**
 * The admin side of push-data APIs, end to end: REST API definitions (haplo-behaviour.md §2.1),
 * their keys, the model explorer (§3.4) and the control-file generator (§3.11).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createUser, expectError, type Reply } from '../../support/fixtures.ts';
import { adminObject, attr, control, defineApi, expectSuccess, plain, push, PUSH_DATA_GROUP, PUSH_DATA_USER } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

interface Ctx {
  svc: TestService;
}
const test = suite<Ctx>('Push data admin: REST API definitions, keys, models, generator', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const TITLE_CONTROL = control('TYPE:phd:type:project', [
  { action: 'new', destination: 'object' },
  { source: 'title', destination: 'object', name: 'dc:attribute:title' },
]);

const define = (svc: TestService, body: unknown) => call(svc, '/api/admin/rest-apis', { method: 'POST', body });
const change = (svc: TestService, url: string, body: unknown) => call(svc, `/api/admin/rest-apis/${url}`, { method: 'PUT', body });

/** A refused control file: 400, every message in `errors`, and Haplo's form message. */
const expectInvalidControl = (reply: Reply, errors: string[]) => {
  expectError(reply, 400, 'svc:rest-api:invalid-control-file', errors[0] === 'Invalid JSON, check syntax' ? errors[0] : `Not a valid control file: ${errors.join(', ')}`);
  assert.equal(reply.body.errors, errors);
};

// --------------------------------------------------------------------------------------------
// POST /api/admin/rest-apis

test('POST creates a definition (201) with enabled and response defaulted, and GET shows it', async ({ svc }) => {
  const created = await define(svc, { url: 'create-me', description: 'Create me', controlFile: TITLE_CONTROL });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(created.body.url, 'create-me');
  assert.is(created.body.description, 'Create me');
  assert.is(created.body.enabled, true);
  assert.is(created.body.response, 'JSON');
  assert.equal(created.body.control, TITLE_CONTROL);

  const got = await call(svc, '/api/admin/rest-apis/create-me');
  assert.is(got.status, 200);
  assert.is(got.body.url, 'create-me');
  assert.equal(got.body.control, TITLE_CONTROL);
  assert.is(got.body.enabled, true);

  const xml = await define(svc, { url: 'create-me-xml', description: 'XML one', enabled: false, response: 'XML', controlFile: TITLE_CONTROL });
  assert.is(xml.status, 201);
  assert.is(xml.body.enabled, false);
  assert.is(xml.body.response, 'XML');
});

test('the url must match ^[a-z0-9-]+$', async ({ svc }) => {
  for (const url of ['Upper', 'has space', 'under_score', 'dot.ted', 'slash/ed', '', 'é']) {
    const reply = await define(svc, { url, description: 'Bad url', controlFile: TITLE_CONTROL });
    expectError(reply, 400, 'svc:rest-api:invalid-url');
  }
  for (const url of ['a', '0', 'a-b-c', '123-abc']) {
    const reply = await define(svc, { url: `ok-${url}`, description: 'Good url', controlFile: TITLE_CONTROL });
    assert.is(reply.status, 201, `${url}: ${JSON.stringify(reply.body)}`);
  }
});

test('a url already in use is refused with 409 "URL is already in use."', async ({ svc }) => {
  assert.is((await define(svc, { url: 'taken', description: 'First', controlFile: TITLE_CONTROL })).status, 201);
  const again = await define(svc, { url: 'taken', description: 'Second', controlFile: TITLE_CONTROL });
  expectError(again, 409, 'svc:rest-api:url-in-use', 'URL is already in use.');
  assert.is((await call(svc, '/api/admin/rest-apis/taken')).body.description, 'First', 'the first definition is kept');
});

test('description is required; response is JSON or XML; the body must be a definition', async ({ svc }) => {
  expectError(await define(svc, { url: 'no-desc', description: '  ', controlFile: TITLE_CONTROL }), 400, 'svc:rest-api:invalid-description');
  assert.is((await define(svc, { url: 'no-desc', controlFile: TITLE_CONTROL })).status, 400);
  assert.is((await define(svc, { url: 'no-control', description: 'x' })).status, 400);
  assert.is((await define(svc, { url: 'bad-response', description: 'x', response: 'CSV', controlFile: TITLE_CONTROL })).status, 400);
  assert.is((await define(svc, { url: 'bad-enabled', description: 'x', enabled: 'yes', controlFile: TITLE_CONTROL })).status, 400);
  assert.is((await call(svc, '/api/admin/rest-apis/no-desc')).status, 404, 'nothing was defined');
});

test('an invalid control file is refused with every validation message (structure)', async ({ svc }) => {
  const reply = await define(svc, {
    url: 'invalid-structure',
    description: 'x',
    controlFile: { dataImportControlFileVersion: 2, model: 'svc:nope', instructions: [{ action: 'bogus' }], files: { DEFAULT: { read: 'csv' } }, recordProcessor: 'merge' },
  });
  expectInvalidControl(reply, [
    'Bad version of control file, should be 0',
    'Model not implemented: svc:nope',
    'Unknown action in instruction: bogus',
    'Unknown reader for file DEFAULT: csv',
    'Unknown record processor specified in recordProcessor property: merge',
  ]);
  expectInvalidControl(await define(svc, { url: 'invalid-empty', description: 'x', controlFile: {} }), [
    'Not a control file',
    'Control file does not specify model in the model property',
    'Control file does not specify processing instructions in the instructions property',
    'Control file does not have files property',
  ]);
  expectInvalidControl(await define(svc, { url: 'invalid-array', description: 'x', controlFile: [] }), ['Not a control file']);
  expectInvalidControl(await define(svc, { url: 'invalid-reader', description: 'x', controlFile: { ...TITLE_CONTROL, files: { DEFAULT: {} } } }), [
    'Reader not specified for file DEFAULT',
  ]);
  assert.is((await call(svc, '/api/admin/rest-apis/invalid-structure')).status, 404);
});

test('an invalid control file is refused with every validation message (checks against the model)', async ({ svc }) => {
  const reply = await define(svc, {
    url: 'invalid-model-checks',
    description: 'x',
    controlFile: control('TYPE:phd:type:project', [
      { action: 'new', destination: 'object' },
      { source: 'a', destination: 'nowhere', name: 'x' },
      { source: 'a', destination: 'object', name: 'svc:nope' },
      { source: 'a', destination: 'object', name: 'phd:attribute:start-date' },
      { source: 'a', destination: 'object', name: 'dc:attribute:title', qualifier: 'svc:qualifier:nope' },
      { source: 'a', destination: 'object', name: 'svc:attribute:department', refMapping: 'missing' },
      { action: 'assert-destination', destination: 'object', exists: true },
      { action: 'load', destination: 'object', using: 'load:nothing' },
    ]),
  });
  expectInvalidControl(reply, [
    'Unknown destination in field: nowhere',
    'Unknown name in field svc:nope for destination object',
    'Date format not specified for input field a',
    "Couldn't create value transformer for field object/phd:attribute:start-date",
    "Invalid qualifier 'svc:qualifier:nope' in field object/dc:attribute:title",
    'Unknown mapping: missing',
    'Can only use dependent destinations in assert-destination: object',
    'Unknown destination in load: load:nothing',
  ]);
});

test('instruction checks: required properties, for-each overwrite, filters (first problem reported)', async ({ svc }) => {
  const cases: [unknown[], string][] = [
    [[{ action: 'load', destination: 'object' }], 'Expected property not found in load instruction: using'],
    [[{ action: 'set-value' }], 'Expected property not found in set-value instruction: destination, name, value'],
    [[{ source: 'a', destination: 'object', name: 'dc:attribute:title', filters: ['svc:nope'] }], 'Filter svc:nope is not available.'],
    [[{ source: 'a', destination: 'object', name: 'dc:attribute:title', filters: 'svc:to-string' }], "'filters' property is not an array"],
    [
      [{ action: 'for-each', source: 'xs', instructions: [{ source: 'v', destination: 'object', name: 'dc:attribute:title' }] }],
      'Assigning values within for-each without a new/load statement or setting multivalue property will result in overwritten data',
    ],
    [[{ action: 'if-exists', source: 'a', then: [{ action: 'nope' }] }], 'Unknown action in instruction: nope'],
  ];
  for (const [instructions, message] of cases) {
    const reply = await define(svc, { url: 'invalid-instruction', description: 'x', controlFile: control('TYPE:phd:type:project', instructions) });
    expectInvalidControl(reply, [message]);
  }
  // The for-each check is satisfied by a new inside the loop, or by multivalue.
  const ok = await define(svc, {
    url: 'for-each-ok',
    description: 'x',
    controlFile: control('TYPE:phd:type:project', [
      { action: 'for-each', source: 'xs', instructions: [{ action: 'new', destination: 'object' }, { source: 'v', destination: 'object', name: 'dc:attribute:title' }] },
    ]),
  });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
});

test('the control file may be sent as a JSON string; a string that is not JSON is "Invalid JSON, check syntax"', async ({ svc }) => {
  const asString = await define(svc, { url: 'as-string', description: 'x', controlFile: JSON.stringify(TITLE_CONTROL) });
  assert.is(asString.status, 201, JSON.stringify(asString.body));
  assert.equal(asString.body.control, TITLE_CONTROL, 'stored parsed');
  assert.equal((await call(svc, '/api/admin/rest-apis/as-string')).body.control, TITLE_CONTROL);

  expectInvalidControl(await define(svc, { url: 'bad-string', description: 'x', controlFile: '{"dataImportControlFileVersion": 0,' }), ['Invalid JSON, check syntax']);
  expectInvalidControl(await define(svc, { url: 'bad-string', description: 'x', controlFile: '' }), ['Invalid JSON, check syntax']);
  // A string holding valid JSON that is not a control file is validated like any other.
  expectInvalidControl(await define(svc, { url: 'bad-string', description: 'x', controlFile: '"just a string"' }), ['Not a control file']);
});

test('a control file nested absurdly deep is refused, not a 500', async ({ svc }) => {
  const depth = 5000;
  const instructions = `${'[{"action":"if-exists","source":"a","then":'.repeat(depth)}[]${'}]'.repeat(depth)}`;
  const body = `{"url":"too-deep","description":"x","controlFile":{"dataImportControlFileVersion":0,"model":"TYPE:phd:type:project","files":{"DEFAULT":{"read":"json"}},"instructions":${instructions}}}`;
  const reply = await call(svc, '/api/admin/rest-apis', { method: 'POST', body });
  expectError(reply, 400, 'svc:rest-api:invalid-control-file');
  assert.match(reply.body.errors[0], /nested too deeply/);
  const deepValue = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const body2 = `{"url":"too-deep","description":"x","controlFile":{"dataImportControlFileVersion":0,"model":"TYPE:phd:type:project","files":{"DEFAULT":{"read":"json"}},"instructions":[{"action":"new","destination":"object"},{"action":"set-value","destination":"object","name":"phd:attribute:extra","value":${deepValue}}]}}`;
  expectError(await call(svc, '/api/admin/rest-apis', { method: 'POST', body: body2 }), 400, 'svc:rest-api:invalid-control-file');
  assert.is((await call(svc, '/api/admin/rest-apis/too-deep')).status, 404);
});

// --------------------------------------------------------------------------------------------
// GET

test('GET lists every definition sorted by url; GET of an unknown url is 404', async ({ svc }) => {
  await define(svc, { url: 'zz-last', description: 'Last', controlFile: TITLE_CONTROL });
  await define(svc, { url: '00-first', description: 'First', controlFile: TITLE_CONTROL });
  const list = await call(svc, '/api/admin/rest-apis');
  assert.is(list.status, 200);
  const urls = (list.body.restApis as { url: string }[]).map((a) => a.url);
  assert.ok(urls.includes('zz-last') && urls.includes('00-first') && urls.includes('create-me'));
  assert.equal(urls, [...urls].sort());
  const first = (list.body.restApis as { url: string; description: string; control: unknown }[]).find((a) => a.url === '00-first')!;
  assert.is(first.description, 'First');
  assert.equal(first.control, TITLE_CONTROL);

  expectError(await call(svc, '/api/admin/rest-apis/never-defined'), 404, 'svc:rest-api:no-such-api');
});

test('the admin API needs the admin token', async ({ svc }) => {
  const reply = await call(svc, '/api/admin/rest-apis', { admin: false });
  assert.ok(reply.status === 401 || reply.status === 403, String(reply.status));
  const post = await call(svc, '/api/admin/rest-apis', { admin: false, method: 'POST', body: { url: 'no-admin', description: 'x', controlFile: TITLE_CONTROL } });
  assert.ok(post.status === 401 || post.status === 403, String(post.status));
  assert.is((await call(svc, '/api/admin/rest-apis/no-admin')).status, 404);
});

// --------------------------------------------------------------------------------------------
// PUT

test('PUT changes description, response and control file; the url cannot change', async ({ svc }) => {
  await define(svc, { url: 'editable', description: 'Before', controlFile: TITLE_CONTROL });
  const edited = await change(svc, 'editable', { description: 'After', response: 'XML' });
  assert.is(edited.status, 200, JSON.stringify(edited.body));
  assert.is(edited.body.description, 'After');
  assert.is(edited.body.response, 'XML');
  assert.is(edited.body.url, 'editable');
  assert.equal(edited.body.control, TITLE_CONTROL);

  assert.is((await change(svc, 'editable', { url: 'editable', response: 'JSON' })).status, 200, 'the same url is accepted');
  expectError(await change(svc, 'editable', { url: 'renamed' }), 400, 'svc:rest-api:url-immutable');
  assert.is((await call(svc, '/api/admin/rest-apis/renamed')).status, 404);

  expectError(await change(svc, 'editable', { description: '' }), 400, 'svc:rest-api:invalid-description');
  expectInvalidControl(await change(svc, 'editable', { controlFile: { ...TITLE_CONTROL, model: 'svc:nope' } }), ['Model not implemented: svc:nope']);
  expectInvalidControl(await change(svc, 'editable', { controlFile: '{' }), ['Invalid JSON, check syntax']);
  expectError(await change(svc, 'never-defined', { description: 'x' }), 404, 'svc:rest-api:no-such-api');

  const got = await call(svc, '/api/admin/rest-apis/editable');
  assert.is(got.body.description, 'After');
  assert.is(got.body.response, 'JSON');
  assert.equal(got.body.control, TITLE_CONTROL, 'refused changes left the control file alone');
});

test('PUT of a new control file changes what pushes do', async ({ svc }) => {
  const api = await defineApi(svc, TITLE_CONTROL);
  const first = expectSuccess(await api.push({ title: 'From title', other: 'From other' }));
  assert.equal(plain(await adminObject(svc, first.actions[0]!.changed[0]!.ref), 'dc:attribute:title'), ['From title']);
  const swapped = control('TYPE:phd:type:project', [
    { action: 'new', destination: 'object' },
    { source: 'other', destination: 'object', name: 'dc:attribute:title' },
  ]);
  assert.is((await change(svc, api.url, { controlFile: swapped })).status, 200);
  const second = expectSuccess(await api.push({ title: 'From title', other: 'From other' }));
  assert.equal(plain(await adminObject(svc, second.actions[0]!.changed[0]!.ref), 'dc:attribute:title'), ['From other']);
});

test('a disabled API answers "API is disabled: <url>" (400) and changes nothing; enabling it again works', async ({ svc }) => {
  const api = await defineApi(svc, TITLE_CONTROL);
  const off = await change(svc, api.url, { enabled: false });
  assert.is(off.status, 200);
  assert.is(off.body.enabled, false);
  const before = await svc.engines.events.headPosition();
  const refused = await api.push({ title: 'Not while disabled' });
  assert.is(refused.status, 400);
  assert.equal(refused.body, { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: [`API is disabled: ${api.url}`], actions: [] });
  assert.is(await svc.engines.events.headPosition(), before, 'nothing written');

  assert.is((await change(svc, api.url, { enabled: true })).status, 200);
  expectSuccess(await api.push({ title: 'Enabled again' }));
});

test('an API defined disabled refuses pushes from the start', async ({ svc }) => {
  const api = await defineApi(svc, TITLE_CONTROL, { enabled: false });
  const refused = await api.push({ title: 'x' });
  assert.is(refused.status, 400);
  assert.equal(refused.body.errors, [`API is disabled: ${api.url}`]);
});

// --------------------------------------------------------------------------------------------
// POST .../api-keys

test('POST .../api-keys issues a key (201 {id, key, path}) for the push-data service user, exact path', async ({ svc }) => {
  await define(svc, { url: 'keyed', description: 'Keyed API', controlFile: TITLE_CONTROL });
  const issued = await call(svc, '/api/admin/rest-apis/keyed/api-keys', { method: 'POST', body: {} });
  assert.is(issued.status, 201, JSON.stringify(issued.body));
  assert.equal(Object.keys(issued.body).sort(), ['id', 'key', 'path']);
  assert.is(issued.body.path, '=/api/push-data/keyed');
  assert.match(issued.body.key, /^[A-Za-z0-9_-]{44}$/);

  const user = await call(svc, `/api/admin/users/${PUSH_DATA_USER}`);
  assert.is(user.status, 200);
  assert.ok(user.body.groups.includes(PUSH_DATA_GROUP), JSON.stringify(user.body.groups));
  const key = (user.body.apiKeys as { id: string; name: string; path: string; key?: string; hash?: string }[]).find((k) => k.id === issued.body.id)!;
  assert.ok(key, 'the key belongs to the service user');
  assert.is(key.name, 'REST API: Keyed API');
  assert.is(key.path, '=/api/push-data/keyed');
  assert.is(key.key, undefined, 'the key is shown once only');
  assert.is(key.hash, undefined);

  // Two keys for the same API both work.
  const second = await call(svc, '/api/admin/rest-apis/keyed/api-keys', { method: 'POST', body: {} });
  assert.is.not(second.body.key, issued.body.key);
  expectSuccess(await push(svc, 'keyed', issued.body.key, { title: 'one' }));
  expectSuccess(await push(svc, 'keyed', second.body.key, { title: 'two' }));
  const wrongPath = await svc.request('/api/push-data/keyed/extra', { admin: false, method: 'POST', body: '{}', headers: { Authorization: `Basic ${Buffer.from(`svc:${issued.body.key}`).toString('base64')}` } });
  assert.ok([403, 404].includes(wrongPath.status), `exact path: ${wrongPath.status}`);

  expectError(await call(svc, '/api/admin/rest-apis/never-defined/api-keys', { method: 'POST', body: {} }), 404, 'svc:rest-api:no-such-api');
});

// --------------------------------------------------------------------------------------------
// Model explorer and filters

test('GET /api/admin/models lists the configured and automatic models', async ({ svc }) => {
  const reply = await call(svc, '/api/admin/models');
  assert.is(reply.status, 200);
  const names = (reply.body.models as { name: string; title: string }[]).map((m) => m.name);
  for (const n of ['svc:person', 'svc:user-sync', 'TYPE:svc:type:person', 'TYPE:phd:type:project', 'TYPE:svc:type:organisation']) assert.ok(names.includes(n), n);
  const person = (reply.body.models as { name: string; title: string }[]).find((m) => m.name === 'svc:person')!;
  assert.is(person.title, 'People and associated information');
});

test('GET /api/admin/models/<model> describes destinations (depends, optional, pseudo) and names', async ({ svc }) => {
  const reply = await call(svc, '/api/admin/models/svc:person');
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const destinations = reply.body.destinations as any[];
  assert.equal(destinations.map((d) => d.name), [
    'profile', 'phd:project', 'load:by-ref', 'value:person-name', 'value:postal-address', 'phd:project:attribute-group:phd:attribute:funding',
  ]);
  const [profile, project, loadByRef, personName, address] = destinations;
  assert.is(profile.kind, 'object');
  assert.is(profile.dependsOn, undefined);
  assert.is(profile.optional, false);
  assert.is(profile.pseudo, false);
  assert.equal(profile.snippet, { destination: 'profile' });
  const title = profile.names.find((n: any) => n.name === 'dc:attribute:title');
  assert.equal({ type: title.type, multivalue: title.multivalue, required: title.required }, { type: 'person-name', multivalue: true, required: true });
  assert.is(profile.names.find((n: any) => n.name === 'dc:attribute:type').type, 'object-type');
  const department = profile.names.find((n: any) => n.name === 'svc:attribute:department');
  assert.is(department.type, 'ref');
  assert.equal(department.refTypes, ['svc:type:department']);
  assert.is(profile.names.find((n: any) => n.name === 'svc:attribute:address').type, 'postal-address');

  assert.is(project.dependsOn, 'profile');
  assert.is(project.optional, true);
  assert.is(project.names.find((n: any) => n.name === 'phd:attribute:researcher').type, 'ref');

  assert.is(loadByRef.pseudo, true);
  assert.equal(loadByRef.names.map((n: any) => [n.name, n.type]), [['ref', 'ref']]);
  assert.equal(personName.names.map((n: any) => n.name), ['title', 'first', 'middle', 'last', 'suffix']);
  assert.is(personName.names.find((n: any) => n.name === 'last').required, true);
  assert.is(address.names.find((n: any) => n.name === 'country').required, true);

  const sync = await call(svc, '/api/admin/models/svc:user-sync');
  const user = (sync.body.destinations as any[]).find((d) => d.name === 'user');
  assert.is(user.kind, 'dictionary');
  assert.equal(user.names.filter((n: any) => n.required).map((n: any) => n.name).sort(), ['email', 'nameFirst', 'nameLast', 'username']);
  assert.is(user.names.find((n: any) => n.name === 'groups').multivalue, true);
  const tags = (sync.body.destinations as any[]).find((d) => d.name === 'user:tags');
  assert.is(tags.dependsOn, 'user');
  assert.is(tags.optional, true);

  const auto = await call(svc, `/api/admin/models/${encodeURIComponent('TYPE:phd:type:project')}`);
  assert.is(auto.status, 200);
  assert.equal((auto.body.destinations as any[]).filter((d) => !d.pseudo).map((d) => d.name), ['object']);

  expectError(await call(svc, '/api/admin/models/svc:nope'), 404, 'svc:import:no-such-model');
});

test('GET /api/admin/filters lists every filter', async ({ svc }) => {
  const reply = await call(svc, '/api/admin/filters');
  assert.is(reply.status, 200);
  assert.equal((reply.body.filters as { name: string }[]).map((f) => f.name).sort(), [
    'svc:code-to-ref', 'svc:email-to-ref', 'svc:fix-up-url', 'svc:string-to-ref', 'svc:to-lower-case', 'svc:to-string', 'svc:to-upper-case', 'svc:username-to-ref',
  ]);
  for (const f of reply.body.filters as { description: string }[]) assert.type(f.description, 'string');
});

// --------------------------------------------------------------------------------------------
// Generator

const generate = (svc: TestService, body: unknown) => call(svc, '/api/admin/control-files/generate', { method: 'POST', body });

/** The docs' workflow: rename the TODO sources and add singleRecord. */
const finishGenerated = (generated: any) => ({
  ...generated,
  files: { DEFAULT: { read: 'json', singleRecord: true } },
  instructions: (generated.instructions as Record<string, unknown>[]).map((i) =>
    typeof i.source === 'string' && i.source.startsWith('TODO-') ? { ...i, source: i.source.slice(5).toLowerCase() } : i,
  ),
});

test('a generated svc:person control file, with TODO sources renamed and singleRecord, works as a real API', async ({ svc }) => {
  const reply = await generate(svc, {
    model: 'svc:person',
    include: [
      { destination: 'profile', name: 'svc:attribute:website' },
      { destination: 'profile', name: 'svc:attribute:name' },
      { destination: 'profile', name: 'svc:attribute:job-title', multivalue: true },
      { destination: 'phd:project', name: 'dc:attribute:title' },
      { destination: 'phd:project', name: 'phd:attribute:start-date' },
      { destination: 'phd:project', name: 'phd:attribute:exams-done' },
    ],
  });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const generated = reply.body.control;
  assert.is(generated.model, 'svc:person');
  assert.equal(generated.files, { DEFAULT: { read: 'json' } });
  const instructions = generated.instructions as Record<string, unknown>[];
  assert.equal(instructions.slice(0, 2), [
    { source: 'TODO-USERNAME', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
    { action: 'load', destination: 'profile', using: 'load:by-ref' },
  ]);
  assert.ok(instructions.some((i) => i.source === 'TODO-WEBSITE' && (i.filters as string[])?.[0] === 'svc:fix-up-url'));
  assert.ok(instructions.some((i) => i.source === 'TODO-START-DATE' && i.dateFormat === 'yyyy-MM-dd'));
  assert.ok(instructions.some((i) => i.action === 'field-structured' && i.structured === 'value:person-name' && i.name === 'svc:attribute:name'));
  const removeAt = instructions.findIndex((i) => i.action === 'remove-values' && i.name === 'svc:attribute:job-title');
  assert.ok(removeAt > 0);
  assert.equal(instructions[removeAt + 1], { source: 'TODO-JOB-TITLE', destination: 'profile', name: 'svc:attribute:job-title', multivalue: true });
  assert.not.ok(instructions.some((i) => i.action === 'new'), 'profile is loaded and phd:project is dependent: no new');

  const user = await createUser(svc, { username: 'generated', first: 'Gene', last: 'Rated' });
  const before = await call(svc, `/api/admin/objects/${user.ref}`, { method: 'PATCH', body: { attributes: { 'svc:attribute:job-title': ['Old job', 'Other old job'] } } });
  assert.is(before.status, 200, JSON.stringify(before.body));

  const api = await defineApi(svc, finishGenerated(generated));
  const pushed = expectSuccess(
    await api.push({ username: 'generated', website: 'www.example.org', 'name-first': 'Gene', 'name-last': 'Ratedd', 'job-title': 'Lecturer', title: 'Generated thesis', 'start-date': '2021-03-04', 'exams-done': '2' }),
  );
  const changed = pushed.actions[0]!.changed;
  assert.equal(changed.map((c) => [c.destination, c.new]), [['profile', false], ['phd:project', true]]);
  const profile = await adminObject(svc, user.ref);
  assert.equal(plain(profile, 'svc:attribute:website'), ['https://www.example.org']);
  assert.equal(attr(profile, 'svc:attribute:name')[0].value, { first: 'Gene', last: 'Ratedd', culture: 'western' });
  assert.equal(plain(profile, 'svc:attribute:job-title'), ['Lecturer']);
  const project = await adminObject(svc, changed[1]!.ref);
  assert.equal(plain(project, 'dc:attribute:title'), ['Generated thesis']);
  assert.equal(attr(project, 'phd:attribute:exams-done').map((v) => [v.type, v.value]), [['integer', '2']], 'the Object API shows numbers as text');
  assert.equal(plain(project, 'phd:attribute:researcher'), [user.ref]);
  assert.match(attr(project, 'phd:attribute:start-date')[0].start, /^2021-03-04T/);
});

test('a generated auto-model control file starts with new, and works once finished', async ({ svc }) => {
  const reply = await generate(svc, { model: 'TYPE:phd:type:project', include: [{ destination: 'object', name: 'dc:attribute:title' }, { destination: 'object', name: 'phd:attribute:progress' }] });
  assert.is(reply.status, 200);
  assert.equal(reply.body.control.instructions, [
    { action: 'new', destination: 'object' },
    { source: 'TODO-TITLE', destination: 'object', name: 'dc:attribute:title' },
    { source: 'TODO-PROGRESS', destination: 'object', name: 'phd:attribute:progress' },
  ]);
  const api = await defineApi(svc, finishGenerated(reply.body.control));
  const pushed = expectSuccess(await api.push({ title: 'Auto', progress: '0.5' }));
  const object = await adminObject(svc, pushed.actions[0]!.changed[0]!.ref);
  assert.is(object.type.code, 'phd:type:project');
  assert.equal(attr(object, 'phd:attribute:progress').map((v) => [v.type, v.value]), [['number', '0.5']]);
});

test('the generator refuses unknown models, destinations, names and pseudo destinations', async ({ svc }) => {
  expectError(await generate(svc, { model: 'svc:nope', include: [] }), 404, 'svc:import:no-such-model');
  expectError(await generate(svc, { model: 'svc:person', include: [{ destination: 'nowhere', name: 'x' }] }), 400, 'svc:import:bad-selection');
  expectError(await generate(svc, { model: 'svc:person', include: [{ destination: 'profile', name: 'svc:nope' }] }), 400, 'svc:import:bad-selection');
  expectError(await generate(svc, { model: 'svc:person', include: [{ destination: 'load:by-ref', name: 'ref' }] }), 400, 'svc:import:bad-selection');
  assert.is((await generate(svc, { model: 'svc:person' })).status, 400);
});

test.run();
