import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadSchema, parseSchema, refForCode, SchemaError } from '../../src/app/load-schema.ts';
import { VALUE_TYPES } from '../../src/domain/schema.ts';
import { tempDir } from '../support/tmp.ts';

const DEFAULT = 'config/schema.json';

/** A small valid schema document; tests change copies of it. */
const minimal = () => ({
  types: [
    { code: 'x:type:thing', name: 'Thing', attributes: ['dc:attribute:title', 'dc:attribute:type'] },
    { code: 'x:type:sub', name: 'Sub', parent: 'x:type:thing', attributes: ['x:attribute:note', 'dc:attribute:title'] },
    { code: 'x:type:other', name: 'Other', attributes: [] as string[] },
    { code: 'x:type:subsub', name: 'Sub sub', parent: 'x:type:sub', annotations: ['x:annotation:a'], behaviour: 'x:behaviour:b', attributes: [] as string[] },
  ] as Record<string, unknown>[],
  attributes: [
    { code: 'dc:attribute:title', name: 'Title', dataType: 'text' },
    { code: 'dc:attribute:type', name: 'Type', dataType: 'link' },
    { code: 'x:attribute:note', name: 'Note', dataType: 'text-multiline' },
  ] as Record<string, unknown>[],
  qualifiers: [{ code: 'x:qualifier:q', name: 'Q' }] as Record<string, unknown>[],
  labels: [{ code: 'x:label:l', name: 'L' }] as Record<string, unknown>[],
});

/** The problems of parsing `json`; fails when it parses. */
const problemsOf = (json: unknown): readonly string[] => {
  try {
    parseSchema(json, 'test');
  } catch (err) {
    assert.instance(err, SchemaError);
    return (err as SchemaError).problems;
  }
  assert.unreachable('expected a SchemaError');
  return [];
};

const has = (problems: readonly string[], expected: string) =>
  assert.ok(problems.includes(expected), `expected problem\n  ${expected}\nin\n  ${problems.join('\n  ')}`);

const test = suite('Schema loading');

test('the default schema loads and uses every value type', () => {
  const s = loadSchema(DEFAULT);
  const used = new Set([...s.attributes.values()].map((a) => a.dataType));
  for (const vt of VALUE_TYPES) assert.ok(used.has(vt), `no attribute of type ${vt}`);
  assert.ok(s.types.has('svc:type:person'));
  assert.ok(s.types.has('phd:type:project'));
  assert.is(s.attributes.get('dc:attribute:title')?.dataType, 'text');
  assert.is(s.attributes.get('dc:attribute:type')?.dataType, 'link');
  assert.is(s.attributes.get('svc:attribute:name')?.dataType, 'person-name');
  assert.equal(s.attributes.get('phd:attribute:researcher')?.linkTypes, ['svc:type:person']);
  assert.equal(s.attributes.get('svc:attribute:parent')?.linkTypes, ['svc:type:faculty']);
  assert.equal([...s.qualifiers.keys()], ['svc:qualifier:alternative', 'svc:qualifier:work', 'svc:qualifier:home']);
  assert.equal([...s.labels.values()].map((l) => l.name), ['Common', 'Confidential', 'Archived']);
  // Every type uses only defined attributes, and the contract's example attributes are present.
  for (const t of s.types.values()) for (const a of t.attributes) assert.ok(s.attributes.has(a), `${t.code}: ${a}`);
  assert.ok(s.types.get('phd:type:project')!.attributes.includes('phd:attribute:researcher'));
  assert.ok(s.types.get('phd:type:project')!.attributes.includes('dc:attribute:title'));
  const dept = s.types.get('svc:type:department')!;
  assert.ok(dept.attributes.includes('svc:attribute:parent'));
  assert.ok(dept.attributes.includes('svc:attribute:configured-behaviour'));
  assert.ok(s.types.get('svc:type:faculty')!.attributes.includes('svc:attribute:configured-behaviour'));
});

test('the default schema: hierarchy of part-time projects and organisations', () => {
  const s = loadSchema(DEFAULT);
  const partTime = s.types.get('phd:type:project-part-time')!;
  assert.is(partTime.parent, 'phd:type:project');
  assert.is(partTime.rootCode, 'phd:type:project');
  assert.equal(partTime.attributes, s.types.get('phd:type:project')!.attributes);
  assert.is(s.types.get('svc:type:department')!.rootCode, 'svc:type:organisation');
  assert.ok(s.isKindOf('svc:type:faculty', 'svc:type:organisation'));
  assert.equal(s.typeAndSubtypes('svc:type:organisation').map((t) => t.code), ['svc:type:organisation', 'svc:type:faculty', 'svc:type:department']);
});

