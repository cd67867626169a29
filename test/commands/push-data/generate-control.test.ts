import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ControlFile } from '../../../src/domain/control-file.ts';
import { describeModel, generateControlFile, type GeneratorSelection } from '../../../src/commands/push-data/generate-control.ts';
import { loadModels } from '../../../src/app/load-models.ts';
import type { ModelDef } from '../../../src/domain/model.ts';
import { readerNames } from '../../../src/commands/push-data/readers.ts';
import { validateControlFile } from '../../../src/commands/push-data/validate-control.ts';
import { configFile } from '../../../src/config/paths.ts';
import { loadSchema } from '../../../src/app/load-schema.ts';

const schema = loadSchema(configFile('schema.json'));
const models = loadModels(configFile('models.json'), schema);
const model = (name: string): ModelDef => {
  const m = models.get(name);
  if (!m) throw new Error(`no model ${name}`);
  return m;
};

const generate = (modelName: string, include: readonly GeneratorSelection[]): ControlFile => {
  const result = generateControlFile(model(modelName), include);
  if (!('control' in result)) throw new Error(`generator refused: ${result.errors.join('; ')}`);
  return result.control;
};

const PERSON_PREAMBLE = [
  { source: 'TODO-USERNAME', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
  { action: 'load', destination: 'profile', using: 'load:by-ref' },
];

const gen = suite('generate control file');

gen('svc:person: preamble loads the profile; a dependent destination needs no new', () => {
  assert.equal(generate('svc:person', [{ destination: 'phd:project', name: 'dc:attribute:title' }]), {
    dataImportControlFileVersion: 0,
    model: 'svc:person',
    files: { DEFAULT: { read: 'json' } },
    instructions: [...PERSON_PREAMBLE, { source: 'TODO-TITLE', destination: 'phd:project', name: 'dc:attribute:title' }],
  });
});

gen('svc:person with nothing selected is the preamble only', () => {
  assert.equal(generate('svc:person', []).instructions, PERSON_PREAMBLE);
});

gen('the contract workflow: generate, then set singleRecord and rename sources, gives the contract example', () => {
  const control = generate('svc:person', [{ destination: 'phd:project', name: 'dc:attribute:title' }]);
  const edited = {
    ...control,
    files: { DEFAULT: { read: 'json', singleRecord: true } },
    instructions: control.instructions.map((i) => ({ ...i, ...(i.source === 'TODO-USERNAME' ? { source: 'username' } : i.source === 'TODO-TITLE' ? { source: 'title' } : {}) })),
  };
  assert.equal(edited, {
    dataImportControlFileVersion: 0,
    model: 'svc:person',
    files: { DEFAULT: { read: 'json', singleRecord: true } },
    instructions: [
      { source: 'username', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
      { action: 'load', destination: 'profile', using: 'load:by-ref' },
      { source: 'title', destination: 'phd:project', name: 'dc:attribute:title' },
    ],
  });
});

gen('auto model: one new for the destination, then names in the destination\'s order', () => {
  const control = generate('TYPE:svc:type:person', [
    { destination: 'object', name: 'svc:attribute:job-title' },
    { destination: 'object', name: 'dc:attribute:title' },
  ]);
  assert.equal(control.instructions, [
    { action: 'new', destination: 'object' },
    { source: 'TODO-TITLE', destination: 'object', name: 'dc:attribute:title' },
    { source: 'TODO-JOB-TITLE', destination: 'object', name: 'svc:attribute:job-title' },
  ]);
  assert.equal(control.files, { DEFAULT: { read: 'json' } });
});

gen('additions by type', () => {
  const control = generate('TYPE:phd:type:project', [
    { destination: 'object', name: 'dc:attribute:type' },
    { destination: 'object', name: 'phd:attribute:researcher' },
    { destination: 'object', name: 'phd:attribute:start-date' },
  ]);
  const person = generate('TYPE:svc:type:person', [
    { destination: 'object', name: 'svc:attribute:telephone' },
    { destination: 'object', name: 'svc:attribute:website' },
  ]);
  assert.equal(control.instructions.slice(1), [
    { source: 'TODO-TYPE', destination: 'object', name: 'dc:attribute:type', mapInputValue: { 'TODO-N1': 'TODO-type:code' }, mapInputValueDefault: 'TODO-default-type:code' },
    { source: 'TODO-RESEARCHER', destination: 'object', name: 'phd:attribute:researcher', refMapping: 'TODO-DEFINE-MAPPING' },
    { source: 'TODO-START-DATE', destination: 'object', name: 'phd:attribute:start-date', dateFormat: 'yyyy-MM-dd' },
  ]);
  assert.equal(person.instructions.slice(1), [
    { source: 'TODO-TELEPHONE', destination: 'object', name: 'svc:attribute:telephone', country: 'GB' },
    { source: 'TODO-WEBSITE', destination: 'object', name: 'svc:attribute:website', filters: ['svc:fix-up-url'] },
  ]);
  assert.is(control.mapping, undefined);
});

gen('person-name and postal-address: a field per part into the value pseudo-destination, then field-structured', () => {
  const control = generate('TYPE:svc:type:person', [
    { destination: 'object', name: 'svc:attribute:name' },
    { destination: 'object', name: 'svc:attribute:address' },
  ]);
  assert.equal(control.instructions.slice(1), [
    { source: 'TODO-NAME-TITLE', destination: 'value:person-name', name: 'title' },
    { source: 'TODO-NAME-FIRST', destination: 'value:person-name', name: 'first' },
    { source: 'TODO-NAME-MIDDLE', destination: 'value:person-name', name: 'middle' },
    { source: 'TODO-NAME-LAST', destination: 'value:person-name', name: 'last' },
    { source: 'TODO-NAME-SUFFIX', destination: 'value:person-name', name: 'suffix' },
    { action: 'field-structured', structured: 'value:person-name', destination: 'object', name: 'svc:attribute:name' },
    { source: 'TODO-ADDRESS-STREET1', destination: 'value:postal-address', name: 'street1' },
    { source: 'TODO-ADDRESS-STREET2', destination: 'value:postal-address', name: 'street2' },
    { source: 'TODO-ADDRESS-CITY', destination: 'value:postal-address', name: 'city' },
    { source: 'TODO-ADDRESS-COUNTY', destination: 'value:postal-address', name: 'county' },
    { source: 'TODO-ADDRESS-POSTCODE', destination: 'value:postal-address', name: 'postcode' },
    { source: 'TODO-ADDRESS-COUNTRY', destination: 'value:postal-address', name: 'country' },
    { action: 'field-structured', structured: 'value:postal-address', destination: 'object', name: 'svc:attribute:address' },
  ]);
});

gen('multivalue: remove-values right before the instruction, which gets multivalue: true', () => {
  const control = generate('TYPE:svc:type:person', [
    { destination: 'object', name: 'svc:attribute:job-title', multivalue: true },
    { destination: 'object', name: 'svc:attribute:name', multivalue: true },
  ]);
  assert.equal(control.instructions.slice(1), [
    { source: 'TODO-NAME-TITLE', destination: 'value:person-name', name: 'title' },
    { source: 'TODO-NAME-FIRST', destination: 'value:person-name', name: 'first' },
    { source: 'TODO-NAME-MIDDLE', destination: 'value:person-name', name: 'middle' },
    { source: 'TODO-NAME-LAST', destination: 'value:person-name', name: 'last' },
    { source: 'TODO-NAME-SUFFIX', destination: 'value:person-name', name: 'suffix' },
    { action: 'remove-values', destination: 'object', name: 'svc:attribute:name' },
    { action: 'field-structured', structured: 'value:person-name', destination: 'object', name: 'svc:attribute:name', multivalue: true },
    { action: 'remove-values', destination: 'object', name: 'svc:attribute:job-title' },
    { source: 'TODO-JOB-TITLE', destination: 'object', name: 'svc:attribute:job-title', multivalue: true },
  ]);
});

gen('user sync: no new or load, file key TODO; multivalue only for multi-value names', () => {
  const control = generate('svc:user-sync', [
    { destination: 'user', name: 'username', multivalue: true },
    { destination: 'user', name: 'groups', multivalue: true },
    { destination: 'user:tags', name: 'staffNumber' },
    { destination: 'profile', name: 'svc:attribute:orcid' },
  ]);
  assert.equal(control, {
    dataImportControlFileVersion: 0,
    model: 'svc:user-sync',
    files: { TODO: { read: 'json' } },
    instructions: [
      { source: 'TODO-USERNAME', destination: 'user', name: 'username' },
      { action: 'remove-values', destination: 'user', name: 'groups' },
      { source: 'TODO-GROUPS', destination: 'user', name: 'groups', multivalue: true },
      { source: 'TODO-ORCID', destination: 'profile', name: 'svc:attribute:orcid' },
      { source: 'TODO-STAFFNUMBER', destination: 'user:tags', name: 'staffNumber' },
    ],
  });
});

gen('destinations come in display order, whatever the selection order', () => {
  const control = generate('svc:person', [
    { destination: 'phd:project', name: 'dc:attribute:title' },
    { destination: 'profile', name: 'svc:attribute:orcid' },
  ]);
  assert.equal(control.instructions.slice(2).map((i) => i.destination), ['profile', 'phd:project']);
});

gen('excluded (pseudo) destinations and unknown destinations or names are refused', () => {
  assert.equal(generateControlFile(model('svc:person'), [{ destination: 'load:by-ref', name: 'ref' }]), {
    errors: ['Destination load:by-ref cannot be used when generating a control file'],
  });
  assert.equal(
    generateControlFile(model('svc:person'), [
      { destination: 'value:person-name', name: 'last' },
      { destination: 'nope', name: 'x' },
      { destination: 'profile', name: 'svc:attribute:nope' },
      { destination: 'profile', name: 'dc:attribute:title' },
    ]),
    {
      errors: [
        'Destination value:person-name cannot be used when generating a control file',
        'Unknown destination in model svc:person: nope',
        'Unknown name svc:attribute:nope for destination profile',
      ],
    },
  );
});

gen('generated files pass validation, apart from the TODO mapping', () => {
  const ctx = {
    models,
    filters: ['svc:username-to-ref', 'svc:fix-up-url'],
    readers: readerNames,
    qualifiers: [...schema.qualifiers.keys()],
  };
  for (const m of models.list()) {
    const include = m.destinations
      .filter((d) => !d.excludeFromGenerator)
      .flatMap((d) => d.names.map((n) => ({ destination: d.name, name: n.name, multivalue: true })));
    const control = generate(m.name, include);
    const expected = include.some((s) => m.destinations.find((d) => d.name === s.destination)?.names.find((n) => n.name === s.name)?.type === 'ref')
      ? ['Unknown mapping: TODO-DEFINE-MAPPING']
      : [];
    assert.equal(validateControlFile(control, ctx), expected, m.name);
  }
});

gen.run();

// --------------------------------------------------------------------------

const explorer = suite('describe model');

explorer('svc:person in display order, with badges, snippets and names', () => {
  const d = describeModel(model('svc:person'));
  assert.is(d.name, 'svc:person');
  assert.is(d.title, 'People and associated information');
  assert.is(d.description, model('svc:person').description);
  assert.equal(d.destinations.map((x) => x.name), [
    'profile', 'phd:project', 'load:by-ref', 'value:person-name', 'value:postal-address', 'phd:project:attribute-group:phd:attribute:funding',
  ]);
  const [profile, project, loadByRef] = d.destinations;
  assert.equal({ ...profile!, names: undefined }, {
    name: 'profile', title: 'Profile', kind: 'object', optional: false, pseudo: false, snippet: { destination: 'profile' }, names: undefined,
  });
  assert.is(project!.dependsOn, 'profile');
  assert.is(project!.optional, true);
  assert.ok(!('dependsOn' in profile!));
  // As Haplo's model: the profile's title is a person-name.
  assert.equal(profile!.names[0], { name: 'dc:attribute:title', type: 'person-name', multivalue: true, required: true, description: "Person's name" });
  assert.equal(profile!.names.find((n) => n.name === 'svc:attribute:department'), {
    name: 'svc:attribute:department', type: 'ref', multivalue: true, required: false, description: 'Department', refTypes: ['svc:type:department'],
  });
  assert.equal(loadByRef, {
    name: 'load:by-ref', title: 'Load by ref', kind: 'dictionary', optional: true, pseudo: true, snippet: { destination: 'load:by-ref' },
    names: [{ name: 'ref', type: 'ref', multivalue: false, required: false, description: 'Ref of object' }],
  });
});

explorer('is plain JSON', () => {
  for (const m of models.list()) {
    const d = describeModel(m);
    assert.equal(JSON.parse(JSON.stringify(d)), d, m.name);
  }
});

explorer('user sync dictionaries', () => {
  const d = describeModel(model('svc:user-sync'));
  assert.equal(d.destinations.slice(0, 3).map((x) => [x.name, x.kind, x.dependsOn ?? null, x.optional]), [
    ['user', 'dictionary', null, false],
    ['profile', 'object', 'user', false],
    ['user:tags', 'dictionary', 'user', true],
  ]);
  assert.equal(d.destinations[0]!.names.find((n) => n.name === 'groups'), {
    name: 'groups', type: 'text', multivalue: true, required: false, description: 'Group codes the user belongs to',
  });
});

explorer.run();
