import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { convertConstant, makeConverter, MAX_TITLE_MAPPING_OBJECTS, sourceDetails, type ConvertContext, type ValueConverter } from '../../../src/commands/push-data/convert.ts';
import { RefValue, type ImportLookups, type Instruction, type RefMapping } from '../../../src/domain/control-file.ts';
import { makeFilterInstances } from '../../../src/commands/push-data/filters.ts';
import type { NameDef } from '../../../src/domain/model.ts';
import { newRef } from '../../../src/commands/new-ref.ts';
import { parseSchema } from '../../../src/app/load-schema.ts';

// ---------------------------------------------------------------------------------------------
// Test doubles

const schema = parseSchema(
  {
    types: [
      { code: 'x:type:book', name: 'Book', attributes: ['dc:attribute:title', 'dc:attribute:type'] },
      { code: 'x:type:novel', name: 'Novel', parent: 'x:type:book', attributes: [] },
      { code: 'x:type:person', name: 'Person', attributes: ['dc:attribute:title'] },
    ],
    attributes: [
      { code: 'dc:attribute:title', name: 'Title', dataType: 'text' },
      { code: 'dc:attribute:type', name: 'Type', dataType: 'link' },
    ],
    qualifiers: [],
    labels: [],
  },
  'test',
);

interface FakeObject {
  readonly ref: string;
  readonly type: string;
  readonly titles: readonly string[];
}

/** In-memory ImportLookups, counting calls so caching can be checked. */
const fakeLookups = (data: { behaviours?: Record<string, string>; objects?: readonly FakeObject[] } = {}) => {
  const calls = { refByBehaviour: 0, titlesOfTypes: 0 };
  const lookups: ImportLookups = {
    profileRefByUsername: async () => undefined,
    profileRefByEmail: async () => undefined,
    refByBehaviour: async (code) => {
      calls.refByBehaviour++;
      return data.behaviours?.[code];
    },
    titlesOfTypes: async (types, limit) => {
      calls.titlesOfTypes++;
      const found = (data.objects ?? []).filter((o) => types.some((t) => schema.isKindOf(o.type, t)));
      return found.length > limit ? 'too-many' : found.map(({ ref, titles }) => ({ ref, titles }));
    },
  };
  return { lookups, calls };
};

const testFilters = {
  'test:order-1': (v: unknown) => `${String(v)}-1`,
  'test:order-2': async (v: unknown) => `${String(v).toUpperCase()}-2`,
  'test:undefined': () => undefined,
  'test:twice': (v: unknown) => `${String(v)}${String(v)}`,
};

const context = (opts: { lookups?: ImportLookups; mappings?: Record<string, RefMapping> } = {}) => {
  const errors: string[] = [];
  const lookups = opts.lookups ?? fakeLookups().lookups;
  const ctx: ConvertContext = {
    schema,
    lookups,
    mappings: opts.mappings,
    filters: new Map([...makeFilterInstances(lookups), ...Object.entries(testFilters)]),
    error: (m) => errors.push(m),
    cache: new Map(),
  };
  return { ctx, errors };
};

const nameOf = (type: string): NameDef => ({ name: 'n', type, description: 'N', multivalue: false, required: false });
const field = (more: Partial<Instruction> = {}): Instruction => ({ source: 'in', destination: 'd', name: 'n', ...more });

const build = (type: string, more: Partial<Instruction> = {}, ctx = context()) => {
  const c = makeConverter(field(more), nameOf(type), ctx.ctx);
  if (typeof c !== 'function') throw new Error(`unexpected build error: ${c.error}`);
  return { convert: c as ValueConverter, errors: ctx.errors };
};

// ---------------------------------------------------------------------------------------------
// Every type: [description, Name type, extra instruction properties, input, expected, errors]

const REF = newRef();
const refValue = new RefValue(REF);
const S = 'input field in';

type Case = readonly [string, string, Partial<Instruction>, unknown, unknown, readonly string[]];