test('attributes are inherited, parent first, without duplicates; rootCode and refs', () => {
  const s = parseSchema(minimal());
  const thing = s.types.get('x:type:thing')!;
  const sub = s.types.get('x:type:sub')!;
  const subsub = s.types.get('x:type:subsub')!;
  assert.equal(thing, {
    code: 'x:type:thing',
    name: 'Thing',
    ref: refForCode('x:type:thing'),
    rootCode: 'x:type:thing',
    annotations: [],
    attributes: ['dc:attribute:title', 'dc:attribute:type'],
  });
  assert.not.ok('parent' in thing);
  assert.not.ok('behaviour' in thing);
  assert.equal(sub.attributes, ['dc:attribute:title', 'dc:attribute:type', 'x:attribute:note']);
  assert.equal(subsub.attributes, sub.attributes);
  assert.is(sub.parent, 'x:type:thing');
  assert.is(sub.rootCode, 'x:type:thing');
  assert.is(subsub.rootCode, 'x:type:thing');
  assert.equal(subsub.annotations, ['x:annotation:a']);
  assert.is(subsub.behaviour, 'x:behaviour:b');
  assert.equal(s.attributes.get('x:attribute:note'), {
    code: 'x:attribute:note',
    name: 'Note',
    ref: refForCode('x:attribute:note'),
    dataType: 'text-multiline',
    linkTypes: [],
  });
  assert.equal(s.qualifiers.get('x:qualifier:q'), { code: 'x:qualifier:q', name: 'Q', ref: refForCode('x:qualifier:q') });
  assert.equal(s.labels.get('x:label:l'), { code: 'x:label:l', name: 'L', ref: refForCode('x:label:l') });
  // Types keep schema order even when a subtype is listed before its parent.
  const doc = minimal();
  doc.types.reverse();
  assert.equal([...parseSchema(doc).types.keys()], ['x:type:subsub', 'x:type:other', 'x:type:sub', 'x:type:thing']);
  assert.equal(parseSchema(doc).types.get('x:type:subsub')!.attributes, sub.attributes);
});

test('isKindOf, typeAndSubtypes and byRef', () => {
  const s = parseSchema(minimal());
  assert.ok(s.isKindOf('x:type:thing', 'x:type:thing'));
  assert.ok(s.isKindOf('x:type:sub', 'x:type:thing'));
  assert.ok(s.isKindOf('x:type:subsub', 'x:type:thing'));
  assert.not.ok(s.isKindOf('x:type:thing', 'x:type:sub'));
  assert.not.ok(s.isKindOf('x:type:other', 'x:type:thing'));
  assert.not.ok(s.isKindOf('x:type:nope', 'x:type:nope'));
  assert.equal(s.typeAndSubtypes('x:type:thing').map((t) => t.code), ['x:type:thing', 'x:type:sub', 'x:type:subsub']);
  assert.equal(s.typeAndSubtypes('x:type:sub').map((t) => t.code), ['x:type:sub', 'x:type:subsub']);
  assert.equal(s.typeAndSubtypes('x:type:other').map((t) => t.code), ['x:type:other']);
  assert.equal(s.typeAndSubtypes('x:type:nope'), []);
  assert.is(s.byRef(refForCode('x:type:sub')), s.types.get('x:type:sub'));
  assert.is(s.byRef(refForCode('dc:attribute:title')), s.attributes.get('dc:attribute:title'));
  assert.is(s.byRef(refForCode('x:qualifier:q')), s.qualifiers.get('x:qualifier:q'));
  assert.is(s.byRef(refForCode('x:label:l')), s.labels.get('x:label:l'));
  assert.is(s.byRef(refForCode('x:type:nope')), undefined);
  assert.is(s.byRef('not-a-ref'), undefined);
});

