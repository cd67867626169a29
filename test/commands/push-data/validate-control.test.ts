import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadModels } from '../../../src/app/load-models.ts';
import { readerNames } from '../../../src/commands/push-data/readers.ts';
import { OVERWRITE_IN_FOR_EACH, validateControlFile, type ControlValidationContext } from '../../../src/commands/push-data/validate-control.ts';
import { configFile } from '../../../src/config/paths.ts';
import { loadSchema } from '../../../src/app/load-schema.ts';
import { EXAMPLE_CONTROL } from '../../support/push-data.ts';

const schema = loadSchema(configFile('schema.json'));
const ctx: ControlValidationContext = {
  models: loadModels(configFile('models.json'), schema),
  filters: ['svc:username-to-ref', 'svc:string-to-ref', 'svc:code-to-ref', 'svc:email-to-ref', 'svc:fix-up-url', 'svc:to-lower-case', 'svc:to-upper-case', 'svc:to-string'],
  readers: readerNames,
  qualifiers: [...schema.qualifiers.keys()],
};

type Json = Record<string, unknown>;

/** The contract's example control file (spec/interface.md, "update-title"). */
const contractExample = (): Json => structuredClone(EXAMPLE_CONTROL);

/** The contract example with some root keys replaced (undefined removes a key). */
const withRoot = (changes: Json): Json => {
  const c = { ...contractExample(), ...changes };
  for (const [k, v] of Object.entries(changes)) if (v === undefined) delete c[k];
  return c;
};

/** The contract example with these instructions. */
const withInstructions = (...instructions: unknown[]): Json => withRoot({ instructions });