const CASES: readonly Case[] = [
  // text (and Names without a type)
  ['text: string', 'text', {}, 'xyz', 'xyz', []],
  ['text: number stringified', 'text', {}, 42, '42', []],
  ['text: zero', 'text', {}, 0, '0', []],
  ['text: boolean stringified', 'text', {}, true, 'true', []],
  ['text: object dropped silently', 'text', {}, { a: 1 }, undefined, []],
  ['text: array dropped silently', 'text', {}, ['a'], undefined, []],
  ['text: ref dropped silently', 'text', {}, refValue, undefined, []],
  ['no type is text', '', {}, 7, '7', []],
  // typed text
  ['text-paragraph: string', 'text-paragraph', {}, 'ABC\nDEF', 'ABC\nDEF', []],
  ['text-paragraph: array joined by blank lines', 'text-paragraph', {}, ['P1', 'P2'], 'P1\n\nP2', []],
  ['text-paragraph: number', 'text-paragraph', {}, 12, '12', []],
  ['text-paragraph: object dropped', 'text-paragraph', {}, { a: 1 }, undefined, []],
  ['text-multiline: string', 'text-multiline', {}, 'XYZ\nPQR', 'XYZ\nPQR', []],
  ['text-multiline: array joined by newlines', 'text-multiline', {}, ['L1', 'L2'], 'L1\nL2', []],
  ['configuration-name', 'configuration-name', {}, 'test:name:something', 'test:name:something', []],
  ['configuration-name: array dropped', 'configuration-name', {}, ['a', 'b'], undefined, []],
  ['isbn: string', 'isbn', {}, '978-0-306-40615-7', '978-0-306-40615-7', []],
  ['isbn: number stringified', 'isbn', {}, 9780306406157, '9780306406157', []],
  // identifiers
  ['email-address: valid', 'email-address', {}, 'a@example.org', 'a@example.org', []],
  ['email-address: @ first', 'email-address', {}, '@example.org', undefined, [`Invalid email address for ${S}: @example.org`]],
  ['email-address: no @', 'email-address', {}, 'nobody', undefined, [`Invalid email address for ${S}: nobody`]],
  ['email-address: non-string ignored', 'email-address', {}, 12, undefined, []],
  ['url: valid', 'url', {}, 'https://example.org', 'https://example.org', []],
  ['url: any scheme', 'url', {}, 'mailto:a@example.org', 'mailto:a@example.org', []],
  ['url: no scheme', 'url', {}, 'www.example.org', undefined, [`Invalid URL for ${S}: www.example.org`]],
  ['url: non-string ignored', 'url', {}, 3, undefined, []],
  ['uuid: valid, normalised', 'uuid', {}, ' 123E4567-E89B-12D3-A456-426614174000 ', '123e4567-e89b-12d3-a456-426614174000', []],
  ['uuid: invalid', 'uuid', {}, '123e4567', undefined, [`Invalid UUID for ${S}: 123e4567`]],
  ['uuid: non-string ignored', 'uuid', {}, { a: 1 }, undefined, []],
  ['postcode: string', 'postcode', {}, ' CB1 1AA ', 'CB1 1AA', []],
  ['postcode: number', 'postcode', {}, 12345, '12345', []],
  ['postcode: blank dropped', 'postcode', {}, '  ', undefined, []],
  // boolean
  ['boolean: true', 'boolean', {}, true, true, []],
  ['boolean: false', 'boolean', {}, false, false, []],
  ['boolean: "true"', 'boolean', {}, 'true', true, []],
  ['boolean: "false"', 'boolean', {}, 'false', false, []],
  ['boolean: other string', 'boolean', {}, 'yes', undefined, [`Invalid boolean value for ${S}: yes`]],
  ['boolean: number', 'boolean', {}, 1, undefined, [`Invalid boolean value for ${S}: 1`]],
  ['boolean: trueValue', 'boolean', { trueValue: 'Y', falseValue: 'N' }, 'Y', true, []],
  ['boolean: falseValue', 'boolean', { trueValue: 'Y', falseValue: 'N' }, 'N', false, []],
  ['boolean: default words no longer accepted', 'boolean', { trueValue: 'Y', falseValue: 'N' }, 'true', undefined, [`Invalid boolean value for ${S}: true`]],
  // integer
  ['integer: number', 'integer', {}, 42, 42, []],
  ['integer: zero', 'integer', {}, 0, 0, []],
  ['integer: string', 'integer', {}, '-17', -17, []],
  ['integer: fraction', 'integer', {}, 1.5, undefined, [`Invalid integer for ${S}: 1.5`]],
  ['integer: string fraction', 'integer', {}, '1.5', undefined, [`Invalid integer for ${S}: 1.5`]],
  ['integer: leading zero does not round-trip', 'integer', {}, '007', undefined, [`Invalid integer for ${S}: 007`]],
  ['integer: trailing text', 'integer', {}, '12abc', undefined, [`Invalid integer for ${S}: 12abc`]],
  ['integer: not a number', 'integer', {}, 'abc', undefined, [`Invalid integer for ${S}: abc`]],
  ['integer: boolean', 'integer', {}, true, undefined, [`Invalid integer for ${S}: true`]],
  // number
  ['number: number', 'number', {}, 1.25, 1.25, []],
  ['number: string', 'number', {}, '3.5', 3.5, []],
  ['number: parseFloat prefix', 'number', {}, '3.5kg', 3.5, []],
  ['number: exponent', 'number', {}, '1e3', 1000, []],
  ['number: not a number', 'number', {}, 'abc', undefined, [`Invalid number for ${S}: abc`]],
  ['number: infinite', 'number', {}, 'Infinity', undefined, [`Invalid number for ${S}: Infinity`]],
  // datetime
  ['datetime: date', 'datetime', { dateFormat: 'yyyy-MM-dd' }, '2018-02-10',
    { type: 'datetime', start: '2018-02-10T00:00:00.000Z', end: '2018-02-11T00:00:00.000Z', precision: 'd', specifiedAsRange: false }, []],
  ['datetime: date at the end of a month', 'datetime', { dateFormat: 'dd/MM/yyyy' }, '28/02/2019',
    { type: 'datetime', start: '2019-02-28T00:00:00.000Z', end: '2019-03-01T00:00:00.000Z', precision: 'd', specifiedAsRange: false }, []],
  ['datetime: date and time (UTC)', 'datetime', { dateFormat: "yyyy-MM-dd'T'HH:mm" }, '2018-02-10T14:05',
    { type: 'datetime', start: '2018-02-10T14:05:00.000Z', end: '2018-02-10T14:06:00.000Z', precision: 'm', specifiedAsRange: false }, []],
  ['datetime: seconds truncated to the minute', 'datetime', { dateFormat: 'yyyy-MM-dd HH:mm:ss' }, '2018-02-10 14:05:59',
    { type: 'datetime', start: '2018-02-10T14:05:00.000Z', end: '2018-02-10T14:06:00.000Z', precision: 'm', specifiedAsRange: false }, []],
  ['datetime: zone', 'datetime', { dateFormat: 'yyyy-MM-dd HH:mmXXX' }, '2018-07-10 14:05+01:00',
    { type: 'datetime', start: '2018-07-10T13:05:00.000Z', end: '2018-07-10T13:06:00.000Z', precision: 'm', specifiedAsRange: false }, []],
  ['datetime: invalid value', 'datetime', { dateFormat: 'yyyy-MM-dd' }, '2018-02-30', undefined, [`Invalid date value for ${S}: 2018-02-30`]],
  ['datetime: wrong shape', 'datetime', { dateFormat: 'yyyy-MM-dd' }, '10/02/2018', undefined, [`Invalid date value for ${S}: 10/02/2018`]],
  ['datetime: non-string ignored', 'datetime', { dateFormat: 'yyyy-MM-dd' }, 20180210, undefined, []],
  // ref without mapping
  ['ref: Ref value', 'ref', {}, refValue, refValue, []],
  ['ref: string dropped silently', 'ref', {}, REF, undefined, []],
  // object-type
  ['object-type: known type', 'object-type', {}, 'x:type:novel', new RefValue(schema.types.get('x:type:novel')!.ref), []],
  ['object-type: unknown type dropped silently', 'object-type', {}, "doesn't exist", undefined, []],
  ['object-type: non-string dropped silently', 'object-type', {}, 3, undefined, []],
  // json
  ['json: object', 'json', {}, { a: [1] }, { a: [1] }, []],
  ['json: array', 'json', {}, [1, 2], [1, 2], []],
  ['json: string dropped', 'json', {}, '{"a":1}', undefined, []],
  ['json: number dropped', 'json', {}, 1, undefined, []],
  // telephone-number
  ['telephone-number: GB by default', 'telephone-number', {}, '01223 123456',
    { type: 'telephone-number', value: { country: 'GB', number: '+441223123456' } }, []],
  ['telephone-number: country', 'telephone-number', { country: 'US' }, '823 124 125',
    { type: 'telephone-number', value: { country: 'US', number: '+1823124125' } }, []],
  ['telephone-number: international', 'telephone-number', { country: 'US' }, '+44 1223 123456',
    { type: 'telephone-number', value: { country: 'GB', number: '+441223123456' } }, []],
  ['telephone-number: invalid', 'telephone-number', {}, 'call me', undefined, [`Invalid telephone number for ${S}: call me`]],
  ['telephone-number: non-string ignored', 'telephone-number', {}, 1223123456, undefined, []],
  // person-name
  ['person-name: parts', 'person-name', {}, { title: 'Dr', first: 'Ada', last: 'Lovelace', other: 'x' },
    { type: 'person-name', value: { title: 'Dr', first: 'Ada', last: 'Lovelace', culture: 'western' } }, []],
  ['person-name: no last', 'person-name', {}, { first: 'Ada' }, undefined, []],
  ['person-name: not an object', 'person-name', {}, 'Ada Lovelace', undefined, []],
  // postal-address
  ['postal-address: valid', 'postal-address', {}, { street1: '1 Main St', city: 'Cambridge', postcode: 'CB1 1AA', country: 'gb' },
    { type: 'postal-address', value: { street1: '1 Main St', city: 'Cambridge', postcode: 'CB1 1AA', country: 'GB' } }, []],
  ['postal-address: no country', 'postal-address', {}, { city: 'Cambridge' }, undefined,
    ['Missing or invalid country code in postal address, must be two letter ISO code: {"city":"Cambridge"}']],
  ['postal-address: three-letter country', 'postal-address', {}, { city: 'Cambridge', country: 'GBR' }, undefined,
    ['Missing or invalid country code in postal address, must be two letter ISO code: {"city":"Cambridge","country":"GBR"}']],
  ['postal-address: unknown country', 'postal-address', {}, { city: 'Nowhere', country: 'QQ' }, undefined,
    ['Invalid postal address: {"city":"Nowhere","country":"QQ"} (unknown country code QQ)']],
  ['postal-address: part not text', 'postal-address', {}, { city: ['a'], country: 'FR' }, undefined,
    ['Invalid postal address: {"city":["a"],"country":"FR"} (city must be text)']],
  ['postal-address: not an object', 'postal-address', {}, 'GB', undefined, []],
  // file and dictionary types
  ['file: object passed through', 'file', {}, { digest: 'abc', fileSize: 1 }, { digest: 'abc', fileSize: 1 }, []],
  ['file: string dropped', 'file', {}, 'abc', undefined, []],
  ['dictionary type: value unchanged', 'string', {}, 'anything', 'anything', []],
  ['dictionary type: object unchanged', 'x:custom', {}, { a: 1 }, { a: 1 }, []],
];