test('structural problems: every one, path-qualified, in one SchemaError', () => {
  const doc = minimal();
  doc.types.push({ code: 'x:attribute:wrong-kind', name: '', attributes: 'all', atributes: [] }, 42 as never);
  doc.attributes.push({ code: 'x:attribute:n', name: 'N', dataType: 'strng' }, { code: 'x:attribute:m', name: 7 });
  doc.qualifiers.push({ code: 'X:qualifier:Bad', name: 'Bad' });
  doc.labels.push({ code: 'x:label', name: 'Short' }, { name: 'No code' });
  const problems = problemsOf(doc);
  const shape = 'a code of the form namespace:KIND:name (lower-case letters, digits and hyphens)';
  const codeOf = (kind: string) => shape.replace('KIND', kind);
  has(problems, 'types[4]: unknown property "atributes"');
  has(problems, `types[4].code: must be ${codeOf('type')} (got "x:attribute:wrong-kind")`);
  has(problems, 'types[4].name: must be a non-empty string (got "")');
  has(problems, 'types[4].attributes: must be an array (got "all")');
  has(problems, 'types[5]: must be an object (got 42)');
  has(problems, `attributes[3].dataType: must be one of ${[...VALUE_TYPES, 'attribute-group'].join(', ')} (got "strng")`);
  has(problems, 'attributes[4].name: must be a non-empty string (got 7)');
  has(problems, 'attributes[4].dataType: is required');
  has(problems, `qualifiers[1].code: must be ${codeOf('qualifier')} (got "X:qualifier:Bad")`);
  has(problems, `labels[1].code: must be ${codeOf('label')} (got "x:label")`);
  has(problems, 'labels[2].code: is required');
  assert.is(problems.length, 11, problems.join('\n'));
});

test('the document root: not an object, missing or mistyped sections, unknown keys', () => {
  assert.equal(problemsOf([]), ['(root): must be an object (got an array)']);
  const problems = problemsOf({ types: {}, attributes: minimal().attributes, qualifiers: 'none', extra: true });
  has(problems, '(root): unknown property "extra"');
  has(problems, 'types: must be an array (got an object)');
  has(problems, 'qualifiers: must be an array (got "none")');
  has(problems, 'labels: is required');
  assert.is(problems.length, 4, problems.join('\n'));
});

test('reference problems: unknown parent, attribute and link type; linkTypes on a non-link', () => {
  const doc = minimal();
  doc.types.push(
    { code: 'x:type:orphan', name: 'Orphan', parent: 'svc:type:nope', attributes: ['x:attribute:y', 'x:attribute:note', 'x:attribute:note'] },
  );
  doc.attributes.push(
    { code: 'x:attribute:friend', name: 'Friend', dataType: 'link', linkTypes: ['x:type:thing', 'x:type:ghost'] },
    { code: 'x:attribute:plain', name: 'Plain', dataType: 'text', linkTypes: ['x:type:thing'] },
  );
  const problems = problemsOf(doc);
  assert.equal(problems, [
    'types[4].parent: unknown type "svc:type:nope"',
    'types[4].attributes[0]: unknown attribute "x:attribute:y"',
    'types[4].attributes[2]: duplicate attribute "x:attribute:note"',
    'attributes[3].linkTypes[1]: unknown type "x:type:ghost"',
    'attributes[4].linkTypes: only allowed when dataType is "link" (dataType is "text")',
  ]);
});

test('attribute groups: the default schema has phd:attribute:funding on PhD projects', () => {
  const s = loadSchema(DEFAULT);
  const funding = s.attributes.get('phd:attribute:funding');
  assert.is(funding?.dataType, 'attribute-group');
  assert.is(funding?.name, 'Funding');
  assert.equal(funding?.groupAttributes, ['phd:attribute:funder', 'phd:attribute:funding-amount', 'phd:attribute:funding-start']);
  assert.equal(s.attributes.get('phd:attribute:funder')?.linkTypes, ['svc:type:organisation']);
  assert.is(s.attributes.get('phd:attribute:funding-amount')?.dataType, 'number');
  assert.is(s.attributes.get('phd:attribute:funding-start')?.dataType, 'datetime');
  assert.ok(s.types.get('phd:type:project')?.attributes.includes('phd:attribute:funding'));
  assert.equal(s.groupsOfType('phd:type:project').map((g) => g.code), ['phd:attribute:funding']);
  // Inherited by subtypes, like any attribute.
  assert.equal(s.groupsOfType('phd:type:project-part-time').map((g) => g.code), ['phd:attribute:funding']);
  assert.equal(s.groupsOfType('svc:type:person'), []);
  assert.equal(s.groupsOfType('x:type:unknown'), []);
  // Plain attributes have no groupAttributes.
  assert.is(s.attributes.get('dc:attribute:title')?.groupAttributes, undefined);
});

