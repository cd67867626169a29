/**
 * The control-file instructions end to end (haplo-behaviour.md §3.5-§3.10): one case per
 * instruction and rule, each through its own REST API on one real service, results checked in the
 * push-data response and in the stored objects (admin object API).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createObject, createUser } from '../../support/fixtures.ts';
import { adminObject, attr, control, defineApi, expectFailure, expectSuccess, head, modelsWith, plain, savedRefs, type PushBody } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const P = 'TYPE:phd:type:project';
const TITLE = 'dc:attribute:title';
const NEW = { action: 'new', destination: 'object' };
const MANY = { read: 'json' };
const HINT = 'To set defaults for dc:attribute:title, see example of if-has-value instruction at https://docs.haplo.org/import/control/instruction/if-has-value';

/** A field instruction into the auto model's `object` destination. */
const to = (source: string, name: string, extra: Record<string, unknown> = {}) => ({ source, destination: 'object', name, ...extra });
const setValue = (name: string, value: unknown, extra: Record<string, unknown> = {}) => ({ action: 'set-value', destination: 'object', name, value, ...extra });
/** Loads `profile` (svc:person) from the username in `source`. */
const loadProfile = (source = 'username') => [
  { source, destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
  { action: 'load', destination: 'profile', using: 'load:by-ref' },
];
/** Loads `object` from the ref string in `source`. */
const loadByRef = (source = 'ref', otherwise?: unknown[]) => [
  { source, destination: 'load:by-ref', name: 'ref', filters: ['svc:string-to-ref'] },
  { action: 'load', destination: 'object', using: 'load:by-ref', ...(otherwise ? { otherwise } : {}) },
];

/** A test model with a dependency chain longer than the depth limit, and a dependent that cannot be provided. */
const CHAIN = 17;
const DEEP_MODEL = {
  name: 'test:deep',
  title: 'Deep dependencies',
  description: 'A chain of dependent destinations, for the dependency depth limit.',
  destinations: [
    { name: 'root', kind: 'object', objectType: 'phd:type:project' },
    { name: 'orphan', kind: 'object', objectType: 'phd:type:project', depends: 'root', optional: true },
    ...Array.from({ length: CHAIN }, (_, i) => ({
      name: `d${i + 1}`,
      kind: 'dictionary',
      depends: i === 0 ? 'root' : `d${i}`,
      optional: true,
      dictionaryNames: { v: { description: 'A value' } },
    })),
  ],
};

/** A destination over several types (annotatedTypes): its Names are those of every type. */
const ANNOTATED_MODEL = {
  name: 'test:annotated',
  title: 'Annotated types',
  description: 'One destination for people and projects.',
  destinations: [{ name: 'item', kind: 'object', annotatedTypes: ['svc:type:person', 'phd:type:project'] }],
};

interface Ctx {
  svc: TestService;
  removeModels: () => void;
  ada: { username: string; ref: string };
  physics: string;
  chemistry: string;
  biology: string;
}
const test = suite<Ctx>('Push data: control-file instructions', {} as Ctx);

test.before(async (ctx) => {
  const models = modelsWith([DEEP_MODEL, ANNOTATED_MODEL]);
  ctx.removeModels = models.remove;
  ctx.svc = await startTestService({ SVC_MODELS: models.file });
  ctx.ada = await createUser(ctx.svc, { username: 'ada', first: 'Ada', last: 'Lovelace', email: 'ada@example.com' });
  const department = async (title: unknown[], behaviour?: string) =>
    (await createObject(ctx.svc, 'svc:type:department', { [TITLE]: title, ...(behaviour ? { 'svc:attribute:configured-behaviour': [{ value: behaviour }] } : {}) })).ref;
  ctx.physics = await department(['Physics'], 'test:department:physics');
  ctx.chemistry = await department(['Chemistry'], 'test:department:chemistry');
  ctx.biology = await department(['Biology', { value: 'Life Sciences', qualifier: 'svc:qualifier:alternative' }]);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
  ctx.removeModels?.();
});

const obj = (ctx: Ctx, ref: string | undefined) => {
  assert.ok(ref, 'a saved object');
  return adminObject(ctx.svc, ref!);
};
/** The object saved by a record (the i-th save of that record). */
const saved = (ctx: Ctx, body: PushBody, record = 0, i = 0) => obj(ctx, body.actions[record]?.changed[i]?.ref);
const titles = async (ctx: Ctx, body: PushBody) => Promise.all(body.actions.map(async (_, i) => plain(await saved(ctx, body, i), TITLE)[0]));
const withQualifiers = (object: unknown, code: string) => attr(object, code).map((v: { value: unknown; qualifier?: string }) => [v.value, v.qualifier ?? null]);
const project = (ctx: Ctx, title: string, extra: Record<string, unknown> = {}) => createObject(ctx.svc, 'phd:type:project', { [TITLE]: [title], ...extra }).then((o) => o.ref);

// --------------------------------------------------------------------------------------------
// One case per instruction

const cases: { name: string; run: (ctx: Ctx) => Promise<void> }[] = [
  {
    name: 'field: copies a top-level source; falsy values are skipped except 0; numbers become text',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [
        NEW,
        to('title', TITLE),
        to('exams', 'phd:attribute:exams-done'),
        to('notes', 'phd:attribute:notes'),
        to('funded', 'phd:attribute:funded'),
        to('progress', 'phd:attribute:progress'),
        to('deep.isbn', 'phd:attribute:isbn'),
      ]));
      const first = expectSuccess(await api.push({ title: 'Field', exams: 0, notes: '', funded: false, progress: null, deep: { isbn: '978-3-16-148410-0' } }));
      const o = await saved(ctx, first);
      assert.equal(plain(o, TITLE), ['Field']);
      assert.equal(attr(o, 'phd:attribute:exams-done').map((v) => [v.type, v.value]), [['integer', '0']], '0 is a value');
      for (const code of ['phd:attribute:notes', 'phd:attribute:funded', 'phd:attribute:progress']) assert.equal(attr(o, code), [], `${code}: falsy skipped`);
      assert.equal(attr(o, 'phd:attribute:isbn'), [], 'sources are top-level keys, not paths');

      const second = expectSuccess(await api.push({ title: 12, exams: '7', notes: 'Line one' }));
      const o2 = await saved(ctx, second);
      assert.equal(plain(o2, TITLE), ['12']);
      assert.equal(plain(o2, 'phd:attribute:exams-done'), ['7']);
      assert.equal(plain(o2, 'phd:attribute:notes'), ['Line one']);
    },
  },
  {
    name: 'field-structured: value:person-name and value:postal-address into svc:attribute:name and svc:attribute:address',
    async run(ctx) {
      const user = await createUser(ctx.svc, { username: 'structured', first: 'Struc', last: 'Tured' });
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { source: 'title', destination: 'value:person-name', name: 'title' },
        { source: 'first', destination: 'value:person-name', name: 'first' },
        { source: 'last', destination: 'value:person-name', name: 'last' },
        { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name' },
        // The pseudo destination was cleared: this adds nothing.
        { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name', multivalue: true },
        { source: 'street', destination: 'value:postal-address', name: 'street1' },
        { source: 'city', destination: 'value:postal-address', name: 'city' },
        { source: 'postcode', destination: 'value:postal-address', name: 'postcode' },
        { source: 'country', destination: 'value:postal-address', name: 'country' },
        { action: 'field-structured', structured: 'value:postal-address', destination: 'profile', name: 'svc:attribute:address' },
      ]));
      const first = expectSuccess(await api.push({ username: 'structured', title: 'Countess', first: 'Augusta Ada', last: 'King', street: '12 St James Sq', city: 'London', postcode: 'SW1Y 4JH', country: 'GB' }));
      assert.equal(savedRefs(first), [user.ref]);
      const profile = await obj(ctx, user.ref);
      assert.equal(attr(profile, 'svc:attribute:name').map((v) => v.value), [{ title: 'Countess', first: 'Augusta Ada', last: 'King', culture: 'western' }]);
      assert.equal(attr(profile, 'svc:attribute:address').map((v) => v.value), [{ street1: '12 St James Sq', city: 'London', postcode: 'SW1Y 4JH', country: 'GB' }]);

      // No `last`: no name. No country: an error, no address. Neither aborts the record.
      const second = await api.push({ username: 'structured', first: 'Only first', city: 'Paris' });
      expectSuccess(second);
      assert.equal(second.body.errors, ['Missing or invalid country code in postal address, must be two letter ISO code: {"city":"Paris"} (record 0)']);
      assert.equal(second.body.actions[0]!.changed, [], 'the profile did not change');
      const after = await obj(ctx, user.ref);
      assert.equal(attr(after, 'svc:attribute:name'), attr(profile, 'svc:attribute:name'));
      assert.equal(attr(after, 'svc:attribute:address'), attr(profile, 'svc:attribute:address'));
    },
  },
  {
    name: 'person-name titles: svc:person makes the profile title a person-name; value:person-name + field-structured titles the profile',
    async run(ctx) {
      const user = await createUser(ctx.svc, { username: 'jsmith', first: 'J', last: 'S' });
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { source: 'first', destination: 'value:person-name', name: 'first' },
        { source: 'last', destination: 'value:person-name', name: 'last' },
        { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: TITLE },
      ]));
      const reply = expectSuccess(await api.push({ username: 'jsmith', first: 'Jane', last: 'Smith' }));
      assert.equal(savedRefs(reply), [user.ref]);
      const profile = await obj(ctx, user.ref);
      assert.is(profile.title, 'Jane Smith');
      assert.equal(plain(profile, TITLE), ['Jane Smith']);

      const created = await defineApi(ctx.svc, control('svc:person', [
        { action: 'new', destination: 'profile' },
        { source: 'last', destination: 'value:person-name', name: 'last' },
        { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: TITLE },
      ]));
      const made = expectSuccess(await created.push({ last: 'Hopper' }));
      assert.is((await saved(ctx, made)).title, 'Hopper');
      // A plain string is no person name (as Haplo): nothing is set, and the title is missing.
      const plainText = await defineApi(ctx.svc, control('svc:person', [{ action: 'new', destination: 'profile' }, { source: 'name', destination: 'profile', name: TITLE }]));
      assert.equal(expectFailure(await plainText.push({ name: 'Just text' })).errors[0], 'dc:attribute:title is not set in object profile (record 0)');
    },
  },
  {
    name: 'annotatedTypes: a destination offering the Names of several types accepts a value of any of them on save',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control('test:annotated', [
        { action: 'new', destination: 'item' },
        { source: 'type', destination: 'item', name: 'dc:attribute:type' },
        { source: 'title', destination: 'item', name: TITLE },
        { source: 'job', destination: 'item', name: 'svc:attribute:job-title' },
        { source: 'notes', destination: 'item', name: 'phd:attribute:notes' },
      ], {}, MANY));
      const reply = await api.push([
        { type: 'phd:type:project', title: 'A project', notes: 'Project notes', job: 'A job title' },
        { type: 'svc:type:person', title: 'A person', job: 'Lecturer', notes: 'Person notes' },
      ]);
      expectSuccess(reply);
      const [project, person] = [await saved(ctx, reply.body, 0), await saved(ctx, reply.body, 1)];
      assert.is(project.type.code, 'phd:type:project');
      assert.equal(plain(project, 'phd:attribute:notes'), ['Project notes']);
      assert.equal(plain(project, 'svc:attribute:job-title'), ['A job title']);
      assert.is(person.type.code, 'svc:type:person');
      assert.equal(plain(person, 'svc:attribute:job-title'), ['Lecturer']);
      assert.equal(plain(person, 'phd:attribute:notes'), ['Person notes']);
    },
  },
  {
    name: 'set-value: constants through the conversion (object-type, configuration-name, integer), converted once per batch',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [
        NEW,
        to('title', TITLE),
        setValue('phd:attribute:funded', 'scheme-a'),
        setValue('dc:attribute:type', 'phd:type:project-part-time'),
        setValue('phd:attribute:exams-done', '3'),
        setValue('phd:attribute:progress', 'not a number'),
      ], {}, MANY));
      const reply = expectSuccess(await api.push([{ title: 'S1' }, { title: 'S2' }]));
      assert.is(reply.applied, 2);
      assert.equal(reply.errors, ['Invalid number for set value object/phd:attribute:progress: not a number (record 0)'], 'the constant is converted (and reported) once');
      for (const i of [0, 1]) {
        const o = await saved(ctx, reply, i);
        assert.is(o.type.code, 'phd:type:project-part-time');
        assert.equal(plain(o, 'phd:attribute:funded'), ['scheme-a']);
        assert.equal(plain(o, 'phd:attribute:exams-done'), ['3']);
        assert.equal(attr(o, 'phd:attribute:progress'), []);
      }
    },
  },
  {
    name: 'remove-values: removes every value (all qualifiers) before multivalue appends',
    async run(ctx) {
      const user = await createUser(ctx.svc, { username: 'remover', first: 'Re', last: 'Mover' });
      const patched = await call(ctx.svc, `/api/admin/objects/${user.ref}`, {
        method: 'PATCH',
        body: { attributes: { 'svc:attribute:job-title': ['Old plain', { value: 'Old work', qualifier: 'svc:qualifier:work' }] } },
      });
      assert.is(patched.status, 200, JSON.stringify(patched.body));
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { action: 'remove-values', destination: 'profile', name: 'svc:attribute:job-title' },
        { action: 'for-each', source: 'jobs', wrapValues: true, instructions: [{ source: 'value', destination: 'profile', name: 'svc:attribute:job-title', multivalue: true }] },
      ]));
      expectSuccess(await api.push({ username: 'remover', jobs: ['New 1', 'New 2'] }));
      assert.equal(withQualifiers(await obj(ctx, user.ref), 'svc:attribute:job-title'), [['New 1', null], ['New 2', null]]);
      expectSuccess(await api.push({ username: 'remover', jobs: [] }));
      assert.equal(attr(await obj(ctx, user.ref), 'svc:attribute:job-title'), []);
      const again = expectSuccess(await api.push({ username: 'remover' }));
      assert.equal(again.actions[0]!.changed, [], 'nothing left to remove: not saved');
    },
  },
  {
    name: 'if-exists: then when the source is present and truthy or 0, else otherwise',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [NEW, { action: 'if-exists', source: 'flag', then: [setValue(TITLE, 'then')], else: [setValue(TITLE, 'else')] }], {}, MANY));
      const table: [unknown, string][] = [
        [{ flag: 'x' }, 'then'],
        [{ flag: 0 }, 'then'],
        [{ flag: [] }, 'then'],
        [{ flag: '' }, 'else'],
        [{ flag: false }, 'else'],
        [{ flag: null }, 'else'],
        [{}, 'else'],
      ];
      const reply = expectSuccess(await api.push(table.map(([r]) => r)));
      assert.equal(await titles(ctx, reply), table.map(([, t]) => t));
    },
  },
  {
    name: 'if-value-one-of: strict (type-sensitive) equality; values defaults to []',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [NEW, { action: 'if-value-one-of', source: 'v', values: ['a', 1, true], then: [setValue(TITLE, 'then')], else: [setValue(TITLE, 'else')] }], {}, MANY));
      const table: [unknown, string][] = [
        [{ v: 'a' }, 'then'],
        [{ v: 1 }, 'then'],
        [{ v: true }, 'then'],
        [{ v: '1' }, 'else'],
        [{ v: 'true' }, 'else'],
        [{ v: 'A' }, 'else'],
        [{}, 'else'],
      ];
      const reply = expectSuccess(await api.push(table.map(([r]) => r)));
      assert.equal(await titles(ctx, reply), table.map(([, t]) => t));

      const noValues = await defineApi(ctx.svc, control(P, [NEW, { action: 'if-value-one-of', source: 'v', then: [setValue(TITLE, 'then')], else: [setValue(TITLE, 'else')] }]));
      assert.equal(await titles(ctx, expectSuccess(await noValues.push({ v: 'a' }))), ['else']);
    },
  },
  {
    name: 'if-has-value: tests the target, for defaults',
    async run(ctx) {
      const existing = await project(ctx, 'Existing', { 'phd:attribute:notes': [{ value: 'Has notes' }] });
      const api = await defineApi(ctx.svc, control(P, [
        ...loadByRef('ref', [NEW]),
        to('title', TITLE),
        { action: 'if-has-value', destination: 'object', name: TITLE, else: [setValue(TITLE, 'Default title')] },
        { action: 'if-has-value', destination: 'object', name: 'phd:attribute:notes', then: [setValue('phd:attribute:progress', 1)] },
      ], {}, MANY));
      const reply = expectSuccess(await api.push([{}, { title: 'Given' }, { ref: existing }]));
      assert.equal(await titles(ctx, reply), ['Default title', 'Given', 'Existing']);
      assert.equal(attr(await saved(ctx, reply, 0), 'phd:attribute:progress'), [], 'a new object has no notes');
      assert.is(reply.actions[2]!.changed[0]!.ref, existing);
      assert.equal(plain(await obj(ctx, existing), 'phd:attribute:progress'), ['1']);
    },
  },
  {
    name: 'within: a nested object becomes the context; a non-object is skipped',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [
        NEW,
        to('title', TITLE),
        { action: 'within', source: 'details', instructions: [to('notes', 'phd:attribute:notes'), { action: 'within', source: 'deeper', instructions: [to('progress', 'phd:attribute:progress')] }] },
      ]));
      const o = await saved(ctx, expectSuccess(await api.push({ title: 'Within', notes: 'outside', progress: '9', details: { notes: 'inside', deeper: { progress: '1.5' } } })));
      assert.equal(plain(o, 'phd:attribute:notes'), ['inside']);
      assert.equal(plain(o, 'phd:attribute:progress'), ['1.5']);
      const o2 = await saved(ctx, expectSuccess(await api.push({ title: 'Within 2', notes: 'outside', details: 'not an object' })));
      assert.equal(attr(o2, 'phd:attribute:notes'), []);
    },
  },
  {
    name: 'for-each: arrays, objects (their values) and wrapValues',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [{ action: 'for-each', source: 'projects', instructions: [NEW, to('title', TITLE), to('notes', 'phd:attribute:notes')] }]));
      const fromArray = expectSuccess(await api.push({ projects: [{ title: 'P1', notes: 'n1' }, { title: 'P2' }, 'not an object'] }));
      assert.equal(fromArray.actions[0]!.changed.map((c) => c.new), [true, true]);
      assert.equal(plain(await saved(ctx, fromArray, 0, 0), TITLE), ['P1']);
      assert.equal(plain(await saved(ctx, fromArray, 0, 0), 'phd:attribute:notes'), ['n1']);
      assert.equal(plain(await saved(ctx, fromArray, 0, 1), TITLE), ['P2']);
      const fromObject = expectSuccess(await api.push({ projects: { x: { title: 'O1' }, y: { title: 'O2' } } }));
      assert.equal([plain(await saved(ctx, fromObject, 0, 0), TITLE), plain(await saved(ctx, fromObject, 0, 1), TITLE)], [['O1'], ['O2']]);

      const wrapped = await defineApi(ctx.svc, control(P, [
        NEW,
        to('title', TITLE),
        { action: 'for-each', source: 'notes', wrapValues: true, instructions: [{ source: 'value', destination: 'object', name: 'phd:attribute:notes', multivalue: true }] },
        { action: 'for-each', source: 'notes', instructions: [{ source: 'value', destination: 'object', name: 'phd:attribute:isbn', multivalue: true }] },
      ]));
      const o = await saved(ctx, expectSuccess(await wrapped.push({ title: 'Wrapped', notes: ['n1', '', 'n2'] })));
      assert.equal(plain(o, 'phd:attribute:notes'), ['n1', 'n2']);
      assert.equal(attr(o, 'phd:attribute:isbn'), [], 'scalars are not contexts without wrapValues');
    },
  },
  {
    name: 'new: several objects from one record (auto model TYPE:phd:type:project)',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [NEW, to('first', TITLE), NEW, to('second', TITLE)]));
      const reply = expectSuccess(await api.push({ first: 'One', second: 'Two' }));
      const changed = reply.actions[0]!.changed;
      assert.equal(changed.map((c) => [c.destination, c.new]), [['object', true], ['object', true]]);
      assert.is.not(changed[0]!.ref, changed[1]!.ref);
      for (const [i, title] of [[0, 'One'], [1, 'Two']] as const) {
        const o = await saved(ctx, reply, 0, i);
        assert.equal(plain(o, TITLE), [title]);
        assert.is(o.type.code, 'phd:type:project');
      }
    },
  },
  {
    name: 'new on a dependent destination: an additional dependent, linked to its parent like the first',
    async run(ctx) {
      const user = await createUser(ctx.svc, { username: 'two-projects', first: 'Two', last: 'Projects' });
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { source: 'title', destination: 'phd:project', name: TITLE },
        { action: 'if-exists', source: 'another', then: [{ action: 'new', destination: 'phd:project' }, { source: 'another', destination: 'phd:project', name: TITLE }] },
      ]));
      const reply = expectSuccess(await api.push({ username: 'two-projects', title: 'First', another: 'Second' }));
      const changed = reply.actions[0]!.changed;
      assert.equal(changed.map((c) => [c.destination, c.new]), [['phd:project', true], ['phd:project', true]]);
      for (const i of [0, 1]) assert.equal(plain(await saved(ctx, reply, 0, i), 'phd:attribute:researcher'), [user.ref], `project ${i} is linked to the profile`);
      const update = expectSuccess(await api.push({ username: 'two-projects', title: 'First, updated' }));
      assert.equal(update.actions[0]!.changed.map((c) => [c.ref, c.new]), [[changed[0]!.ref, false]], 'the first (oldest) project is the dependent');
    },
  },
  {
    name: 'load: by ref with otherwise; without otherwise a failed load aborts; the using target is cleared',
    async run(ctx) {
      const existing = await project(ctx, 'Before load');
      const api = await defineApi(ctx.svc, control(P, [...loadByRef('ref', [NEW]), to('title', TITLE)], {}, MANY));
      const reply = expectSuccess(await api.push([{ ref: existing, title: 'Loaded' }, { ref: 'zzzzzzzzzzzz', title: 'Otherwise 1' }, { title: 'Otherwise 2' }]));
      assert.equal(reply.actions.map((a) => a.changed.map((c) => c.new)), [[false], [true], [true]]);
      assert.is(reply.actions[0]!.changed[0]!.ref, existing);
      assert.equal(await titles(ctx, reply), ['Loaded', 'Otherwise 1', 'Otherwise 2']);

      const deleted = await project(ctx, 'Deleted');
      assert.is((await call(ctx.svc, `/api/admin/objects/${deleted}`, { method: 'DELETE' })).status, 200);
      const strict = await defineApi(ctx.svc, control(P, [...loadByRef(), to('title', TITLE)], {}, MANY));
      const before = await head(ctx.svc);
      const failed = expectFailure(await strict.push([{ ref: ctx.physics, title: 'x' }, { ref: deleted, title: 'x' }, { ref: 'not a ref', title: 'x' }, { title: 'x' }]));
      assert.is(failed.failures, 4);
      const READY = 'Destination "object" needs be made ready with a "new" or "load" instruction';
      assert.equal(
        failed.errors,
        [0, 1, 2, 3].flatMap((i) => [`Couldn't load destination: object (record ${i})`, `${READY} (record ${i})`]),
        'wrong type, deleted, not a ref, no ref; the instructions after the failed load still run',
      );
      assert.is(await head(ctx.svc), before);

      const twice = await defineApi(ctx.svc, control(P, [...loadByRef(), { action: 'load', destination: 'object', using: 'load:by-ref' }, to('title', TITLE)]));
      assert.equal(expectFailure(await twice.push({ ref: existing, title: 'x' })).errors, ["Couldn't load destination: object (record 0)", `${READY} (record 0)`]);
    },
  },
  {
    name: 'load ... otherwise: the otherwise instructions run with the record (load, otherwise create and fill in)',
    async run(ctx) {
      const existing = await project(ctx, 'Before otherwise');
      const api = await defineApi(ctx.svc, control(P, [
        ...loadByRef('ref', [NEW, to('title', TITLE), to('notes', 'phd:attribute:notes')]),
        to('exams', 'phd:attribute:exams-done'),
      ], {}, MANY));
      const reply = expectSuccess(await api.push([{ ref: existing, title: 'Not used', exams: 1 }, { ref: 'zzzzzzzzzzzz', title: 'Made by otherwise', notes: 'Filled in', exams: 2 }]));
      assert.equal(reply.actions.map((a) => a.changed.map((c) => c.new)), [[false], [true]]);
      assert.equal(await titles(ctx, reply), ['Before otherwise', 'Made by otherwise']);
      const made = await saved(ctx, reply, 1);
      assert.equal(plain(made, 'phd:attribute:notes'), ['Filled in']);
      assert.equal(plain(made, 'phd:attribute:exams-done'), ['2']);
    },
  },
  {
    name: 'assert-destination: exists true/false against the dependent project',
    async run(ctx) {
      const withProject = await createUser(ctx.svc, { username: 'with-project', first: 'With', last: 'Project' });
      const existing = await project(ctx, 'Existing project', { 'phd:attribute:researcher': [{ ref: withProject.ref }] });
      await createUser(ctx.svc, { username: 'without-project', first: 'Without', last: 'Project' });
      const mustExist = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { action: 'assert-destination', destination: 'phd:project', exists: true },
        { source: 'title', destination: 'phd:project', name: TITLE },
      ]));
      const updated = expectSuccess(await mustExist.push({ username: 'with-project', title: 'Updated project' }));
      assert.equal(updated.actions[0]!.changed.map((c) => [c.ref, c.new]), [[existing, false]]);
      const before = await head(ctx.svc);
      assert.equal(expectFailure(await mustExist.push({ username: 'without-project', title: 'No' })).errors, ['assert-destination failed: phd:project (record 0)']);
      assert.is(await head(ctx.svc), before, 'no project was created');

      const mustNotExist = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { action: 'assert-destination', destination: 'phd:project', exists: false },
        { source: 'title', destination: 'phd:project', name: TITLE },
      ]));
      assert.equal(expectSuccess(await mustNotExist.push({ username: 'without-project', title: 'Created' })).actions[0]!.changed.map((c) => c.new), [true]);
      assert.equal(expectFailure(await mustNotExist.push({ username: 'without-project', title: 'Again' })).errors, ['assert-destination failed: phd:project (record 0)']);
      assert.equal(expectFailure(await mustNotExist.push({ username: 'with-project', title: 'x' })).errors, ['assert-destination failed: phd:project (record 0)']);
    },
  },
  {
    name: 'abort-record: the record fails with its message, later records go on, end-of-record checks are skipped',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [
        NEW,
        to('title', TITLE),
        { action: 'if-value-one-of', source: 'status', values: ['bad'], then: [{ action: 'abort-record', message: 'Bad status' }] },
        to('notes', 'phd:attribute:notes'),
      ], {}, MANY));
      const reply = expectFailure(await api.push([{ title: 'Fine' }, { title: 'Aborted', status: 'bad', notes: 'never' }, { title: 'Also fine' }, { status: 'bad' }]));
      assert.is(reply.applied, 2);
      assert.is(reply.failures, 2);
      assert.is(reply.errorCount, 2);
      assert.equal(reply.errors, ['Bad status (record 1)', 'Bad status (record 3)'], 'no missing-title error for the aborted record 3');
      assert.equal(reply.actions.map((a) => [a.record, a.changed.length]), [['record 0', 1], ['record 1', 0], ['record 2', 1], ['record 3', 0]]);
    },
  },
  {
    name: 'abort-record and a failed load: the record fails, the instructions after still run and report their errors, nothing is written',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { source: 'job', destination: 'profile', name: 'svc:attribute:job-title' },
        { source: 'job', destination: 'profile', name: 'svc:attribute:orcid' },
        { action: 'abort-record', message: 'Stop here' },
        { action: 'log-error', message: 'Still running' },
      ]));
      const before = await head(ctx.svc);
      const reply = expectFailure(await api.push({ username: 'no-such-user', job: 'Lecturer' }));
      assert.equal(reply.errors, [
        "Couldn't load destination: profile (record 0)",
        'Destination "profile" needs be made ready with a "new" or "load" instruction (record 0)',
        'Stop here (record 0)',
        'Still running (record 0)',
      ], 'the unready destination is reported once, then the rest runs');
      assert.is(reply.errorCount, 4);
      assert.equal(reply.actions, [{ changed: [], record: 'record 0' }]);
      assert.is(await head(ctx.svc), before);
    },
  },
  {
    name: 'field-structured with nothing collected converts an empty value and reports its error',
    async run(ctx) {
      const user = await createUser(ctx.svc, { username: 'empty-structured', first: 'Empty', last: 'Structured' });
      const api = await defineApi(ctx.svc, control('svc:person', [
        ...loadProfile(),
        { source: 'job', destination: 'profile', name: 'svc:attribute:job-title' },
        { action: 'field-structured', structured: 'value:postal-address', destination: 'profile', name: 'svc:attribute:address' },
        { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'svc:attribute:name', multivalue: true },
      ]));
      const reply = expectSuccess(await api.push({ username: 'empty-structured', job: 'Reader' }));
      assert.equal(reply.errors, ['Missing or invalid country code in postal address, must be two letter ISO code: {} (record 0)']);
      const profile = await obj(ctx, user.ref);
      assert.equal(plain(profile, 'svc:attribute:job-title'), ['Reader']);
      assert.equal(attr(profile, 'svc:attribute:address'), []);
      assert.is(attr(profile, 'svc:attribute:name').length, 1, 'a person name without last is no value');
    },
  },
  {
    name: 'log-error: reports the message; the record is still committed and the result stays success',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [NEW, to('title', TITLE), { action: 'log-error', message: 'Just so you know' }]));
      const reply = await api.push({ title: 'Logged' });
      expectSuccess(reply);
      assert.equal(reply.body, { ...reply.body, applied: 1, failures: 0, errorCount: 1, errors: ['Just so you know (record 0)'] });
      assert.equal(plain(await saved(ctx, reply.body), TITLE), ['Logged']);
    },
  },
  {
    name: 'multivalue and qualifier: without multivalue a qualified value replaces those with its qualifier, an unqualified one all; with it, appends',
    async run(ctx) {
      const existing = await project(ctx, 'Main');
      const patched = await call(ctx.svc, `/api/admin/objects/${existing}`, { method: 'PATCH', body: { attributes: { [TITLE]: ['Main', { value: 'Alt', qualifier: 'svc:qualifier:alternative' }] } } });
      assert.is(patched.status, 200, JSON.stringify(patched.body));
      const api = await defineApi(ctx.svc, control(P, [
        ...loadByRef(),
        to('main', TITLE),
        to('alt', TITLE, { qualifier: 'svc:qualifier:alternative' }),
        to('extra', TITLE, { multivalue: true }),
        to('work', TITLE, { multivalue: true, qualifier: 'svc:qualifier:work' }),
        to('main2', TITLE),
      ]));
      expectSuccess(await api.push({ ref: existing, main: 'New main', alt: 'New alt', extra: 'Extra', work: 'Work title' }));
      assert.equal(withQualifiers(await obj(ctx, existing), TITLE), [
        ['New main', null],
        ['New alt', 'svc:qualifier:alternative'],
        ['Extra', null],
        ['Work title', 'svc:qualifier:work'],
      ]);
      expectSuccess(await api.push({ ref: existing, main2: 'Newest main' }));
      assert.equal(withQualifiers(await obj(ctx, existing), TITLE), [['Newest main', null]], 'an unqualified value replaces the values of every qualifier');
    },
  },
  {
    name: 'mapInputValue and mapInputValueDefault: applied before filters and the data type',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [
        NEW,
        to('status', TITLE, { mapInputValue: { a: 'Alpha', 1: 'One', true: 'Yes' }, mapInputValueDefault: 'Other' }),
        to('kind', 'dc:attribute:type', { mapInputValue: { pt: 'phd:type:project-part-time', ft: 'phd:type:project' } }),
        to('shout', 'phd:attribute:notes', { mapInputValue: { a: 'alpha' }, filters: ['svc:to-upper-case'] }),
      ], {}, MANY));
      const reply = expectSuccess(await api.push([{ status: 'a', kind: 'pt', shout: 'a' }, { status: 1, kind: 'ft', shout: 'b' }, { status: 'zzz', kind: 'nope' }, { status: true }]));
      assert.equal(await titles(ctx, reply), ['Alpha', 'One', 'Other', 'Yes']);
      const objects = await Promise.all([0, 1, 2, 3].map((i) => saved(ctx, reply, i)));
      assert.equal(objects.map((o) => o.type.code), ['phd:type:project-part-time', 'phd:type:project', 'phd:type:project', 'phd:type:project']);
      assert.equal(objects.map((o) => plain(o, 'phd:attribute:notes')), [['ALPHA'], ['B'], [], []]);

      const noDefault = await defineApi(ctx.svc, control(P, [NEW, to('status', TITLE, { mapInputValue: { a: 'Alpha' } })]));
      assert.equal(await titles(ctx, expectSuccess(await noDefault.push({ status: 'unmapped' }))), ['unmapped'], 'unmapped values pass through');
    },
  },
  {
    name: 'refMapping using behaviour: input -> behaviour code -> ref; unmapped input is an error; an unknown code is an exception',
    async run(ctx) {
      const mapping = { departments: { using: 'behaviour', values: { PHY: 'test:department:physics', CHEM: 'test:department:chemistry', GHOST: 'test:department:ghost' } } };
      const api = await defineApi(ctx.svc, control(P, [NEW, to('title', TITLE), to('dept', 'svc:attribute:department', { refMapping: 'departments' })], { mapping }, MANY));
      const reply = expectSuccess(await api.push([{ title: 'B1', dept: 'PHY' }, { title: 'B2', dept: 'CHEM' }, { title: 'B3', dept: 'XYZ' }]));
      assert.equal(reply.errors, ['Value in input data cannot be mapped for input field dept: XYZ (record 2)']);
      const departments = await Promise.all([0, 1, 2].map(async (i) => plain(await saved(ctx, reply, i), 'svc:attribute:department')));
      assert.equal(departments, [[ctx.physics], [ctx.chemistry], []]);

      const before = await head(ctx.svc);
      const ghost = await api.push([{ title: 'B4', dept: 'GHOST' }]);
      assert.is(ghost.status, 400);
      assert.is(ghost.body.result, 'error');
      assert.is(ghost.body.applied, 0);
      assert.match(ghost.body.errors[ghost.body.errors.length - 1]!, /^Exception when processing: .*test:department:ghost/);
      assert.is(await head(ctx.svc), before);
    },
  },
  {
    name: 'refMapping using title: input -> title (alternative titles too) -> ref; inputs not in values are dropped silently',
    async run(ctx) {
      const mapping = { depts: { using: 'title', types: ['svc:type:department'], values: { P: 'Physics', LS: 'Life Sciences', N: 'Nowhere' } } };
      const api = await defineApi(ctx.svc, control(P, [NEW, to('title', TITLE), to('dept', 'svc:attribute:department', { refMapping: 'depts' })], { mapping }, MANY));
      const reply = expectSuccess(await api.push([{ title: 'T1', dept: 'P' }, { title: 'T2', dept: 'LS' }, { title: 'T3', dept: 'N' }, { title: 'T4', dept: 'Q' }]));
      assert.equal(reply.errors, ['Value in input data cannot be mapped for input field dept: N (record 2)']);
      const departments = await Promise.all([0, 1, 2, 3].map(async (i) => plain(await saved(ctx, reply, i), 'svc:attribute:department')));
      assert.equal(departments, [[ctx.physics], [ctx.biology], [], []]);
    },
  },
  {
    name: 'unchanged objects are not saved: empty changed, nothing written',
    async run(ctx) {
      const existing = await project(ctx, 'Same title');
      const api = await defineApi(ctx.svc, control(P, [...loadByRef(), to('title', TITLE)]));
      const before = await head(ctx.svc);
      const reply = expectSuccess(await api.push({ ref: existing, title: 'Same title' }));
      assert.is(reply.applied, 1);
      assert.equal(reply.actions, [{ changed: [], record: 'record 0' }]);
      assert.is(await head(ctx.svc), before);
      assert.is((await obj(ctx, existing)).recordVersion, 1);
    },
  },
  {
    name: 'destinations must be made ready: "needs be made ready" messages',
    async run(ctx) {
      const person = await defineApi(ctx.svc, control('svc:person', [{ source: 'title', destination: 'phd:project', name: TITLE }]));
      assert.equal(expectFailure(await person.push({ title: 'x' })).errors, [
        'Destination "profile" needs be made ready with a "new" or "load" instruction, required by use of phd:project (record 0)',
      ]);
      const auto = await defineApi(ctx.svc, control(P, [to('title', TITLE)]));
      assert.equal(expectFailure(await auto.push({ title: 'x' })).errors, ['Destination "object" needs be made ready with a "new" or "load" instruction (record 0)']);
    },
  },
  {
    name: 'dependency depth limit and dependents that cannot be provided',
    async run(ctx) {
      const deep = (name: string) =>
        defineApi(ctx.svc, control('test:deep', [{ action: 'new', destination: 'root' }, { action: 'set-value', destination: 'root', name: TITLE, value: 'Root' }, { source: 'v', destination: name, name: 'v' }]));
      const tooDeep = await deep(`d${CHAIN}`);
      const atLimit = await deep(`d${CHAIN - 1}`);
      const orphan = await defineApi(ctx.svc, control('test:deep', [{ action: 'new', destination: 'root' }, { source: 'v', destination: 'orphan', name: TITLE }]));
      const before = await head(ctx.svc);
      assert.equal(expectFailure(await tooDeep.push({ v: 'x' })).errors, ['getTarget() maximum recursion limit exceeded (record 0)']);
      // At the limit the chain is made ready; these test dictionaries have no commit, which fails the record.
      assert.equal(expectFailure(await atLimit.push({ v: 'x' })).errors, ['Delegate for d1 does not implement commit() (record 0)']);
      assert.equal(expectFailure(await orphan.push({ v: 'x' })).errors, ['Couldn\'t make destination "orphan" available from dependency "root" (record 0)']);
      assert.is(await head(ctx.svc), before, 'nothing written');
    },
  },
  {
    name: 'end-of-record checks: missing title (hint once per batch, with the record), required dictionary names, required destinations',
    async run(ctx) {
      const api = await defineApi(ctx.svc, control(P, [NEW, to('notes', 'phd:attribute:notes'), to('title', TITLE)], {}, MANY));
      const reply = expectFailure(await api.push([{ notes: 'a' }, { notes: 'b' }, { title: 'Titled' }]));
      assert.is(reply.applied, 1);
      assert.is(reply.failures, 2);
      assert.equal(reply.errors, [
        'dc:attribute:title is not set in object object (record 0)',
        `${HINT} (record 0)`,
        'dc:attribute:title is not set in object object (record 1)',
      ]);
      assert.is(reply.errorCount, 3);
      assert.equal(expectFailure(await api.push([{ notes: 'c' }])).errors, ['dc:attribute:title is not set in object object (record 0)', `${HINT} (record 0)`], 'once per batch');

      const sync = await defineApi(ctx.svc, control('svc:user-sync', [{ source: 'u', destination: 'user', name: 'username' }, { source: 'f', destination: 'user', name: 'nameFirst' }]));
      assert.equal(expectFailure(await sync.push({ u: 'partial', f: 'Part' })).errors, ['Missing values in user: email, nameLast (record 0)']);
      assert.is((await call(ctx.svc, '/api/admin/users/partial')).status, 404);

      const nothing = await defineApi(ctx.svc, control(P, [{ action: 'log-error', message: 'nothing else' }]));
      assert.equal(expectFailure(await nothing.push({})).errors, ['nothing else (record 0)', 'No data set in required destination object (record 0)']);
    },
  },
  {
    name: 'only complete records are committed: a failing record leaves no trace',
    async run(ctx) {
      const existing = await project(ctx, 'Untouched');
      const api = await defineApi(ctx.svc, control(P, [
        ...loadByRef(),
        to('title', TITLE),
        NEW,
        to('title2', TITLE),
        { action: 'if-exists', source: 'fail', then: [{ action: 'abort-record', message: 'Failing on purpose' }] },
      ]));
      const before = await head(ctx.svc);
      const failed = expectFailure(await api.push({ ref: existing, title: 'Changed', title2: 'Created', fail: true }));
      assert.equal(failed.actions, [{ changed: [], record: 'record 0' }]);
      assert.is(await head(ctx.svc), before, 'nothing written');
      const untouched = await obj(ctx, existing);
      assert.equal(plain(untouched, TITLE), ['Untouched']);
      assert.is(untouched.recordVersion, 1);

      // The new object of a failing record lacks its title: the loaded object's change is not committed either.
      const noTitle = expectFailure(await api.push({ ref: existing, title: 'Changed' }));
      assert.equal(noTitle.errors, ['dc:attribute:title is not set in object object (record 0)', `${HINT} (record 0)`]);
      assert.equal(plain(await obj(ctx, existing), TITLE), ['Untouched']);
      assert.is(await head(ctx.svc), before);

      const ok = expectSuccess(await api.push({ ref: existing, title: 'Changed', title2: 'Created' }));
      assert.equal(ok.actions[0]!.changed.map((c) => [c.ref === existing, c.new]), [[true, false], [false, true]]);
      assert.equal(plain(await obj(ctx, existing), TITLE), ['Changed']);
    },
  },
];

