/**
 * Every value type of the default schema round-trips: POST /api/admin/objects, then
 * GET /api/v0-object/ref/<ref>?sources=NONE gives the serialised shapes of haplo-behaviour.md §5.4.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { createObject, createReader, createUser, expectError, patchObject, postObject, readObject, REF, type Reader } from '../support/fixtures.ts';

const BASE = 'https://svc.example.org';

interface Ctx {
  svc: TestService;
  reader: Reader;
  person: string;
}
const test = suite<Ctx>('value types', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: BASE });
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.person = (await createUser(ctx.svc, { first: 'Grace', last: 'Hopper' })).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const TITLE = 'dc:attribute:title';

/** Creates an object with one attribute and returns that attribute's serialised values. */
const roundTrip = async ({ svc, reader }: Ctx, type: string, code: string, input: unknown): Promise<any[]> => {
  const { ref } = await createObject(svc, type, { [TITLE]: `${code} round trip`, [code]: input });
  const object = await readObject(reader, ref, 'NONE');
  const values = object.attributes[code];
  assert.ok(Array.isArray(values), `${code} is serialised: ${JSON.stringify(object.attributes)}`);
  return values;
};

test('text: a bare string and {type: text, value} both give {type, value}', async (ctx) => {
  assert.equal(await roundTrip(ctx, 'svc:type:person', 'svc:attribute:job-title', ['Professor', { type: 'text', value: 'Dean' }]), [
    { type: 'text', value: 'Professor' },
    { type: 'text', value: 'Dean' },
  ]);
});

test('text-paragraph and text-multiline keep their text exactly', async (ctx) => {
  assert.equal(await roundTrip(ctx, 'svc:type:person', 'svc:attribute:biography', { type: 'text-paragraph', value: 'Born 1906. Wrote compilers.' }), [
    { type: 'text-paragraph', value: 'Born 1906. Wrote compilers.' },
  ]);
  assert.equal(await roundTrip(ctx, 'phd:type:project', 'phd:attribute:notes', { type: 'text-multiline', value: 'line 1\nline 2\n  indented' }), [
    { type: 'text-multiline', value: 'line 1\nline 2\n  indented' },
  ]);
});

test('email-address, url, isbn (10 and 13), uuid, postcode, configuration-name: {type, value}', async (ctx) => {
  const cases: [string, string, string, string][] = [
    ['svc:type:person', 'svc:attribute:email', 'email-address', 'grace@example.org'],
    ['svc:type:person', 'svc:attribute:website', 'url', 'https://example.org/grace?x=1'],
    ['phd:type:project', 'phd:attribute:isbn', 'isbn', '978-3-16-148410-0'],
    ['phd:type:project', 'phd:attribute:isbn', 'isbn', '0-306-40615-2'],
    ['phd:type:project', 'phd:attribute:uuid', 'uuid', '123e4567-e89b-12d3-a456-426614174000'],
    ['phd:type:project', 'phd:attribute:postcode', 'postcode', 'OX1 2JD'],
    ['phd:type:project', 'phd:attribute:funded', 'configuration-name', 'phd:funding:epsrc'],
  ];
  for (const [type, code, valueType, value] of cases) {
    assert.equal(await roundTrip(ctx, type, code, { type: valueType, value }), [{ type: valueType, value }], `${valueType} ${value}`);
  }
});

test('integer and number round-trip their values', async (ctx) => {
  const ints = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:exams-done', [{ type: 'integer', value: 3 }, { type: 'integer', value: -7 }]);
  assert.equal(ints.map((v) => [v.type, Number(v.value)]), [['integer', 3], ['integer', -7]]);
  const nums = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:progress', { type: 'number', value: 0.25 });
  assert.equal(nums.map((v) => [v.type, Number(v.value)]), [['number', 0.25]]);
});

test('integer and number values are serialised in their string form (haplo-behaviour.md §5.4)', async (ctx) => {
  const ints = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:exams-done', { type: 'integer', value: 3 });
  assert.equal(ints, [{ type: 'integer', value: '3' }], '§5.4: "everything else: value, the string form ... integer, number"');
  const nums = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:progress', { type: 'number', value: 0.25 });
  assert.equal(nums, [{ type: 'number', value: '0.25' }]);
});