test('attribute groups: members must be existing, distinct, non-group attributes', () => {
  const doc = minimal();
  doc.attributes.push(
    { code: 'x:attribute:group', name: 'Group', dataType: 'attribute-group', groupAttributes: ['x:attribute:note', 'x:attribute:ghost', 'x:attribute:note'] },
    { code: 'x:attribute:nested', name: 'Nested', dataType: 'attribute-group', groupAttributes: ['x:attribute:group', 'dc:attribute:title'] },
    { code: 'x:attribute:no-members', name: 'No members', dataType: 'attribute-group' },
    { code: 'x:attribute:empty', name: 'Empty', dataType: 'attribute-group', groupAttributes: [] },
    { code: 'x:attribute:plain', name: 'Plain', dataType: 'text', groupAttributes: ['x:attribute:note'] },
    { code: 'x:attribute:bad', name: 'Bad', dataType: 'attribute-group', groupAttributes: ['x:type:thing'] },
  );
  assert.equal(problemsOf(doc), [
    'attributes[8].groupAttributes[0]: must be a code of the form namespace:attribute:name (lower-case letters, digits and hyphens) (got "x:type:thing")',
    'attributes[3].groupAttributes[1]: unknown attribute "x:attribute:ghost"',
    'attributes[3].groupAttributes[2]: duplicate attribute "x:attribute:note"',
    'attributes[4].groupAttributes[0]: "x:attribute:group" is an attribute group; groups cannot be nested',
    'attributes[4].groupAttributes[1]: "dc:attribute:title" cannot be a member of an attribute group',
    'attributes[5].groupAttributes: is required when dataType is "attribute-group"',
    'attributes[6].groupAttributes: must not be empty',
    'attributes[7].groupAttributes: only allowed when dataType is "attribute-group" (dataType is "text")',
  ]);

  const ok = minimal();
  ok.attributes.push({ code: 'x:attribute:group', name: 'Group', dataType: 'attribute-group', groupAttributes: ['x:attribute:note'] });
  ok.types[0]!.attributes = ['dc:attribute:title', 'dc:attribute:type', 'x:attribute:group'];
  const s = parseSchema(ok, 'test');
  assert.equal(s.attributes.get('x:attribute:group')?.groupAttributes, ['x:attribute:note']);
  assert.equal(s.groupsOfType('x:type:sub').map((g) => g.code), ['x:attribute:group']);
});

test('duplicate codes in every section', () => {
  const doc = minimal();
  doc.types.push({ code: 'x:type:thing', name: 'Again', attributes: [] });
  doc.attributes.push({ code: 'x:attribute:note', name: 'Again', dataType: 'text' });
  doc.qualifiers.push({ code: 'x:qualifier:q', name: 'Again' });
  doc.labels.push({ code: 'x:label:l', name: 'Again' });
  assert.equal(problemsOf(doc), [
    'types[4].code: duplicate code "x:type:thing" (first defined at types[0])',
    'attributes[3].code: duplicate code "x:attribute:note" (first defined at attributes[2])',
    'qualifiers[1].code: duplicate code "x:qualifier:q" (first defined at qualifiers[0])',
    'labels[1].code: duplicate code "x:label:l" (first defined at labels[0])',
  ]);
});

test('cycles in parents are reported once each', () => {
  const doc = minimal();
  doc.types.push(
    { code: 'x:type:a', name: 'A', parent: 'x:type:b', attributes: [] },
    { code: 'x:type:b', name: 'B', parent: 'x:type:a', attributes: [] },
    { code: 'x:type:self', name: 'Self', parent: 'x:type:self', attributes: [] },
    { code: 'x:type:into', name: 'Into', parent: 'x:type:a', attributes: [] },
  );
  assert.equal(problemsOf(doc), [
    'types[4].parent: cycle in parents: x:type:a -> x:type:b -> x:type:a',
    'types[6].parent: cycle in parents: x:type:self -> x:type:self',
  ]);
});

test('dc:attribute:title and dc:attribute:type are required; type and parent must be links', () => {
  const doc = minimal();
  doc.attributes = [
    { code: 'dc:attribute:type', name: 'Type', dataType: 'text' },
    { code: 'svc:attribute:parent', name: 'Parent', dataType: 'integer' },
    { code: 'x:attribute:note', name: 'Note', dataType: 'text' },
  ];
  doc.types = [{ code: 'x:type:thing', name: 'Thing', attributes: ['x:attribute:note'] }];
  assert.equal(problemsOf(doc), [
    'attributes: required attribute "dc:attribute:title" is not defined',
    'attributes[0].dataType: "dc:attribute:type" must be "link" (got "text")',
    'attributes[1].dataType: "svc:attribute:parent" must be "link" (got "integer")',
  ]);
  doc.attributes = [{ code: 'dc:attribute:title', name: 'Title', dataType: 'text' }];
  assert.equal(problemsOf(doc), [
    'types[0].attributes[0]: unknown attribute "x:attribute:note"',
    'attributes: required attribute "dc:attribute:type" is not defined',
  ]);
});