const types = suite('convert: data types');
for (const [description, type, more, input, expected, expectedErrors] of CASES) {
  types(description, async () => {
    const { convert, errors } = build(type, more);
    assert.equal(await convert(input), expected);
    assert.equal(errors, expectedErrors);
  });
}
types('undefined and null convert to nothing for every type, silently', async () => {
  for (const type of new Set(CASES.map((c) => c[1]))) {
    const { convert, errors } = build(type, type === 'datetime' ? { dateFormat: 'yyyy' } : {});
    assert.is(await convert(undefined), undefined, type);
    assert.is(await convert(null), undefined, type);
    assert.equal(errors, [], type);
  }
});
types.run();

// ---------------------------------------------------------------------------------------------

const building = suite('convert: build-time errors and messages');

building('datetime without dateFormat disables the instruction', () => {
  const { ctx, errors } = context();
  assert.equal(makeConverter(field(), nameOf('datetime'), ctx), { error: 'Date format not specified for input field in' });
  assert.equal(errors, []);
});
building('an unsupported dateFormat disables the instruction with the reason', () => {
  const { ctx } = context();
  assert.equal(makeConverter(field({ dateFormat: 'yyyy-ww' }), nameOf('datetime'), ctx), {
    error: `Unsupported date format for input field in: "yyyy-ww" (pattern letter 'w' is not supported)`,
  });
});
building('filters that are not an array or not available disable the instruction', () => {
  const { ctx } = context();
  assert.equal(makeConverter(field({ filters: 'svc:to-string' }), nameOf('text'), ctx), { error: "'filters' property is not an array" });
  assert.equal(makeConverter(field({ filters: ['svc:to-string', 'svc:nope'] }), nameOf('text'), ctx), { error: 'Filter svc:nope is not available.' });
});
building('messages name the source as Haplo: field, field-structured, set-value', async () => {
  assert.is(sourceDetails({ source: 'age', destination: 'd', name: 'n' }), 'input field age');
  assert.is(sourceDetails({ action: 'field', source: 'age' }), 'input field age');
  assert.is(sourceDetails({ action: 'field-structured', structured: 'value:postal-address', destination: 'd', name: 'n' }), 'structured input field value:postal-address');
  assert.is(sourceDetails({ action: 'set-value', destination: 'profile', name: 'x:attribute:n', value: 1 }), 'set value profile/x:attribute:n');
  const { ctx, errors } = context();
  const c = makeConverter({ action: 'set-value', destination: 'profile', name: 'x:attribute:n', value: 'x' }, nameOf('integer'), ctx) as ValueConverter;
  await c('x');
  assert.equal(errors, ['Invalid integer for set value profile/x:attribute:n: x']);
});
building.run();

