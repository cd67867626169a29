import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RefValue, type ImportLookups } from '../../../src/domain/control-file.ts';
import { FILTERS, filterNames, makeFilterInstances } from '../../../src/commands/push-data/filters.ts';
import { newRef } from '../../../src/commands/new-ref.ts';

/** In-memory ImportLookups over plain maps, recording the arguments it was asked about. */
const fakeLookups = (data: { usernames?: Record<string, string>; emails?: Record<string, string>; behaviours?: Record<string, string> } = {}) => {
  const asked: string[] = [];
  const lookups: ImportLookups = {
    profileRefByUsername: async (u) => (asked.push(`username:${u}`), data.usernames?.[u]),
    profileRefByEmail: async (e) => (asked.push(`email:${e}`), data.emails?.[e]),
    refByBehaviour: async (c) => (asked.push(`behaviour:${c}`), data.behaviours?.[c]),
    titlesOfTypes: async () => [],
  };
  return { lookups, asked };
};

const filter = (name: string, lookups: ImportLookups = fakeLookups().lookups) => {
  const def = FILTERS[name];
  if (!def) throw new Error(`no filter ${name}`);
  return async (v: unknown) => def.make(lookups)(v);
};

const REF = newRef();

const test = suite('filters');

test('the filter names, each with a description', () => {
  assert.equal([...filterNames].sort(), [
    'svc:code-to-ref',
    'svc:email-to-ref',
    'svc:fix-up-url',
    'svc:string-to-ref',
    'svc:to-lower-case',
    'svc:to-string',
    'svc:to-upper-case',
    'svc:username-to-ref',
  ]);
  for (const name of filterNames) assert.ok(FILTERS[name]!.description.length > 10, name);
  const instances = makeFilterInstances(fakeLookups().lookups);
  assert.equal([...instances.keys()].sort(), [...filterNames].sort());
  for (const fn of instances.values()) assert.type(fn, 'function');
});

test('svc:string-to-ref', async () => {
  const f = filter('svc:string-to-ref');
  assert.equal(await f(REF), new RefValue(REF));
  const ref = new RefValue(REF);
  assert.is(await f(ref), ref);
  assert.is(await f('not a ref'), undefined);
  assert.is(await f(REF.toUpperCase()), undefined);
  assert.is(await f(` ${REF}`), undefined);
  assert.is(await f(12), undefined);
  assert.is(await f(undefined), undefined);
  assert.is(await f({ ref: REF }), undefined);
});

test('svc:code-to-ref: behaviour code to ref, refs pass, found refs cached per instance', async () => {
  const ref = newRef();
  const fake = fakeLookups({ behaviours: { 'x:list:a': ref } });
  const f = FILTERS['svc:code-to-ref']!.make(fake.lookups);
  assert.equal(await f('x:list:a'), new RefValue(ref));
  assert.equal(await f('x:list:a'), new RefValue(ref));
  assert.is(await f('x:list:none'), undefined);
  assert.is(await f('x:list:none'), undefined);
  const r = new RefValue(REF);
  assert.is(await f(r), r);
  assert.is(await f(3), undefined);
  assert.equal(fake.asked, ['behaviour:x:list:a', 'behaviour:x:list:none', 'behaviour:x:list:none']);
  // A new batch gets a new instance, with an empty cache.
  await FILTERS['svc:code-to-ref']!.make(fake.lookups)('x:list:a');
  assert.is(fake.asked.length, 4);
});

test('svc:username-to-ref: lower-cases; unknown users and non-strings give undefined', async () => {
  const ref = newRef();
  const fake = fakeLookups({ usernames: { jbloggs: ref } });
  const f = filter('svc:username-to-ref', fake.lookups);
  assert.equal(await f('JBloggs'), new RefValue(ref));
  assert.is(await f('nobody'), undefined);
  assert.is(await f(42), undefined);
  assert.is(await f(undefined), undefined);
  assert.equal(fake.asked, ['username:jbloggs', 'username:nobody']);
});

test('svc:email-to-ref', async () => {
  const ref = newRef();
  const fake = fakeLookups({ emails: { 'j@example.org': ref } });
  const f = filter('svc:email-to-ref', fake.lookups);
  assert.equal(await f('j@example.org'), new RefValue(ref));
  assert.is(await f('x@example.org'), undefined);
  assert.is(await f(null), undefined);
  assert.equal(fake.asked, ['email:j@example.org', 'email:x@example.org']);
});

test('svc:fix-up-url: the regex rule', async () => {
  const f = filter('svc:fix-up-url');
  const cases: [unknown, unknown][] = [
    ['www.example.org', 'https://www.example.org'],
    ['example.org/path/to', 'https://example.org/path/to'],
    ['a-b+c.d', 'https://a-b+c.d'],
    ['https://example.org', 'https://example.org'], // has ':'
    ['www.example2.com', 'www.example2.com'], // digits are not in the regex
    ['example.org/page?x=1', 'example.org/page?x=1'],
    ['.example.org', '.example.org'], // must start with a letter
    ['x', 'x'], // at least two characters
    ['', ''],
    [42, undefined],
    [undefined, undefined],
  ];
  for (const [input, expected] of cases) assert.is(await f(input), expected, String(input));
});

test('svc:to-lower-case and svc:to-upper-case: strings only, other values pass through', async () => {
  const lower = filter('svc:to-lower-case');
  const upper = filter('svc:to-upper-case');
  assert.is(await lower('AbC'), 'abc');
  assert.is(await upper('AbC'), 'ABC');
  const r = new RefValue(REF);
  for (const v of [12, true, undefined, null, r]) {
    assert.is(await lower(v), v);
    assert.is(await upper(v), v);
  }
});

test('svc:to-string', async () => {
  const f = filter('svc:to-string');
  assert.is(await f(12), '12');
  assert.is(await f(0), '0');
  assert.is(await f(false), 'false');
  assert.is(await f('s'), 's');
  assert.is(await f(new RefValue(REF)), REF);
  assert.is(await f(undefined), undefined);
  assert.is(await f(null), undefined);
});

test.run();