test('integer and number accept their serialised string form as input', async ({ svc }) => {
  const reply = await postObject(svc, {
    type: 'phd:type:project',
    attributes: { [TITLE]: 'Strings', 'phd:attribute:exams-done': { type: 'integer', value: '3' }, 'phd:attribute:progress': { type: 'number', value: '0.25' } },
  });
  assert.is(reply.status, 201, `requests use the serialised value shapes: ${JSON.stringify(reply.body)}`);
});

test('datetime: start, end, specifiedAsRange, precision, readable for each precision', async (ctx) => {
  const values = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:start-date', [
    { type: 'datetime', start: '2024-03-12' },
    { type: 'datetime', start: '2024-03-12T10:30:00Z' },
    { type: 'datetime', start: '2024-03-12T10:30:00Z', precision: 'h' },
    { type: 'datetime', start: '2024-03-12', precision: 'M' },
    { type: 'datetime', start: '2024-06-01', precision: 'Y' },
    { type: 'datetime', start: '2024-06-01', precision: 'D' },
    { type: 'datetime', start: '1999-05-01', precision: 'C' },
  ]);
  const dt = (start: string, end: string, precision: string, readable: string) => ({ type: 'datetime', start, end, specifiedAsRange: false, precision, readable });
  assert.equal(values, [
    dt('2024-03-12T00:00:00.000Z', '2024-03-13T00:00:00.000Z', 'd', '12 Mar 2024'),
    dt('2024-03-12T10:30:00.000Z', '2024-03-12T10:31:00.000Z', 'm', '12 Mar 2024, 10:30'),
    dt('2024-03-12T10:00:00.000Z', '2024-03-12T11:00:00.000Z', 'h', '12 Mar 2024, 10:00'),
    dt('2024-03-01T00:00:00.000Z', '2024-04-01T00:00:00.000Z', 'M', 'Mar 2024'),
    dt('2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 'Y', '2024'),
    dt('2020-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z', 'D', '2020s'),
    dt('1900-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z', 'C', '20th century'),
  ]);
  for (const v of values) assert.equal(Object.keys(v), ['type', 'start', 'end', 'specifiedAsRange', 'precision', 'readable']);
});

test('datetime: a range and a timezone', async (ctx) => {
  const values = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:start-date', [
    { type: 'datetime', start: '2024-01-01', end: '2024-12-31' },
    { type: 'datetime', start: '2024-03-12T10:30:00Z', timezone: 'Europe/London' },
  ]);
  assert.equal(values[0], {
    type: 'datetime',
    start: '2024-01-01T00:00:00.000Z',
    end: '2025-01-01T00:00:00.000Z',
    specifiedAsRange: true,
    precision: 'd',
    readable: '1 Jan 2024 to 31 Dec 2024',
  });
  assert.equal(values[1], {
    type: 'datetime',
    start: '2024-03-12T10:30:00.000Z',
    end: '2024-03-12T10:31:00.000Z',
    specifiedAsRange: false,
    precision: 'm',
    timezone: 'Europe/London',
    readable: '12 Mar 2024, 10:30',
  });
});

test('datetime: saving back the serialised shape as read changes nothing (end and specifiedAsRange kept)', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', {
    [TITLE]: 'Dates read back',
    'phd:attribute:start-date': [{ type: 'datetime', start: '2024-03-12' }, { type: 'datetime', start: '2024-01-01', end: '2024-12-31' }],
  });
  const read = await readObject(reader, ref);
  const reply = await patchObject(svc, ref, { attributes: { 'phd:attribute:start-date': read.attributes['phd:attribute:start-date'] } });
  const after = await readObject(reader, ref);
  assert.equal(after.attributes['phd:attribute:start-date'], read.attributes['phd:attribute:start-date'], 'the datetimes are what they were');
  assert.equal(reply.body, { ref, recordVersion: 1, changed: false });
});