// ---------------------------------------------------------------------------------------------

const order = suite('convert: order of application');

order('mapInputValue, then filters in array order, then the data type (test_filter_apply_order)', async () => {
  const { convert, errors } = build('text', { mapInputValue: { X: 'abc' }, filters: ['test:order-1', 'test:order-2'] });
  assert.is(await convert('X'), 'ABC-1-2'); // the other filter order would give ABC-2-1
  assert.equal(errors, []);
});
order('the data type converts the filtered value, not the input', async () => {
  const { convert, errors } = build('integer', { mapInputValue: { X: '4' }, filters: ['test:twice'] });
  assert.is(await convert('X'), 44); // "X" -> "4" -> "44" -> 44
  assert.equal(errors, []);
  const bad = build('integer', { mapInputValue: { X: '4' }, filters: ['test:order-1'] });
  assert.is(await bad.convert('X'), undefined);
  assert.equal(bad.errors, ['Invalid integer for input field in: 4-1']);
  const ref = build('ref', { mapInputValue: { me: REF }, filters: ['svc:string-to-ref'] });
  assert.equal(await ref.convert('me'), refValue); // a plain string would be dropped by `ref`
});
order('filters see the mapped value', async () => {
  const seen: unknown[] = [];
  const { ctx } = context();
  const spy = new Map(ctx.filters).set('test:spy', (v: unknown) => (seen.push(v), v));
  const c = makeConverter(field({ mapInputValue: { a: 'mapped' }, filters: ['test:spy'] }), nameOf('text'), { ...ctx, filters: spy }) as ValueConverter;
  assert.is(await c('a'), 'mapped');
  assert.equal(seen, ['mapped']);
});
order('mapInputValue: unmapped values pass through; mapInputValueDefault replaces them', async () => {
  const plain = build('text', { mapInputValue: { a: 'A' } });
  assert.is(await plain.convert('a'), 'A');
  assert.is(await plain.convert('b'), 'b');
  const withDefault = build('text', { mapInputValue: { a: 'A' }, mapInputValueDefault: 'other' });
  assert.is(await withDefault.convert('a'), 'A');
  assert.is(await withDefault.convert('b'), 'other');
  const undefinedDefault = build('text', { mapInputValue: { a: 'A' }, mapInputValueDefault: undefined });
  assert.is(await undefinedDefault.convert('b'), undefined);
});
order('mapInputValue keys match as property keys: numbers and booleans by their text; no inherited keys', async () => {
  const { convert } = build('text', { mapInputValue: { 1: 'one', true: 'yes' } });
  assert.is(await convert(1), 'one');
  assert.is(await convert(true), 'yes');
  assert.is(await convert('toString'), 'toString');
});
order('mapInputValue can translate codes for object-type (as the control file generator suggests)', async () => {
  const { convert } = build('object-type', { mapInputValue: { Novel: 'x:type:novel' }, mapInputValueDefault: 'x:type:book' });
  assert.equal(await convert('Novel'), new RefValue(schema.types.get('x:type:novel')!.ref));
  assert.equal(await convert('Other'), new RefValue(schema.types.get('x:type:book')!.ref));
});
order('a filter giving undefined sets nothing, and later filters still run', async () => {
  const { convert, errors } = build('integer', { filters: ['test:undefined', 'svc:to-string'] });
  assert.is(await convert('12'), undefined);
  assert.equal(errors, []);
});
order.run();