test('problems of different classes are reported together; long values are not echoed', () => {
  const doc = minimal();
  const long = 'x'.repeat(5000);
  doc.types.push({ code: long, name: 'Long', parent: 'x:type:nope', attributes: ['x:attribute:nope'] });
  doc.attributes.push({ code: 'x:attribute:t', name: 'T', dataType: long });
  doc.labels.push({ code: 'x:label:l', name: 'L' });
  let error: unknown;
  try {
    parseSchema(doc, 'my-schema.json');
  } catch (err) {
    error = err;
  }
  assert.instance(error, SchemaError);
  const e = error as SchemaError;
  assert.equal(e.problems, [
    'types[4].code: must be a code of the form namespace:type:name (lower-case letters, digits and hyphens) (got a string of 5000 characters)',
    `attributes[3].dataType: must be one of ${[...VALUE_TYPES, 'attribute-group'].join(', ')} (got a string of 5000 characters)`,
    'labels[1].code: duplicate code "x:label:l" (first defined at labels[0])',
  ]);
  assert.ok(e.message.startsWith('Invalid schema (my-schema.json), 3 problems:\n  types[4].code: '), e.message);
  assert.not.ok(e.message.includes(long));
  // An invalid item is left out of reference checks, but its code still counts as defined.
  const doc2 = minimal();
  doc2.types.push({ code: 'x:type:broken', name: '', attributes: [] }, { code: 'x:type:child', name: 'Child', parent: 'x:type:broken', attributes: [] });
  assert.equal(problemsOf(doc2), ['types[4].name: must be a non-empty string (got "")']);
});

test('loadSchema: missing file, invalid JSON with position, valid file', () => {
  const tmp = tempDir('svc-schema');
  try {
    const missing = join(tmp.dir, 'missing.json');
    try {
      loadSchema(missing);
      assert.unreachable('should throw');
    } catch (err) {
      assert.instance(err, SchemaError);
      assert.equal((err as SchemaError).problems, [`${missing}: file not found`]);
    }
    const bad = join(tmp.dir, 'bad.json');
    // The reason after the position is V8's wording (minus its quote of the text), so only its start is pinned.
    const cases: [string, string][] = [
      ['{\n  "types": [\n    {"code": }\n  ]\n}', 'invalid JSON at line 3, column 14: Unexpected token'],
      ['{\n  "types": [1, 2', 'invalid JSON at line 2, column 17: '],
      ['{"a": 1} trailing', 'invalid JSON at line 1, column 10: '],
      ['', 'invalid JSON at line 1, column 1: '],
    ];
    for (const [text, expected] of cases) {
      writeFileSync(bad, text);
      try {
        loadSchema(bad);
        assert.unreachable('should throw');
      } catch (err) {
        assert.instance(err, SchemaError);
        const e = err as SchemaError;
        assert.is(e.problems.length, 1);
        assert.ok(e.problems[0]!.startsWith(`${bad}: ${expected}`), e.problems[0]);
        assert.ok(e.problems[0]!.length > `${bad}: ${expected}`.length, 'a reason follows the position');
        assert.not.ok(e.message.includes('"code"'), e.message);
      }
    }
    const good = join(tmp.dir, 'good.json');
    writeFileSync(good, `\uFEFF${JSON.stringify(minimal())}`);
    assert.ok(loadSchema(good).types.has('x:type:thing'));
    const doc = minimal();
    doc.types.push({ code: 'x:type:z', name: 'Z', attributes: ['nope'] });
    writeFileSync(good, JSON.stringify(doc));
    try {
      loadSchema(good);
      assert.unreachable('should throw');
    } catch (err) {
      assert.instance(err, SchemaError);
      assert.is((err as SchemaError).source, good);
      assert.equal((err as SchemaError).problems, [
        'types[4].attributes[0]: must be a code of the form namespace:attribute:name (lower-case letters, digits and hyphens) (got "nope")',
      ]);
    }
  } finally {
    tmp.remove();
  }
});

test.run();