const PERSON_PREAMBLE = [
  { source: 'username', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
  { action: 'load', destination: 'profile', using: 'load:by-ref' },
];

// --------------------------------------------------------------------------

const valid = suite('validate control file: valid files');

valid('the contract example control file', () => {
  assert.equal(validateControlFile(contractExample(), ctx), []);
});

valid('every action, nested lists, mappings, qualifiers and every reader', () => {
  const control = {
    dataImportControlFileVersion: 0,
    model: 'svc:person',
    files: {
      DEFAULT: { read: 'json' },
      people: { read: 'tsv-with-name-row', charset: 'ISO-8859-1', separator: ',' },
      a: { read: 'xml-text-of-children', singleRecord: true },
      b: { read: 'xml-attributes' },
    },
    mapping: {
      departments: { types: ['svc:type:department'], using: 'title', values: { CS: 'Computer Science' } },
      faculties: { using: 'behaviour', values: { SCI: 'svc:behaviour:science' } },
    },
    instructions: [
      ...PERSON_PREAMBLE,
      { action: 'field', source: 'job', destination: 'profile', name: 'svc:attribute:job-title', qualifier: 'svc:qualifier:work', filters: ['svc:to-upper-case'] },
      { source: 'dept', destination: 'profile', name: 'svc:attribute:department', refMapping: 'departments' },
      { source: 'type', destination: 'profile', name: 'dc:attribute:type', mapInputValue: { staff: 'svc:type:person' }, mapInputValueDefault: 'svc:type:person' },
      { source: 'start', destination: 'phd:project', name: 'phd:attribute:start-date', dateFormat: 'yyyy-MM-dd' },
      { action: 'set-value', destination: 'phd:project', name: 'phd:attribute:funded', value: 'yes' },
      { action: 'remove-values', destination: 'profile', name: 'svc:attribute:telephone' },
      { action: 'if-exists', source: 'x', then: [{ action: 'log-error', message: 'x' }], else: [{ action: 'abort-record', message: 'no x' }] },
      { action: 'if-value-one-of', source: 'x', values: ['a', 1], then: [] },
      {
        action: 'if-has-value',
        destination: 'profile',
        name: 'dc:attribute:title',
        else: [{ action: 'set-value', destination: 'profile', name: 'dc:attribute:title', value: 'Unknown' }],
      },
      { action: 'within', source: 'name', instructions: [{ source: 'last', destination: 'value:person-name', name: 'last' }] },
      { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name' },
      { action: 'assert-destination', destination: 'phd:project', exists: true },
      {
        action: 'for-each',
        source: 'phones',
        wrapValues: true,
        instructions: [{ source: 'value', destination: 'profile', name: 'svc:attribute:telephone', multivalue: true, country: 'GB' }],
      },
      {
        action: 'for-each',
        source: 'projects',
        instructions: [
          { action: 'new', destination: 'phd:project' },
          { source: 'title', destination: 'phd:project', name: 'dc:attribute:title' },
          { action: 'if-exists', source: 'sup', then: [{ source: 'sup', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] }] },
        ],
      },
      {
        action: 'load',
        destination: 'profile',
        using: 'load:by-ref',
        otherwise: [{ action: 'new', destination: 'profile' }],
      },
    ],
  };
  assert.equal(validateControlFile(control, ctx), []);
});

valid('user sync, with a file key other than DEFAULT', () => {
  const control = {
    dataImportControlFileVersion: 0,
    model: 'svc:user-sync',
    files: { users: { read: 'json' } },
    instructions: [
      { source: 'uid', destination: 'user', name: 'username', filters: ['svc:to-lower-case'] },
      { source: 'orcid', destination: 'user:tags', name: 'orcid' },
      { action: 'for-each', source: 'groups', wrapValues: true, instructions: [{ source: 'value', destination: 'user', name: 'groups', multivalue: true }] },
    ],
  };
  assert.equal(validateControlFile(control, ctx), []);
});

valid('an auto model', () => {
  const control = withRoot({
    model: 'TYPE:svc:type:organisation',
    instructions: [{ action: 'new', destination: 'object' }, { source: 'name', destination: 'object', name: 'dc:attribute:title' }],
  });
  assert.equal(validateControlFile(control, ctx), []);
});

valid.run();

// --------------------------------------------------------------------------
// One case per message. `expected` is the whole list of messages.

interface Case {
  readonly title: string;
  readonly control: unknown;
  readonly expected: readonly string[];
}

const CASES: readonly Case[] = [
  // Version
  { title: 'not an object', control: 'hello', expected: ['Not a control file'] },
  { title: 'null', control: null, expected: ['Not a control file'] },
  { title: 'an array', control: [contractExample()], expected: ['Not a control file'] },
  { title: 'no version key', control: withRoot({ dataImportControlFileVersion: undefined }), expected: ['Not a control file'] },
  { title: 'version 1', control: withRoot({ dataImportControlFileVersion: 1 }), expected: ['Bad version of control file, should be 0'] },
  { title: 'version "0"', control: withRoot({ dataImportControlFileVersion: '0' }), expected: ['Bad version of control file, should be 0'] },
  // Model
  { title: 'no model', control: withRoot({ model: undefined }), expected: ['Control file does not specify model in the model property'] },
  { title: 'unknown model', control: withRoot({ model: 'svc:nope' }), expected: ['Model not implemented: svc:nope'] },
  { title: 'model not a string', control: withRoot({ model: ['svc:person'] }), expected: ['Model not implemented: svc:person'] },
  // Instructions
  {
    title: 'no instructions',
    control: withRoot({ instructions: undefined }),
    expected: ['Control file does not specify processing instructions in the instructions property'],
  },
  {
    title: 'instructions not an array',
    control: withRoot({ instructions: { source: 'a' } }),
    expected: ['Control file does not specify processing instructions in the instructions property'],
  },
  {
    title: 'instructions null',
    control: withRoot({ instructions: null }),
    expected: ['Control file does not specify processing instructions in the instructions property'],
  },
  { title: 'an instruction that is not an object', control: withInstructions(...PERSON_PREAMBLE, 'field'), expected: ['Instruction is not an object'] },
  { title: 'an instruction that is null', control: withInstructions(null), expected: ['Instruction is not an object'] },
  { title: 'an instruction that is an array', control: withInstructions([]), expected: ['Instruction is not an object'] },
  { title: 'unknown action', control: withInstructions({ action: 'frobnicate' }), expected: ['Unknown action in instruction: frobnicate'] },
  { title: 'unknown action named like an Object method', control: withInstructions({ action: 'constructor' }), expected: ['Unknown action in instruction: constructor'] },
  { title: 'set-attribute-group (docs only in Haplo) is an action', control: withInstructions({ action: 'set-attribute-group', source: 'a', destination: 'b', name: 'c' }), expected: ['Unknown destination in set-attribute-group: b'] },
  {
    title: 'action defaults to field',
    control: withInstructions({ source: 'a' }),
    expected: ['Expected property not found in field instruction: destination, name'],
  },
  {
    title: 'only the first bad instruction is reported',
    control: withInstructions({ action: 'nope1' }, { action: 'nope2' }),
    expected: ['Unknown action in instruction: nope1'],
  },
  // Nested lists
  {
    title: 'in then',
    control: withInstructions({ action: 'if-exists', source: 'a', then: [{ action: 'load', destination: 'profile' }] }),
    expected: ['Expected property not found in load instruction: using'],
  },
  {
    title: 'in else',
    control: withInstructions({ action: 'if-value-one-of', source: 'a', values: [], else: [{ action: 'x' }] }),
    expected: ['Unknown action in instruction: x'],
  },
  {
    title: 'in if-has-value then',
    control: withInstructions({ action: 'if-has-value', destination: 'profile', name: 'dc:attribute:title', then: [{ action: 'log-error' }] }),
    expected: ['Expected property not found in log-error instruction: message'],
  },
  {
    title: 'in within',
    control: withInstructions({ action: 'within', source: 'a', instructions: [{ action: 'new' }] }),
    expected: ['Expected property not found in new instruction: destination'],
  },
  {
    title: 'in for-each',
    control: withInstructions({ action: 'for-each', source: 'a', instructions: [{ action: 'abort-record' }] }),
    expected: ['Expected property not found in abort-record instruction: message'],
  },
  {
    title: "in load's otherwise",
    control: withInstructions({ action: 'load', destination: 'profile', using: 'load:by-ref', otherwise: [{ action: 'assert-destination' }] }),
    expected: ['Expected property not found in assert-destination instruction: destination, exists'],
  },
  {
    title: 'deeply nested',
    control: withInstructions({ action: 'within', source: 'a', instructions: [{ action: 'if-exists', source: 'b', else: [{ action: 'field-structured' }] }] }),
    expected: ['Expected property not found in field-structured instruction: structured, destination, name'],
  },
  {
    title: 'a nested list that is not an array',
    control: withInstructions({ action: 'if-exists', source: 'a', then: { action: 'log-error', message: 'm' } }),
    expected: ["'then' property of if-exists instruction is not an array"],
  },
  {
    title: 'a nested instructions string',
    control: withInstructions({ action: 'for-each', source: 'a', instructions: 'new' }),
    expected: ["'instructions' property of for-each instruction is not an array"],
  },
  // for-each overwrite check
  {
    title: 'assignment in for-each without new/load or multivalue',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'for-each', source: 'a', instructions: [{ source: 't', destination: 'profile', name: 'dc:attribute:title' }] }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  {
    title: 'set-value in for-each',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'for-each', source: 'a', instructions: [{ action: 'set-value', destination: 'profile', name: 'dc:attribute:title', value: 'x' }] }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  {
    title: 'field-structured in if-exists in for-each',
    control: withInstructions(...PERSON_PREAMBLE, {
      action: 'for-each',
      source: 'a',
      instructions: [{ action: 'if-exists', source: 'n', then: [{ action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name' }] }],
    }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  {
    title: 'a new outside the loop does not count',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'new', destination: 'phd:project' }, {
      action: 'for-each',
      source: 'a',
      instructions: [{ source: 't', destination: 'phd:project', name: 'dc:attribute:title' }],
    }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  {
    title: 'a new after the assignment does not count',
    control: withInstructions(...PERSON_PREAMBLE, {
      action: 'for-each',
      source: 'a',
      instructions: [{ source: 't', destination: 'phd:project', name: 'dc:attribute:title' }, { action: 'new', destination: 'phd:project' }],
    }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  {
    title: 'a nested for-each starts a fresh list',
    control: withInstructions(...PERSON_PREAMBLE, {
      action: 'for-each',
      source: 'a',
      instructions: [
        { action: 'new', destination: 'phd:project' },
        { action: 'for-each', source: 'b', instructions: [{ source: 't', destination: 'phd:project', name: 'dc:attribute:title' }] },
      ],
    }),
    expected: [OVERWRITE_IN_FOR_EACH],
  },
  // Filters
  {
    title: 'filters not an array',
    control: withInstructions({ source: 'u', destination: 'load:by-ref', name: 'ref', filters: 'svc:username-to-ref' }),
    expected: ["'filters' property is not an array"],
  },
  {
    title: 'unknown filter',
    control: withInstructions({ source: 'u', destination: 'load:by-ref', name: 'ref', filters: ['svc:to-lower-case', 'haplo:username-to-ref'] }),
    expected: ['Filter haplo:username-to-ref is not available.'],
  },
  {
    title: 'unknown filter on set-value',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'set-value', destination: 'profile', name: 'dc:attribute:title', value: 'x', filters: ['svc:nope'] }),
    expected: ['Filter svc:nope is not available.'],
  },
  {
    title: 'unknown filter inside for-each',
    control: withInstructions({ action: 'for-each', source: 'a', instructions: [{ source: 'u', destination: 'load:by-ref', name: 'ref', filters: ['nope'] }] }),
    expected: ['Filter nope is not available.'],
  },
  {
    title: 'mapInputValue not an object',
    control: withInstructions(...PERSON_PREAMBLE, { source: 't', destination: 'profile', name: 'dc:attribute:type', mapInputValue: 'x' }),
    expected: ["'mapInputValue' property is not an object"],
  },
  // Files
  { title: 'no files', control: withRoot({ files: undefined }), expected: ['Control file does not have files property'] },
  { title: 'files not an object', control: withRoot({ files: 'json' }), expected: ['Control file does not have files property'] },
  { title: 'no reader', control: withRoot({ files: { DEFAULT: { singleRecord: true } } }), expected: ['Reader not specified for file DEFAULT'] },
  { title: 'file spec not an object', control: withRoot({ files: { DEFAULT: 'json' } }), expected: ['Reader not specified for file DEFAULT'] },
  { title: 'unknown reader', control: withRoot({ files: { DEFAULT: { read: 'csv' } } }), expected: ['Unknown reader for file DEFAULT: csv'] },
  {
    title: 'as Haplo, the last bad file is reported',
    control: withRoot({ files: { a: {}, DEFAULT: { read: 'json' }, b: { read: 'yaml' } } }),
    expected: ['Unknown reader for file b: yaml'],
  },
  // Record processor
  {
    title: 'any record processor is unknown',
    control: withRoot({ recordProcessor: 'merge' }),
    expected: ['Unknown record processor specified in recordProcessor property: merge'],
  },
  // Mapping
  { title: 'mapping not an object', control: withRoot({ mapping: [] }), expected: ["'mapping' property is not an object"] },
  { title: 'mapping entry not an object', control: withRoot({ mapping: { m: 'x' } }), expected: ['Invalid mapping m: not an object'] },
  {
    title: 'mapping using',
    control: withRoot({ mapping: { m: { using: 'code', values: {} } } }),
    expected: ['Invalid mapping m: using must be "behaviour" or "title"'],
  },
  { title: 'mapping values', control: withRoot({ mapping: { m: { using: 'behaviour', value: {} } } }), expected: ['Invalid mapping m: values must be an object'] },
  {
    title: 'mapping values are strings',
    control: withRoot({ mapping: { m: { using: 'behaviour', values: { a: 1 } } } }),
    expected: ['Invalid mapping m: every value must be a string'],
  },
  {
    title: 'mapping types',
    control: withRoot({ mapping: { m: { using: 'title', types: 'svc:type:person', values: {} } } }),
    expected: ['Invalid mapping m: types must be an array of type codes'],
  },
  { title: 'title mapping without types', control: withRoot({ mapping: { m: { using: 'title', values: {} } } }), expected: ['Mapping m does not specify types'] },
  {
    title: 'unknown mapping',
    control: withInstructions(...PERSON_PREAMBLE, { source: 'd', destination: 'profile', name: 'svc:attribute:department', refMapping: 'departments' }),
    expected: ['Unknown mapping: departments'],
  },
  {
    title: 'the generator placeholder mapping',
    control: withRoot({
      mapping: { departments: { using: 'behaviour', values: {} } },
      instructions: [...PERSON_PREAMBLE, { source: 'd', destination: 'profile', name: 'svc:attribute:department', refMapping: 'TODO-DEFINE-MAPPING' }],
    }),
    expected: ['Unknown mapping: TODO-DEFINE-MAPPING'],
  },
  // Destinations and names (Haplo's build-time errors)
  {
    title: 'unknown destination in field',
    control: withInstructions({ source: 't', destination: 'project', name: 'dc:attribute:title' }),
    expected: ['Unknown destination in field: project'],
  },
  {
    title: 'unknown name in field',
    control: withInstructions(...PERSON_PREAMBLE, { source: 't', destination: 'profile', name: 'title' }),
    expected: ['Unknown name in field title for destination profile'],
  },
  {
    title: 'unknown name in set-value',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'set-value', destination: 'profile', name: 'svc:attribute:nope', value: 1 }),
    expected: ['Unknown name in set-value svc:attribute:nope for destination profile'],
  },
  {
    title: 'unknown destination in if-has-value',
    control: withInstructions({ action: 'if-has-value', destination: 'nope', name: 'x' }),
    expected: ['Unknown destination in if-has-value: nope'],
  },
  {
    title: 'invalid qualifier',
    control: withInstructions(...PERSON_PREAMBLE, { source: 'j', destination: 'profile', name: 'svc:attribute:job-title', qualifier: 'svc:qualifier:nope' }),
    expected: ["Invalid qualifier 'svc:qualifier:nope' in field profile/svc:attribute:job-title"],
  },
  {
    title: 'unknown structured destination',
    control: withInstructions(...PERSON_PREAMBLE, { action: 'field-structured', structured: 'value:name', destination: 'profile', name: 'svc:attribute:name' }),
    expected: ['Unknown structured value destination in field-structured: value:name'],
  },
  {
    title: 'datetime without dateFormat',
    control: withInstructions({ source: 'start', destination: 'phd:project', name: 'phd:attribute:start-date' }),
    expected: ['Date format not specified for input field start', "Couldn't create value transformer for field phd:project/phd:attribute:start-date"],
  },
  {
    title: 'unknown destination in remove-values',
    control: withInstructions({ action: 'remove-values', destination: 'nope', name: 'x' }),
    expected: ['Unknown destination in remove-values: nope'],
  },
  {
    title: 'unknown name in remove-values (Haplo leaves the name out)',
    control: withInstructions({ action: 'remove-values', destination: 'profile', name: 'x' }),
    expected: ['Unknown name in remove-values for destination profile'],
  },
  {
    title: 'unknown destination in assert-destination',
    control: withInstructions({ action: 'assert-destination', destination: 'nope', exists: true }),
    expected: ['Unknown destination in assert-destination: nope'],
  },
  {
    title: 'independent destination in assert-destination',
    control: withInstructions({ action: 'assert-destination', destination: 'profile', exists: false }),
    expected: ['Can only use dependent destinations in assert-destination: profile'],
  },
  { title: 'unknown destination in new', control: withInstructions({ action: 'new', destination: 'nope' }), expected: ['Unknown destination in new: nope'] },
  {
    title: 'unknown destination and using in load',
    control: withInstructions({ action: 'load', destination: 'nope', using: 'load:by-username' }),
    expected: ['Unknown destination in load: nope', 'Unknown destination in load: load:by-username'],
  },
  {
    title: 'destination errors in nested lists, each reported once',
    control: withInstructions(
      { source: 't', destination: 'nope', name: 'x' },
      { action: 'for-each', source: 'a', instructions: [{ action: 'new', destination: 'nope2' }, { source: 't', destination: 'nope2', name: 'x' }] },
      { action: 'if-exists', source: 'a', then: [{ source: 't', destination: 'nope', name: 'y' }] },
    ),
    expected: ['Unknown destination in field: nope', 'Unknown destination in new: nope2', 'Unknown destination in field: nope2'],
  },
  // Several checks at once: at most one message each, in Haplo's order
  {
    title: 'one message per check',
    control: { dataImportControlFileVersion: 2, model: 'svc:x', instructions: [{ action: 'a' }, { action: 'b' }], files: { DEFAULT: {} }, recordProcessor: 'p' },
    expected: [
      'Bad version of control file, should be 0',
      'Model not implemented: svc:x',
      'Unknown action in instruction: a',
      'Reader not specified for file DEFAULT',
      'Unknown record processor specified in recordProcessor property: p',
    ],
  },
  {
    title: 'an empty object',
    control: {},
    expected: [
      'Not a control file',
      'Control file does not specify model in the model property',
      'Control file does not specify processing instructions in the instructions property',
      'Control file does not have files property',
    ],
  },
  {
    title: 'destinations are not checked against an unknown model',
    control: withRoot({ model: 'svc:nope', instructions: [{ source: 't', destination: 'nope', name: 'x' }] }),
    expected: ['Model not implemented: svc:nope'],
  },
];

const messages = suite('validate control file: messages');

for (const c of CASES) {
  messages(c.title, () => {
    assert.equal(validateControlFile(c.control, ctx), c.expected);
  });
}

const EXPECTED_PROPERTIES: Readonly<Record<string, string>> = {
  field: 'source, destination, name',
  'field-structured': 'structured, destination, name',
  'set-value': 'destination, name, value',
  'remove-values': 'destination, name',
  'if-exists': 'source',
  'if-value-one-of': 'source',
  'if-has-value': 'destination, name',
  within: 'source',
  'for-each': 'source',
  'assert-destination': 'destination, exists',
  'abort-record': 'message',
  'log-error': 'message',
  new: 'destination',
  load: 'destination, using',
};

for (const [action, props] of Object.entries(EXPECTED_PROPERTIES)) {
  messages(`expected properties of ${action}`, () => {
    assert.equal(validateControlFile(withInstructions({ action }), ctx), [`Expected property not found in ${action} instruction: ${props}`]);
  });
}

messages('a property that is present but null counts as present (as Haplo\'s `in`)', () => {
  assert.equal(validateControlFile(withInstructions({ action: 'log-error', message: null }), ctx), []);
});

messages('overwrite check passes with multivalue, a load destination, or a new/load in the loop', () => {
  const loop = (...instructions: unknown[]) => withInstructions(...PERSON_PREAMBLE, { action: 'for-each', source: 'a', instructions });
  for (const control of [
    loop({ source: 't', destination: 'profile', name: 'svc:attribute:job-title', multivalue: true }),
    loop({ source: 'u', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] }),
    loop({ action: 'new', destination: 'phd:project' }, { source: 't', destination: 'phd:project', name: 'dc:attribute:title' }),
    loop({ action: 'load', destination: 'profile', using: 'load:by-ref' }, { source: 't', destination: 'profile', name: 'dc:attribute:title' }),
    loop(
      { action: 'new', destination: 'phd:project' },
      { action: 'within', source: 'w', instructions: [{ action: 'set-value', destination: 'phd:project', name: 'dc:attribute:title', value: 'x' }] },
    ),
    // Outside a for-each there is no such check.
    withInstructions(...PERSON_PREAMBLE, { action: 'if-exists', source: 'a', then: [{ source: 't', destination: 'profile', name: 'dc:attribute:title' }] }),
  ]) {
    assert.equal(validateControlFile(control, ctx), []);
  }
});

messages.run();