// ---------------------------------------------------------------------------------------------

const mappings = suite('convert: ref mappings');

const behaviourMappings: Record<string, RefMapping> = {
  status: { using: 'behaviour', values: { A: 'x:list:active', I: 'x:list:inactive', Z: 'x:list:unknown' } },
};

mappings('using behaviour: input -> behaviour code -> ref, cached per batch', async () => {
  const active = newRef();
  const fake = fakeLookups({ behaviours: { 'x:list:active': active, 'x:list:inactive': newRef() } });
  const ctx = context({ lookups: fake.lookups, mappings: behaviourMappings });
  const one = build('ref', { refMapping: 'status' }, ctx);
  const two = build('ref', { refMapping: 'status', source: 'other' }, ctx);
  assert.equal(await one.convert('A'), new RefValue(active));
  assert.equal(await one.convert('A'), new RefValue(active));
  assert.equal(await two.convert('A'), new RefValue(active));
  assert.is(fake.calls.refByBehaviour, 1);
  assert.equal(ctx.errors, []);
});
mappings('using behaviour: an input not in values is reported', async () => {
  const ctx = context({ lookups: fakeLookups().lookups, mappings: behaviourMappings });
  const { convert } = build('ref', { refMapping: 'status' }, ctx);
  assert.is(await convert('Q'), undefined);
  assert.equal(ctx.errors, [`Value in input data cannot be mapped for ${S}: Q`]);
});
mappings('using behaviour: an unknown behaviour code throws', async () => {
  const ctx = context({ lookups: fakeLookups().lookups, mappings: behaviourMappings });
  const { convert } = build('ref', { refMapping: 'status' }, ctx);
  try {
    await convert('Z');
    assert.unreachable('expected a throw');
  } catch (e) {
    assert.instance(e, Error);
    assert.match((e as Error).message, 'x:list:unknown');
  }
});
mappings('using behaviour: works after mapInputValue and filters', async () => {
  const active = newRef();
  const ctx = context({ lookups: fakeLookups({ behaviours: { 'x:list:active': active } }).lookups, mappings: behaviourMappings });
  const { convert } = build('ref', { refMapping: 'status', mapInputValue: { yes: 'a' }, filters: ['svc:to-upper-case'] }, ctx);
  assert.equal(await convert('yes'), new RefValue(active));
});

