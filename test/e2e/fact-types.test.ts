import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { normalise } from '../../src/projections/reporting/facts.ts';
import { CollectionsError, parseCollections } from '../../src/app/load-collections.ts';
import { loadSchema } from '../../src/app/load-schema.ts';
import { configFile } from '../../src/config/paths.ts';
import { startTestService, type TestService } from '../support/service.ts';

const fixture = fileURLToPath(new URL('./fixtures/all-fact-types.json', import.meta.url));

const unit = suite('Fact types: JSON forms and comparison rules');

unit('each type has its JSON form; equal facts have equal JSON', () => {
  const dt = { type: 'datetime', start: '2024-03-12T10:30:00.000Z', end: '2024-03-12T10:31:00.000Z', precision: 'm', specifiedAsRange: false };
  const day = { type: 'datetime', start: '2024-03-12T00:00:00.000Z', end: '2024-03-14T00:00:00.000Z', precision: 'd', specifiedAsRange: true };
  const cases: [string, unknown, unknown][] = [
    ['ref', { type: 'link', ref: 'abcdefghjkmn' }, 'abcdefghjkmn'],
    ['refList', [{ type: 'link', ref: 'b' }, { type: 'link', ref: 'a' }], ['b', 'a']],
    ['labelList', ['z', 'a'], ['a', 'z']],
    ['text', { type: 'person-name', value: { first: 'Ada', last: 'Lovelace', culture: 'western' } }, 'Ada Lovelace'],
    ['text', 7, '7'],
    ['boolean', [], false],
    ['boolean', { type: 'text', value: 'x' }, true],
    ['smallint', { type: 'integer', value: 40000 }, null],
    ['smallint', { type: 'integer', value: -5 }, -5],
    ['int', 3.9, 3],
    ['int', 2147483648, null],
    ['bigint', 9007199254740991, 9007199254740991],
    ['float', { type: 'number', value: 0.5 }, 0.5],
    ['numeric', '12.50', 12.5],
    ['date', dt, '2024-03-12T00:00:00.000Z'],
    ['datetime', dt, '2024-03-12T10:30:00.000Z'],
    ['time', dt, '10:30:00'],
    ['end-date', day, '2024-03-13T00:00:00.000Z'],
    ['json', { type: 'json', value: { a: [1, 2] } }, { a: [1, 2] }],
    ['text', null, null],
    ['int', undefined, null],
  ];
  for (const [type, raw, expected] of cases) assert.equal(normalise(type as never, raw), expected, `${type} ${JSON.stringify(raw)}`);
});

unit('collection declarations are validated against the schema', () => {
  const schema = loadSchema(configFile('schema.json'));
  const bad = {
    collections: [
      { name: 'Bad-Name', description: '', categories: [], types: ['x:type:nope'], facts: [{ name: 'ref', type: 'text', description: '', source: { attribute: 'x:attribute:nope' } }] },
      { name: 'ok_one', description: '', categories: [], types: [], facts: [{ name: 'f', type: 'ref', description: '', source: { attribute: 'dc:attribute:title', linked: { title: true } } }, { name: 'g', type: 'int', description: '', source: { function: 'nope' } }] },
    ],
  };
  try {
    parseCollections(bad, schema);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, CollectionsError);
    const problems = (e as CollectionsError).problems.join('\n');
    for (const expected of ['collections[0].name', 'unknown type x:type:nope', 'duplicate fact ref', 'unknown attribute x:attribute:nope', 'dc:attribute:title is not a link attribute', 'unknown fact function nope']) {
      assert.match(problems, expected);
    }
  }
  assert.throws(() => parseCollections({ collections: [{ name: 'abc', facts: [{ type: 'nope' }] }] }, schema), (e: unknown) => e instanceof CollectionsError);
});

unit.run();

interface Ctx {
  svc: TestService;
}
const e2e = suite<Ctx>('Fact types end to end', {} as Ctx);
e2e.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_COLLECTIONS: fixture });
});
e2e.after(async (ctx) => {
  await ctx.svc?.stop();
});