test('link: {type, ref, title}; the type link adds code; a linked object with a behaviour adds behaviour', async (ctx) => {
  const { svc, reader, person } = ctx;
  const researcher = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:researcher', { type: 'link', ref: person });
  assert.equal(researcher, [{ type: 'link', ref: person, title: 'Grace Hopper' }]);
  assert.equal(Object.keys(researcher[0]), ['type', 'ref', 'title']);

  const faculty = await createObject(svc, 'svc:type:faculty', {
    [TITLE]: 'Faculty of Engineering',
    'svc:attribute:configured-behaviour': { type: 'configuration-name', value: 'svc:faculty:engineering' },
  });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Computing', 'svc:attribute:parent': { type: 'link', ref: faculty.ref } });
  const object = await readObject(reader, dept.ref);
  assert.equal(object.attributes['svc:attribute:parent'], [{ type: 'link', ref: faculty.ref, behaviour: 'svc:faculty:engineering', title: 'Faculty of Engineering' }]);
  const type = object.attributes['dc:attribute:type'];
  assert.is(type.length, 1);
  assert.equal(Object.keys(type[0]), ['type', 'ref', 'code', 'title']);
  assert.is(type[0].type, 'link');
  assert.match(type[0].ref, REF);
  assert.is(type[0].code, 'svc:type:department');
  assert.is(type[0].title, 'Department');
});

test('link: the title follows the linked object when it is renamed (read-your-writes)', async ({ svc, reader }) => {
  const target = await createObject(svc, 'svc:type:person', { [TITLE]: 'Before Rename' });
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Linker', 'phd:attribute:supervisor': { type: 'link', ref: target.ref } });
  await patchObject(svc, target.ref, { attributes: { [TITLE]: 'After Rename' } });
  const object = await readObject(reader, ref);
  assert.equal(object.attributes['phd:attribute:supervisor'], [{ type: 'link', ref: target.ref, title: 'After Rename' }]);
});

test('person-name: value fields (culture defaults to western) and readable', async (ctx) => {
  const values = await roundTrip(ctx, 'svc:type:person', 'svc:attribute:name', [
    { type: 'person-name', value: { title: 'Dr', first: 'Grace', middle: 'Brewster', last: 'Hopper', suffix: 'PhD' } },
    { type: 'person-name', value: { first: 'Grace', last: 'Hopper', culture: 'western_list' } },
    { type: 'person-name', value: { first: 'Taro', last: 'Yamada', culture: 'eastern' } },
  ]);
  assert.equal(values, [
    { type: 'person-name', value: { title: 'Dr', first: 'Grace', middle: 'Brewster', last: 'Hopper', suffix: 'PhD', culture: 'western' }, readable: 'Dr Grace Brewster Hopper PhD' },
    { type: 'person-name', value: { first: 'Grace', last: 'Hopper', culture: 'western_list' }, readable: 'Hopper, Grace' },
    { type: 'person-name', value: { first: 'Taro', last: 'Yamada', culture: 'eastern' }, readable: 'Yamada Taro' },
  ]);
});

test('telephone-number: value {country, number (E.164), extension?} and an international readable form', async (ctx) => {
  const values = await roundTrip(ctx, 'svc:type:person', 'svc:attribute:telephone', [
    { type: 'telephone-number', value: '+44 20 7946 0958' },
    { type: 'telephone-number', value: '020 7946 0958' },
    { type: 'telephone-number', value: { number: '020 7946 0958', country: 'GB', extension: '123' } },
    { type: 'telephone-number', value: { number: '(202) 456-1111', country: 'US' } },
  ]);
  assert.equal(values, [
    { type: 'telephone-number', value: { country: 'GB', number: '+442079460958' }, readable: '+44 20 7946 0958' },
    { type: 'telephone-number', value: { country: 'GB', number: '+442079460958' }, readable: '+44 20 7946 0958' },
    { type: 'telephone-number', value: { country: 'GB', number: '+442079460958', extension: '123' }, readable: '+44 20 7946 0958 ext. 123' },
    { type: 'telephone-number', value: { country: 'US', number: '+12024561111' }, readable: '+1 202 456 1111' },
  ]);
});

test('postal-address: value fields (country upper-cased) and readable lines', async (ctx) => {
  const values = await roundTrip(ctx, 'svc:type:person', 'svc:attribute:address', {
    type: 'postal-address',
    value: { street1: '1 High Street', street2: 'Flat 2', city: 'Oxford', county: 'Oxfordshire', postcode: 'OX1 1AA', country: 'gb' },
  });
  assert.equal(values, [
    {
      type: 'postal-address',
      value: { street1: '1 High Street', street2: 'Flat 2', city: 'Oxford', county: 'Oxfordshire', postcode: 'OX1 1AA', country: 'GB' },
      readable: '1 High Street\nFlat 2\nOxford\nOxfordshire\nOX1 1AA\nGB',
    },
  ]);
});