const titleObjects = (): FakeObject[] => [
  { ref: newRef(), type: 'x:type:book', titles: ['Emma', 'Emma (1815)'] },
  { ref: newRef(), type: 'x:type:novel', titles: ['Persuasion'] },
  { ref: newRef(), type: 'x:type:person', titles: ['Jane'] },
];

mappings('using title: input -> title -> ref, every title, subtypes included, loaded once per batch', async () => {
  const objects = titleObjects();
  const fake = fakeLookups({ objects });
  const ctx = context({
    lookups: fake.lookups,
    mappings: { books: { using: 'title', types: ['x:type:book'], values: { E: 'Emma', E2: 'Emma (1815)', P: 'Persuasion', J: 'Jane', L: 'Lost' } } },
  });
  const { convert } = build('ref', { refMapping: 'books' }, ctx);
  const again = build('ref', { refMapping: 'books' }, ctx);
  const [e, e2, p] = await Promise.all([convert('E'), convert('E2'), again.convert('P')]);
  assert.equal(e, new RefValue(objects[0]!.ref));
  assert.equal(e2, new RefValue(objects[0]!.ref));
  assert.equal(p, new RefValue(objects[1]!.ref));
  assert.is(fake.calls.titlesOfTypes, 1);
  assert.equal(ctx.errors, []);
  // Titles are case-sensitive; an input not in values is dropped silently; a title not found is reported.
  assert.is(await convert('e'), undefined);
  assert.is(await convert('J'), undefined); // a person, not a book
  assert.is(await convert('L'), undefined);
  assert.equal(ctx.errors, [`Value in input data cannot be mapped for ${S}: J`, `Value in input data cannot be mapped for ${S}: L`]);
});
mappings('using title: too many objects', async () => {
  const objects = Array.from({ length: MAX_TITLE_MAPPING_OBJECTS + 1 }, (_, i): FakeObject => ({ ref: newRef(), type: 'x:type:book', titles: [`T${i}`] }));
  assert.is(MAX_TITLE_MAPPING_OBJECTS, 4096);
  const ctx = context({ lookups: fakeLookups({ objects }).lookups, mappings: { books: { using: 'title', types: ['x:type:book'], values: { a: 'T1' } } } });
  const { convert } = build('ref', { refMapping: 'books' }, ctx);
  assert.is(await convert('a'), undefined);
  assert.is(await convert('a'), undefined);
  assert.equal(await convert(refValue), refValue); // as without a mapping
  assert.equal(ctx.errors, ['Mapping books uses title mapping, but too many objects in store to use this method.']);
});
mappings('using title: set-up errors are reported when the converter is made, and only Refs are accepted', async () => {
  const ctx = context({
    mappings: {
      noTypes: { using: 'title', values: { a: 'Emma' } },
      badTypes: { using: 'title', types: ['x:type:nope'], values: { a: 'Emma' } },
      someBad: { using: 'title', types: ['x:type:nope', 'x:type:book'], values: { a: 'Emma' } },
    },
    lookups: fakeLookups({ objects: titleObjects() }).lookups,
  });
  const noTypes = build('ref', { refMapping: 'noTypes' }, ctx);
  assert.equal(ctx.errors, ['Mapping noTypes does not specify types']);
  assert.is(await noTypes.convert('a'), undefined);
  assert.equal(await noTypes.convert(refValue), refValue);
  ctx.errors.length = 0;
  build('ref', { refMapping: 'badTypes' }, ctx);
  assert.equal(ctx.errors, ['Mapping badTypes refers to unknown type x:type:nope', 'No types for mapping badTypes']);
  ctx.errors.length = 0;
  const someBad = build('ref', { refMapping: 'someBad' }, ctx);
  assert.equal(ctx.errors, ['Mapping someBad refers to unknown type x:type:nope']);
  assert.instance(await someBad.convert('a'), RefValue); // the valid type still maps
});
mappings('unknown mapping', async () => {
  for (const mappingsOf of [undefined, behaviourMappings]) {
    const ctx = context(mappingsOf ? { mappings: mappingsOf } : {});
    const { convert } = build('ref', { refMapping: 'toString' }, ctx);
    assert.equal(ctx.errors, ['Unknown mapping: toString']);
    assert.is(await convert('a'), undefined);
    assert.equal(await convert(refValue), refValue);
  }
});
mappings.run();