e2e('a row holds every fact in its JSON form; objects lists every ref used', async (ctx) => {
  const post = async (body: unknown) => {
    const res = await ctx.svc.request('/api/admin/objects', { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
    assert.is(res.status, 201, await res.clone().text());
    return ((await res.json()) as { ref: string }).ref;
  };
  const faculty = await post({ type: 'svc:type:faculty', attributes: { 'dc:attribute:title': 'Science' } });
  const dept = await post({ type: 'svc:type:department', attributes: { 'dc:attribute:title': 'Physics', 'svc:attribute:parent': { type: 'link', ref: faculty } } });
  const [ada, bob, cy] = [await post({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Ada' } }), await post({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Bob' } }), await post({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'Cy' } })];
  const project = await post({
    type: 'phd:type:project-part-time',
    labels: ['svc:label:common', 'svc:label:archived'],
    attributes: {
      'dc:attribute:title': ['Main title', { type: 'text', value: 'Other title', qualifier: 'svc:qualifier:alternative' }],
      'phd:attribute:researcher': { type: 'link', ref: ada },
      'phd:attribute:supervisor': [{ type: 'link', ref: bob }, { type: 'link', ref: cy }],
      'svc:attribute:department': { type: 'link', ref: dept },
      'phd:attribute:funded': { type: 'configuration-name', value: 'ukri' },
      'phd:attribute:exams-done': { type: 'integer', value: 3 },
      'phd:attribute:progress': { type: 'number', value: 0.625 },
      'phd:attribute:start-date': { type: 'datetime', start: '2024-09-30T09:15:00Z', end: '2024-10-02T09:15:00Z', precision: 'm' },
      'phd:attribute:extra': { type: 'json', value: { grant: 'EP/X', years: [2024, 2025] } },
    },
  });
  await ctx.svc.request('/api/admin/groups', { method: 'POST', body: JSON.stringify({ code: 'svc:group:all', title: 'All', readAll: true }), headers: { 'Content-Type': 'application/json' } });
  await ctx.svc.request('/api/admin/users', { method: 'POST', body: JSON.stringify({ username: 'r', name: { last: 'R' }, groups: ['svc:group:all'] }), headers: { 'Content-Type': 'application/json' } });
  const { key } = (await (await ctx.svc.request('/api/admin/users/r/api-keys', { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } })).json()) as { key: string };
  const res = await ctx.svc.request('/api/reporting/v0/collection-data/every_fact', { admin: false, headers: { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` } });
  const body = (await res.json()) as { columns: string[]; rows: unknown[][]; objects: Record<string, { title: string; parent?: string }> };
  const row = Object.fromEntries(body.columns.map((c, i) => [c, body.rows[0]![i]]));
  assert.equal(body.columns.slice(0, 2), ['ref', 'objectTitle'], 'Haplo\'s first two columns');
  const schemaLabels = loadSchema(configFile('schema.json')).labels;
  assert.equal(row, {
    ref: project,
    objectTitle: 'Main title',
    researcher: ada,
    title: 'Main title',
    altTitle: 'Other title',
    funded: true,
    deleted: false,
    exams: 3,
    examsInt: 3,
    supervisorCount: 2,
    progress: 0.625,
    progressNumeric: 0.625,
    start: '2024-09-30T00:00:00.000Z',
    startsAt: '2024-09-30T09:15:00.000Z',
    startTime: '09:15:00',
    ends: '2024-10-02T00:00:00.000Z',
    extra: { grant: 'EP/X', years: [2024, 2025] },
    labels: [schemaLabels.get('svc:label:archived')!.ref, schemaLabels.get('svc:label:common')!.ref].sort(),
    supervisors: [bob, cy],
    objectType: 'phd:type:project-part-time',
    faculty,
    facultyName: 'Physics',
    constant: 42,
    percent: 63,
  });
  assert.equal(body.objects[dept], undefined, 'a ref read only through a link is not a fact value');
  assert.equal(body.objects[faculty], { title: 'Science' });
  assert.equal(body.objects[bob], { title: 'Bob' });
  assert.equal(body.objects[schemaLabels.get('svc:label:common')!.ref], { title: 'Common' });
});

e2e.run();