for (const c of cases) test(c.name, c.run);

// --------------------------------------------------------------------------------------------
// Every filter

interface FilterCase {
  readonly filters: string[];
  readonly input: unknown;
  readonly expect: (ctx: Ctx) => unknown[];
  readonly model?: string;
  readonly name?: string;
  readonly errors?: string[];
}
const DEPARTMENT = 'svc:attribute:department';
const SUPERVISOR = 'phd:attribute:supervisor';
const WEBSITE = { model: 'TYPE:svc:type:person', name: 'svc:attribute:website' };
const filterCases: FilterCase[] = [
  { filters: ['svc:string-to-ref'], name: DEPARTMENT, input: 'PHYSICS', expect: () => [] },
  { filters: ['svc:code-to-ref'], name: DEPARTMENT, input: 'test:department:chemistry', expect: (c) => [c.chemistry] },
  { filters: ['svc:code-to-ref'], name: DEPARTMENT, input: 'test:department:unknown', expect: () => [] },
  { filters: ['svc:username-to-ref'], name: SUPERVISOR, input: 'ADA', expect: (c) => [c.ada.ref] },
  { filters: ['svc:username-to-ref'], name: SUPERVISOR, input: 'nobody', expect: () => [] },
  { filters: ['svc:email-to-ref'], name: SUPERVISOR, input: 'ada@example.com', expect: (c) => [c.ada.ref] },
  { filters: ['svc:email-to-ref'], name: SUPERVISOR, input: 'nobody@example.com', expect: () => [] },
  { filters: ['svc:fix-up-url'], ...WEBSITE, input: 'www.example.org', expect: () => ['https://www.example.org'] },
  { filters: ['svc:fix-up-url'], ...WEBSITE, input: 'http://example.org/a', expect: () => ['http://example.org/a'] },
  { filters: ['svc:fix-up-url'], ...WEBSITE, input: 'www.example2.org', expect: () => [], errors: ['Invalid URL for input field v: www.example2.org (record 0)'] },
  { filters: ['svc:to-lower-case'], input: 'MiXeD', expect: () => ['mixed'] },
  { filters: ['svc:to-upper-case'], input: 'MiXeD', expect: () => ['MIXED'] },
  { filters: ['svc:to-string', 'svc:to-upper-case'], input: true, expect: () => ['TRUE'] },
  { filters: ['svc:to-upper-case', 'svc:to-string'], input: true, expect: () => ['true'] },
  { filters: [], name: DEPARTMENT, input: 'a string is not a ref', expect: () => [] },
];

test('svc:string-to-ref turns a ref string into a link', async (ctx) => {
  const api = await defineApi(ctx.svc, control(P, [NEW, setValue(TITLE, 'Filtered'), to('v', DEPARTMENT, { filters: ['svc:string-to-ref'] })]));
  assert.equal(plain(await saved(ctx, expectSuccess(await api.push({ v: ctx.physics }))), DEPARTMENT), [ctx.physics]);
});

for (const f of filterCases) {
  test(`filters ${JSON.stringify(f.filters)} on ${JSON.stringify(f.input)}`, async (ctx) => {
    const name = f.name ?? TITLE;
    const instructions = [NEW, ...(name === TITLE ? [] : [setValue(TITLE, 'Filtered')]), to('v', name, { filters: f.filters })];
    const api = await defineApi(ctx.svc, control(f.model ?? P, instructions));
    const reply = expectSuccess(await api.push({ v: f.input }));
    assert.equal(reply.errors, f.errors ?? []);
    assert.equal(plain(await saved(ctx, reply), name), f.expect(ctx));
  });
}

test.run();