test('json: the value comes back as the same JSON', async (ctx) => {
  const value = { a: [1, 2, { b: null }], s: 'x', n: 1.5, t: true };
  assert.equal(await roundTrip(ctx, 'phd:type:project', 'phd:attribute:extra', [{ type: 'json', value }, { type: 'json', value: [1, 'two'] }]), [
    { type: 'json', value },
    { type: 'json', value: [1, 'two'] },
  ]);
});

test('file: digest, fileSize, mimeType, filename and an absolute url', async (ctx) => {
  const digest = 'ab'.repeat(32);
  const values = await roundTrip(ctx, 'phd:type:project', 'phd:attribute:thesis-file', {
    type: 'file',
    digest,
    fileSize: 123456,
    mimeType: 'application/pdf',
    filename: 'thesis final.pdf',
  });
  assert.is(values.length, 1);
  const v = values[0];
  assert.equal(Object.keys(v), ['type', 'digest', 'fileSize', 'mimeType', 'filename', 'url']);
  assert.equal({ ...v, url: undefined }, { type: 'file', digest, fileSize: 123456, mimeType: 'application/pdf', filename: 'thesis final.pdf', url: undefined });
  assert.ok(v.url.startsWith(`${BASE}/`), v.url);
  assert.match(v.url, digest);
});

test('a qualified value carries qualifier right after type', async (ctx) => {
  const values = await roundTrip(ctx, 'svc:type:person', 'svc:attribute:telephone', [
    { type: 'telephone-number', value: '+44 20 7946 0958', qualifier: 'svc:qualifier:work' },
    { type: 'telephone-number', value: '+44 1865 270000', qualifier: 'svc:qualifier:home' },
  ]);
  assert.equal(values.map((v) => v.qualifier), ['svc:qualifier:work', 'svc:qualifier:home']);
  for (const v of values) assert.equal(Object.keys(v), ['type', 'qualifier', 'value', 'readable']);
});

test('every other value type: saving back the serialised attributes as read is a no-op (changed: false)', async ({ svc, reader, person }) => {
  const { ref } = await createObject(svc, 'svc:type:person', {
    [TITLE]: 'Round Trip Person',
    'svc:attribute:name': { type: 'person-name', value: { first: 'Round', last: 'Trip' } },
    'svc:attribute:email': { type: 'email-address', value: 'rt@example.org' },
    'svc:attribute:telephone': [{ type: 'telephone-number', value: '+44 20 7946 0958' }, { type: 'telephone-number', value: { number: '020 7946 0958', extension: '9' } }],
    'svc:attribute:address': { type: 'postal-address', value: { street1: '1 Road', city: 'Town', country: 'GB' } },
    'svc:attribute:website': { type: 'url', value: 'https://example.org' },
    'svc:attribute:biography': { type: 'text-paragraph', value: 'Bio' },
  });
  const project = await createObject(svc, 'phd:type:project', {
    [TITLE]: 'Round Trip Project',
    'phd:attribute:researcher': { type: 'link', ref: person },
    'phd:attribute:funded': { type: 'configuration-name', value: 'phd:funding:x' },
    'phd:attribute:exams-done': { type: 'integer', value: 2 },
    'phd:attribute:progress': { type: 'number', value: 0.5 },
    'phd:attribute:notes': { type: 'text-multiline', value: 'a\nb' },
    'phd:attribute:isbn': { type: 'isbn', value: '978-3-16-148410-0' },
    'phd:attribute:uuid': { type: 'uuid', value: '123e4567-e89b-12d3-a456-426614174000' },
    'phd:attribute:postcode': { type: 'postcode', value: 'OX1 2JD' },
    'phd:attribute:extra': { type: 'json', value: { k: [1] } },
    'phd:attribute:thesis-file': { type: 'file', digest: 'cd'.repeat(32), fileSize: 1, mimeType: 'text/plain', filename: 'a.txt' },
  });
  for (const r of [ref, project.ref]) {
    const read = await readObject(reader, r);
    const reply = await patchObject(svc, r, { attributes: read.attributes });
    assert.equal(reply.body, { ref: r, recordVersion: 1, changed: false }, `saving ${read.type.code} back as read`);
  }
});

// ---------------------------------------------------------------------------------------------
// Invalid values: 400 svc:object:bad-value naming attributes.<code>[i]
// ---------------------------------------------------------------------------------------------