// ---------------------------------------------------------------------------------------------

const constants = suite('convert: set-value constants');

constants('convertConstant converts once and reuses the result (errors reported once)', async () => {
  const { ctx, errors } = context();
  let calls = 0;
  const c = makeConverter({ action: 'set-value', destination: 'd', name: 'n', value: 'x' }, nameOf('integer'), ctx) as ValueConverter;
  const counted: ValueConverter = (v) => (calls++, c(v));
  const get = convertConstant(counted, 'x');
  assert.is(await get(), undefined);
  assert.is(await get(), undefined);
  assert.is(calls, 1);
  assert.equal(errors, ['Invalid integer for set value d/n: x']);
  const good = convertConstant(makeConverter(field(), nameOf('integer'), ctx) as ValueConverter, '12');
  assert.is(await good(), 12);
});
constants('convertConstant retries a conversion that threw', async () => {
  let calls = 0;
  const get = convertConstant(async () => {
    calls++;
    if (calls === 1) throw new Error('first');
    return 'second';
  }, 'v');
  try {
    await get();
    assert.unreachable();
  } catch (e) {
    assert.is((e as Error).message, 'first');
  }
  assert.is(await get(), 'second');
  assert.is(await get(), 'second');
  assert.is(calls, 2);
});
constants.run();
