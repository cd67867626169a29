/**
 * Admin API for store objects (issue 3, "Store objects" and "Admin API"): create, PATCH
 * (replace / append / remove, per qualifier), labels, delete and undelete, recordVersion, input
 * validation, and read-your-writes through the Object API.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { call, createObject, createReader, createUser, errorOf, expectError, patchObject, postObject, readObject, REF, type Reader } from '../support/fixtures.ts';

interface Ctx {
  svc: TestService;
  reader: Reader;
  person: string;
}
const test = suite<Ctx>('admin objects', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_BASE_URL: 'https://svc.example.org' });
  ctx.reader = await createReader(ctx.svc, { readAll: true });
  ctx.person = (await createUser(ctx.svc, { first: 'Ada', last: 'Lovelace' })).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const TITLE = 'dc:attribute:title';
const ALT = 'svc:qualifier:alternative';
const values = (object: any, code: string) => object.attributes[code] as unknown[] | undefined;

test('POST /api/admin/objects answers 201 {ref, recordVersion: 1} and the object is readable at once', async ({ svc, reader, person }) => {
  const reply = await postObject(svc, { type: 'phd:type:project', attributes: { [TITLE]: 'A study of engines', 'phd:attribute:researcher': { type: 'link', ref: person } } });
  assert.is(reply.status, 201);
  assert.equal(Object.keys(reply.body), ['ref', 'recordVersion']);
  assert.match(reply.body.ref, REF);
  assert.is(reply.body.recordVersion, 1);
  const object = await readObject(reader, reply.body.ref);
  assert.is(object.recordVersion, 1);
  assert.is(object.title, 'A study of engines');
  assert.is(object.type.code, 'phd:type:project');
  assert.equal(object.labels.map((l: any) => l.code), ['svc:label:common'], 'objects without labels get the common label');
  assert.equal(values(object, 'phd:attribute:researcher'), [{ type: 'link', ref: person, title: 'Ada Lovelace' }]);
});

test('refs are unique for many objects created in a row', async ({ svc }) => {
  const refs = new Set<string>();
  for (let i = 0; i < 20; i++) refs.add((await createObject(svc, 'svc:type:organisation', { [TITLE]: `Org ${i}` })).ref);
  assert.is(refs.size, 20);
});

test('PATCH attributes replaces the values: recordVersion +1 and the GET shows them at once', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Old title', 'phd:attribute:notes': { type: 'text-multiline', value: 'n1' } });
  const reply = await patchObject(svc, ref, { attributes: { [TITLE]: 'New title' } });
  assert.is(reply.status, 200);
  assert.equal(reply.body, { ref, recordVersion: 2, changed: true });
  const object = await readObject(reader, ref);
  assert.is(object.recordVersion, 2);
  assert.is(object.title, 'New title');
  assert.equal(values(object, TITLE), [{ type: 'text', value: 'New title' }]);
  assert.equal(values(object, 'phd:attribute:notes'), [{ type: 'text-multiline', value: 'n1' }], 'other attributes are kept');
});

test('PATCH changes: append, per-qualifier replace, unqualified replace, per-qualifier remove, remove; +1 each', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Main', 'phd:attribute:notes': { type: 'text-multiline', value: 'note' } });
  const step = async (changes: unknown[], version: number, expectTitle: unknown[]) => {
    const reply = await patchObject(svc, ref, { changes });
    assert.equal(reply.body, { ref, recordVersion: version, changed: true }, JSON.stringify(changes));
    const object = await readObject(reader, ref);
    assert.is(object.recordVersion, version);
    assert.equal(values(object, TITLE), expectTitle, JSON.stringify(changes));
    return object;
  };
  await step([{ op: 'append', attribute: TITLE, values: [{ type: 'text', value: 'Alt one', qualifier: ALT }] }], 2, [
    { type: 'text', value: 'Main' },
    { type: 'text', qualifier: ALT, value: 'Alt one' },
  ]);
  await step([{ op: 'replace', attribute: TITLE, qualifier: ALT, values: ['Alt two'] }], 3, [
    { type: 'text', value: 'Main' },
    { type: 'text', qualifier: ALT, value: 'Alt two' },
  ]);
  const renamed = await step([{ op: 'replace', attribute: TITLE, values: ['Main two'] }], 4, [
    { type: 'text', qualifier: ALT, value: 'Alt two' },
    { type: 'text', value: 'Main two' },
  ]);
  assert.is(renamed.title, 'Main two', 'the title is the first unqualified title value');
  await step([{ op: 'remove', attribute: TITLE, qualifier: ALT }], 5, [{ type: 'text', value: 'Main two' }]);
  const reply = await patchObject(svc, ref, { changes: [{ op: 'remove', attribute: 'phd:attribute:notes' }] });
  assert.equal(reply.body, { ref, recordVersion: 6, changed: true });
  const object = await readObject(reader, ref);
  assert.is(values(object, 'phd:attribute:notes'), undefined, 'a removed attribute is absent');
});

test('several changes in one PATCH are one new version', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'One' });
  const reply = await patchObject(svc, ref, {
    changes: [
      { op: 'replace', attribute: TITLE, values: ['Two'] },
      { op: 'append', attribute: 'phd:attribute:exams-done', values: [{ type: 'integer', value: 1 }] },
    ],
  });
  assert.equal(reply.body, { ref, recordVersion: 2, changed: true });
  assert.is((await readObject(reader, ref)).recordVersion, 2);
});

test('an unchanged PATCH answers changed: false with the same recordVersion', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Same', 'phd:attribute:exams-done': { type: 'integer', value: 2 } });
  const before = await readObject(reader, ref);
  for (const body of [
    { attributes: { [TITLE]: 'Same' } },
    { attributes: { 'phd:attribute:exams-done': [{ type: 'integer', value: 2 }] } },
    { changes: [{ op: 'remove', attribute: 'phd:attribute:notes' }] },
    { labels: { add: ['svc:label:common'] } },
    { labels: { remove: ['svc:label:archived'] } },
    {},
  ]) {
    const reply = await patchObject(svc, ref, body);
    assert.is(reply.status, 200, JSON.stringify(body));
    assert.equal(reply.body, { ref, recordVersion: 1, changed: false }, JSON.stringify(body));
  }
  const after = await readObject(reader, ref);
  assert.is(after.recordVersion, 1);
  assert.is(after.lastModificationDate, before.lastModificationDate);
});

test('labels: add and remove, +1 each, serialised as {ref, title, code}', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Labelled' }, ['svc:label:common']);
  const added = await patchObject(svc, ref, { labels: { add: ['svc:label:confidential'] } });
  assert.equal(added.body, { ref, recordVersion: 2, changed: true });
  let object = await readObject(reader, ref);
  assert.equal(object.labels.map((l: any) => [l.code, l.title]), [['svc:label:common', 'Common'], ['svc:label:confidential', 'Confidential']]);
  for (const l of object.labels) {
    assert.equal(Object.keys(l), ['ref', 'title', 'code']);
    assert.match(l.ref, REF);
  }
  const removed = await patchObject(svc, ref, { labels: { remove: ['svc:label:common'] } });
  assert.equal(removed.body, { ref, recordVersion: 3, changed: true });
  object = await readObject(reader, ref);
  assert.equal(object.labels.map((l: any) => l.code), ['svc:label:confidential']);
  const both = await patchObject(svc, ref, { labels: { add: ['svc:label:archived'], remove: ['svc:label:confidential'] } });
  assert.equal(both.body, { ref, recordVersion: 4, changed: true });
  assert.equal((await readObject(reader, ref)).labels.map((l: any) => l.code), ['svc:label:archived']);
});

test('created with explicit labels: they are kept as given (deduplicated)', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Explicit' }, ['svc:label:confidential', 'svc:label:archived', 'svc:label:confidential']);
  assert.equal((await readObject(reader, ref)).labels.map((l: any) => l.code), ['svc:label:confidential', 'svc:label:archived']);
});

test('one PATCH changing attributes and labels together is one save: recordVersion +1', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Both' });
  const reply = await patchObject(svc, ref, { attributes: { [TITLE]: 'Both changed' }, labels: { add: ['svc:label:archived'] } });
  assert.is(reply.status, 200);
  assert.equal(reply.body, { ref, recordVersion: 2, changed: true }, 'one request is one change of the object');
  assert.is((await readObject(reader, ref)).recordVersion, 2);
});

test('DELETE marks the object deleted (Object API shows deleted: true); undelete restores it', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Doomed' });
  const del = await call(svc, `/api/admin/objects/${ref}`, { method: 'DELETE' });
  assert.is(del.status, 200);
  assert.equal(del.body, { ref, recordVersion: 2, changed: true, deleted: true });
  let object = await readObject(reader, ref);
  assert.is(object.deleted, true);
  assert.is(object.recordVersion, 2);
  assert.is(object.title, 'Doomed', 'a deleted object is still served in full');

  const again = await call(svc, `/api/admin/objects/${ref}`, { method: 'DELETE' });
  assert.equal(again.body, { ref, recordVersion: 2, changed: false, deleted: true }, 'deleting twice changes nothing');

  const patch = await patchObject(svc, ref, { attributes: { [TITLE]: 'Edited while deleted' } });
  expectError(patch, 409, 'svc:object:deleted');

  const undel = await call(svc, `/api/admin/objects/${ref}/undelete`, { method: 'POST' });
  assert.is(undel.status, 200);
  assert.equal(undel.body, { ref, recordVersion: 3, changed: true, deleted: false });
  object = await readObject(reader, ref);
  assert.is(object.deleted, false);
  assert.is(object.recordVersion, 3);
  const undelAgain = await call(svc, `/api/admin/objects/${ref}/undelete`, { method: 'POST' });
  assert.equal(undelAgain.body, { ref, recordVersion: 3, changed: false, deleted: false });
});

test('lastModificationDate moves with each change, creationDate stays', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Dated' });
  const first = await readObject(reader, ref);
  assert.is(first.creationDate, first.lastModificationDate);
  await new Promise((r) => setTimeout(r, 5));
  await patchObject(svc, ref, { attributes: { [TITLE]: 'Dated 2' } });
  const second = await readObject(reader, ref);
  assert.is(second.creationDate, first.creationDate);
  assert.ok(Date.parse(second.lastModificationDate) > Date.parse(first.lastModificationDate));
});

// ---------------------------------------------------------------------------------------------
// Invalid input: 400 JSON naming the field
// ---------------------------------------------------------------------------------------------

test('create: unknown type -> 400 svc:object:unknown-type naming type', async ({ svc }) => {
  const e = expectError(await postObject(svc, { type: 'phd:type:nope', attributes: {} }), 400, 'svc:object:unknown-type');
  assert.match(e.message, /^type: /);
  assert.match(e.message, 'phd:type:nope');
});

test('create: unknown attribute -> 400 svc:object:unknown-attribute naming it', async ({ svc }) => {
  const e = expectError(await postObject(svc, { type: 'phd:type:project', attributes: { 'phd:attribute:nope': 'x' } }), 400, 'svc:object:unknown-attribute');
  assert.match(e.message, 'attributes.phd:attribute:nope');
});

test('create: an attribute that is not one of the type -> 400 svc:object:attribute-not-in-type', async ({ svc }) => {
  const e = expectError(
    await postObject(svc, { type: 'svc:type:organisation', attributes: { [TITLE]: 'Org', 'phd:attribute:notes': { type: 'text-multiline', value: 'x' } } }),
    400,
    'svc:object:attribute-not-in-type',
  );
  assert.match(e.message, 'attributes.phd:attribute:notes');
  assert.match(e.message, 'svc:type:organisation');
});

test('create: a value of the wrong type -> 400 svc:object:bad-value naming attribute and index', async ({ svc }) => {
  const e = expectError(
    await postObject(svc, { type: 'phd:type:project', attributes: { 'phd:attribute:exams-done': [{ type: 'integer', value: 1 }, 'three'] } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(e.message, 'attributes.phd:attribute:exams-done[1]');
  const e2 = expectError(await postObject(svc, { type: 'phd:type:project', attributes: { [TITLE]: 42 } }), 400, 'svc:object:bad-value');
  assert.match(e2.message, `attributes.${TITLE}[0]`);
});

test('create: bad email, url, isbn, uuid -> 400 naming the attribute', async ({ svc }) => {
  const cases: [string, string, unknown][] = [
    ['svc:type:person', 'svc:attribute:email', { type: 'email-address', value: 'no-at-sign' }],
    ['svc:type:person', 'svc:attribute:email', { type: 'email-address', value: '@example.org' }],
    ['svc:type:person', 'svc:attribute:website', { type: 'url', value: 'www.example.org' }],
    ['phd:type:project', 'phd:attribute:isbn', { type: 'isbn', value: '978-3-16-148410-1' }],
    ['phd:type:project', 'phd:attribute:isbn', { type: 'isbn', value: '12345' }],
    ['phd:type:project', 'phd:attribute:uuid', { type: 'uuid', value: '123e4567-e89b-12d3-a456' }],
  ];
  for (const [type, code, value] of cases) {
    const e = expectError(await postObject(svc, { type, attributes: { [TITLE]: 'x', [code]: value } }), 400, 'svc:object:bad-value');
    assert.match(e.message, `attributes.${code}[0]`, JSON.stringify(value));
  }
});

test('create: link to a missing ref, to an object of the wrong type, or not a ref -> 400', async ({ svc, person }) => {
  const missing = expectError(
    await postObject(svc, { type: 'phd:type:project', attributes: { 'phd:attribute:researcher': { type: 'link', ref: '0000000000zz' } } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(missing.message, 'attributes.phd:attribute:researcher[0]');
  assert.match(missing.message, '0000000000zz');
  const wrongType = expectError(
    await postObject(svc, { type: 'phd:type:project', attributes: { 'svc:attribute:department': { type: 'link', ref: person } } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(wrongType.message, 'attributes.svc:attribute:department[0]');
  assert.match(wrongType.message, 'svc:type:department');
  const notRef = expectError(
    await postObject(svc, { type: 'phd:type:project', attributes: { 'phd:attribute:researcher': { type: 'link', ref: 'NOT A REF' } } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(notRef.message, 'attributes.phd:attribute:researcher[0]');
});

test('create: a link whose permitted types include subtypes accepts the subtype', async ({ svc }) => {
  const faculty = await createObject(svc, 'svc:type:faculty', { [TITLE]: 'Faculty of Science' });
  const dept = await createObject(svc, 'svc:type:department', { [TITLE]: 'Physics', 'svc:attribute:parent': { type: 'link', ref: faculty.ref } });
  assert.match(dept.ref, REF);
  const org = await createObject(svc, 'svc:type:organisation', { [TITLE]: 'Plain org' });
  const e = expectError(
    await postObject(svc, { type: 'svc:type:department', attributes: { [TITLE]: 'Chemistry', 'svc:attribute:parent': { type: 'link', ref: org.ref } } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(e.message, 'attributes.svc:attribute:parent[0]');
});

test('create: unknown label -> 400 svc:object:unknown-label naming labels', async ({ svc }) => {
  const e = expectError(await postObject(svc, { type: 'phd:type:project', attributes: {}, labels: ['svc:label:nope'] }), 400, 'svc:object:unknown-label');
  assert.match(e.message, /^labels: /);
  assert.match(e.message, 'svc:label:nope');
});

test('create: unknown qualifier on a value -> 400 naming the value', async ({ svc }) => {
  const e = expectError(
    await postObject(svc, { type: 'phd:type:project', attributes: { [TITLE]: [{ type: 'text', value: 'x', qualifier: 'svc:qualifier:nope' }] } }),
    400,
    'svc:object:bad-value',
  );
  assert.match(e.message, `attributes.${TITLE}[0]`);
});

test('create: malformed JSON -> 400 svc:api:malformed-json', async ({ svc }) => {
  expectError(await postObject(svc, '{"type": "phd:type:project", '), 400, 'svc:api:malformed-json');
});

test('create: missing body -> 400', async ({ svc }) => {
  const reply = await call(svc, '/api/admin/objects', { method: 'POST' });
  expectError(reply, 400, 'svc:api:bad-request');
});

test('create: wrong JSON types -> 400 svc:api:bad-request naming each field by its path', async ({ svc }) => {
  const e = expectError(await postObject(svc, { type: 5, attributes: [] }), 400, 'svc:api:bad-request');
  assert.match(e.message, /(^|[ ;])type: expected string/, e.message);
  assert.match(e.message, /(^|[ ;])attributes: expected/, e.message);
  assert.not.match(e.message, /\b\d+\.(type|attributes)\b/, `field paths must not carry io-ts member indexes: ${e.message}`);
  const labels = expectError(await postObject(svc, { type: 'phd:type:project', attributes: {}, labels: 'svc:label:common' }), 400, 'svc:api:bad-request');
  assert.match(labels.message, /(^|[ ;])labels: expected/, labels.message);
});

test('PATCH: wrong JSON types in changes -> 400 naming changes.<i>.op', async ({ svc }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Typed' });
  const e = expectError(await patchObject(svc, ref, { changes: [{ op: 'frobnicate', attribute: TITLE }] }), 400, 'svc:api:bad-request');
  assert.match(e.message, /(^|[ ;])changes\.0\.op: expected/, e.message);
});

test('PATCH: invalid values -> 400 naming the field; nothing is written', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Guarded' });
  const e1 = expectError(await patchObject(svc, ref, { attributes: { 'phd:attribute:exams-done': 'x' } }), 400, 'svc:object:bad-value');
  assert.match(e1.message, 'attributes.phd:attribute:exams-done[0]');
  const e2 = expectError(await patchObject(svc, ref, { changes: [{ op: 'append', attribute: 'phd:attribute:uuid', values: [{ type: 'uuid', value: 'x' }] }] }), 400, 'svc:object:bad-value');
  assert.match(e2.message, 'changes[0].phd:attribute:uuid[0]');
  const e3 = expectError(await patchObject(svc, ref, { changes: [{ op: 'replace', attribute: 'phd:attribute:nope', values: ['x'] }] }), 400, 'svc:object:unknown-attribute');
  assert.match(e3.message, 'phd:attribute:nope');
  const e4 = expectError(await patchObject(svc, ref, { labels: { add: ['svc:label:nope'] } }), 400, 'svc:object:unknown-label');
  assert.match(e4.message, 'svc:label:nope');
  const e5 = expectError(await patchObject(svc, ref, { attributes: { 'svc:attribute:email': { type: 'email-address', value: 'a@b.c' } } }), 400, 'svc:object:attribute-not-in-type');
  assert.match(e5.message, 'svc:attribute:email');
  assert.is((await readObject(reader, ref)).recordVersion, 1);
});

test('PATCH: removing an unknown attribute names changes[i], not attributes', async ({ svc }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Remove unknown' });
  const e = expectError(await patchObject(svc, ref, { changes: [{ op: 'remove', attribute: 'phd:attribute:nope' }] }), 400, 'svc:object:unknown-attribute');
  assert.match(e.message, /^changes\[0\]/, e.message);
});

test('PATCH: a per-qualifier replace or remove with an unknown qualifier -> 400, nothing stored', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Qualified' });
  const replace = await patchObject(svc, ref, { changes: [{ op: 'replace', attribute: TITLE, qualifier: 'svc:qualifier:nope', values: ['x'] }] });
  assert.is(replace.status, 400, `replace with an unknown qualifier: ${JSON.stringify(replace.body)}`);
  assert.match(errorOf(replace).message, 'changes[0]');
  const remove = await patchObject(svc, ref, { changes: [{ op: 'remove', attribute: TITLE, qualifier: 'svc:qualifier:nope' }] });
  assert.is(remove.status, 400, `remove with an unknown qualifier: ${JSON.stringify(remove.body)}`);
  const object = await readObject(reader, ref);
  assert.equal(values(object, TITLE), [{ type: 'text', value: 'Qualified' }]);
});

test('PATCH attributes with a qualified value: old values of that qualifier go, others are not mangled', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', {
    [TITLE]: ['Main', { type: 'text', value: 'Alt one', qualifier: ALT }],
  });
  const reply = await patchObject(svc, ref, { attributes: { [TITLE]: [{ type: 'text', value: 'Alt two', qualifier: ALT }] } });
  assert.is(reply.status, 200);
  const object = await readObject(reader, ref);
  const titles = values(object, TITLE)!;
  assert.not.ok(
    titles.some((v: any) => v.value === 'Alt one'),
    `replacing ${TITLE} with an alternative title must not keep the old alternative: ${JSON.stringify(titles)}`,
  );
  assert.ok(
    titles.some((v: any) => v.value === 'Alt two' && v.qualifier === ALT),
    `the new alternative title is there: ${JSON.stringify(titles)}`,
  );
});

test('PATCH attributes with the full value list as read (qualified values included) is a no-op', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: ['Main', { type: 'text', value: 'Alt', qualifier: ALT }] });
  const object = await readObject(reader, ref);
  const reply = await patchObject(svc, ref, { attributes: { [TITLE]: object.attributes[TITLE] } });
  assert.equal(reply.body, { ref, recordVersion: 1, changed: false }, 'saving back what was read changes nothing');
  assert.equal(values(await readObject(reader, ref), TITLE), object.attributes[TITLE]);
});

test('create: the type field decides the type; a conflicting dc:attribute:type is not silently taken', async ({ svc, reader }) => {
  const person = await readObject(reader, (await createUser(svc)).ref);
  const personTypeRef = person.attributes['dc:attribute:type'][0].ref;
  const reply = await postObject(svc, { type: 'phd:type:project', attributes: { [TITLE]: 'Which type?', 'dc:attribute:type': { type: 'link', ref: personTypeRef } } });
  if (reply.status === 201) {
    const object = await readObject(reader, reply.body.ref);
    assert.is(object.type.code, 'phd:type:project', 'POST {type: phd:type:project} must not create a person');
  } else {
    expectError(reply, 400, errorOf(reply).kind, /dc:attribute:type/);
  }
});

test('create: an attribute given an empty list is absent from the serialised object', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Empty notes', 'phd:attribute:notes': [] });
  const object = await readObject(reader, ref);
  assert.not.ok('phd:attribute:notes' in object.attributes, `attributes without values are not serialised: ${JSON.stringify(object.attributes)}`);
});

test('404 svc:object:no-such-object for PATCH, DELETE, undelete and workflows of an unknown ref', async ({ svc }) => {
  expectError(await patchObject(svc, 'zzzzzzzzzzzz', { attributes: { [TITLE]: 'x' } }), 404, 'svc:object:no-such-object', 'Object zzzzzzzzzzzz does not exist');
  expectError(await patchObject(svc, 'zzzzzzzzzzzz', { labels: { add: ['svc:label:common'] } }), 404, 'svc:object:no-such-object');
  expectError(await call(svc, '/api/admin/objects/zzzzzzzzzzzz', { method: 'DELETE' }), 404, 'svc:object:no-such-object');
  expectError(await call(svc, '/api/admin/objects/zzzzzzzzzzzz/undelete', { method: 'POST' }), 404, 'svc:object:no-such-object');
  expectError(await call(svc, '/api/admin/objects/zzzzzzzzzzzz/workflows', { method: 'POST', body: { workType: 'phd:workflow:x', state: 'open' } }), 404, 'svc:object:no-such-object');
});

test('a malformed ref in an admin path -> 400 JSON', async ({ svc }) => {
  for (const [method, path] of [['PATCH', '/api/admin/objects/NOT-A-REF'], ['DELETE', '/api/admin/objects/short'], ['POST', '/api/admin/objects/ABCDEFGHIJKL/undelete']] as const) {
    const reply = await call(svc, path, { method, ...(method === 'PATCH' ? { body: {} } : {}) });
    assert.is(reply.status, 400, `${method} ${path}`);
    errorOf(reply);
  }
});

test('admin object endpoints without the token -> 401 with a Bearer challenge', async ({ svc }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'Guarded by token' });
  const attempts: [string, string, unknown?][] = [
    ['POST', '/api/admin/objects', { type: 'phd:type:project', attributes: {} }],
    ['GET', `/api/admin/objects/${ref}`],
    ['PATCH', `/api/admin/objects/${ref}`, { attributes: { [TITLE]: 'hacked' } }],
    ['DELETE', `/api/admin/objects/${ref}`],
    ['POST', `/api/admin/objects/${ref}/undelete`],
    ['POST', `/api/admin/objects/${ref}/workflows`, { workType: 'phd:workflow:x', state: 'open' }],
    ['POST', '/api/admin/users', { username: 'intruder', name: { first: 'I', last: 'X' } }],
    ['POST', '/api/admin/groups', { code: 'svc:group:intruders', title: 'x', readAll: true }],
  ];
  for (const [method, path, body] of attempts) {
    const reply = await call(svc, path, { method, admin: false, ...(body ? { body } : {}) });
    expectError(reply, 401, 'svc:api:admin:unauthorised');
    assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer/, `${method} ${path}`);
  }
  const wrong = await call(svc, `/api/admin/objects/${ref}`, { method: 'DELETE', admin: false, headers: { Authorization: 'Bearer not-the-admin-token' } });
  expectError(wrong, 401, 'svc:api:admin:unauthorised');
  const object = await call(svc, `/api/admin/objects/${ref}`);
  assert.is(object.body.object.title, 'Guarded by token');
  assert.is(object.body.object.deleted, false);
});

test('read-your-writes: a chain of admin commands is visible to the very next GET each time', async ({ svc, reader }) => {
  const { ref } = await createObject(svc, 'phd:type:project', { [TITLE]: 'v1' });
  for (let i = 2; i <= 15; i++) {
    const reply = await patchObject(svc, ref, { attributes: { [TITLE]: `v${i}` } });
    assert.is(reply.body.recordVersion, i);
    const object = await readObject(reader, ref);
    assert.is(object.recordVersion, i);
    assert.is(object.title, `v${i}`);
  }
});

test.run();