test('invalid values of each type are refused with 400 naming the value', async ({ svc }) => {
  const cases: [string, string, unknown, RegExp?][] = [
    ['svc:type:person', 'svc:attribute:telephone', { type: 'telephone-number', value: 'not a number' }, /telephone/],
    ['svc:type:person', 'svc:attribute:telephone', { type: 'telephone-number', value: { country: 'GB' } }],
    ['svc:type:person', 'svc:attribute:name', { type: 'person-name', value: { middle: 'only' } }, /first or last/],
    ['svc:type:person', 'svc:attribute:name', { type: 'person-name', value: { first: 'A', culture: 'martian' } }, /culture/],
    ['svc:type:person', 'svc:attribute:name', { type: 'person-name', value: 'Grace Hopper' }],
    ['svc:type:person', 'svc:attribute:address', { type: 'postal-address', value: { city: 'Oxford' } }, /country/],
    ['svc:type:person', 'svc:attribute:address', { type: 'postal-address', value: { city: 'Oxford', country: 'England' } }, /country/],
    ['phd:type:project', 'phd:attribute:start-date', { type: 'datetime', start: '12/03/2024' }, /start/],
    ['phd:type:project', 'phd:attribute:start-date', { type: 'datetime', start: '2024-03-12', precision: 'X' }, /precision/],
    ['phd:type:project', 'phd:attribute:start-date', { type: 'datetime', start: '2024-03-12', end: '2024-03-01' }, /end/],
    ['phd:type:project', 'phd:attribute:exams-done', { type: 'integer', value: 1.5 }, /integer/],
    ['phd:type:project', 'phd:attribute:progress', { type: 'number', value: 'lots' }, /number/],
    ['phd:type:project', 'phd:attribute:extra', { type: 'json' }, /value/],
    ['phd:type:project', 'phd:attribute:funded', { type: 'configuration-name', value: 'has spaces' }, /configuration name/],
    ['phd:type:project', 'phd:attribute:postcode', { type: 'postcode', value: '' }, /postcode/],
    ['phd:type:project', 'phd:attribute:thesis-file', { type: 'file', digest: 'xyz', fileSize: 1, mimeType: 'text/plain', filename: 'a' }, /digest/],
    ['phd:type:project', 'phd:attribute:thesis-file', { type: 'file', digest: 'ab'.repeat(32), fileSize: -1, mimeType: 'text/plain', filename: 'a' }, /fileSize/],
    ['phd:type:project', 'phd:attribute:thesis-file', { type: 'file', digest: 'ab'.repeat(32), fileSize: 1 }, /mimeType/],
    ['phd:type:project', 'phd:attribute:researcher', { type: 'link' }, /ref/],
    ['phd:type:project', 'phd:attribute:notes', { type: 'text', value: 'typed as text' }, /text-multiline/],
    ['phd:type:project', 'phd:attribute:notes', 42],
  ];
  for (const [type, code, value, message] of cases) {
    const reply = await postObject(svc, { type, attributes: { [code]: [value] } });
    assert.is(reply.status, 400, `${code} ${JSON.stringify(value)} must be refused: ${JSON.stringify(reply.body)}`);
    const e = expectError(reply, 400, 'svc:object:bad-value');
    assert.match(e.message, `attributes.${code}[0]`, JSON.stringify(value));
    if (message) assert.match(e.message, message, `${JSON.stringify(value)}: ${e.message}`);
  }
});

test('datetime: a calendar date that does not exist (30 Feb, 31 Apr) is refused, not rolled over', async ({ svc, reader }) => {
  for (const value of [
    { type: 'datetime', start: '2024-02-30' },
    { type: 'datetime', start: '2023-04-31T10:00:00Z' },
    { type: 'datetime', start: '2024-03-12', end: '2024-02-31' },
  ]) {
    const reply = await postObject(svc, { type: 'phd:type:project', attributes: { [TITLE]: 'Bad date', 'phd:attribute:start-date': value } });
    if (reply.status === 201) {
      const stored = (await readObject(reader, reply.body.ref)).attributes['phd:attribute:start-date'];
      assert.unreachable(`${JSON.stringify(value)} was accepted and stored as ${JSON.stringify(stored)}`);
    }
    const e = expectError(reply, 400, 'svc:object:bad-value');
    assert.match(e.message, 'attributes.phd:attribute:start-date[0]');
  }
});

test.run();
