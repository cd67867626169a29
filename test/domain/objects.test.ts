import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSchema } from '../../src/app/load-schema.ts';
import type { ObjectEvent } from '../../src/domain/objects/events.ts';
import { objectDecider, type ObjectCommand } from '../../src/domain/objects/object.ts';
import type { Attributes, AttributeValue } from '../../src/domain/objects/values.ts';
import { deciderSpec } from '../support/decider-spec.ts';

const schema = parseSchema(
  {
    types: [
      { code: 'x:type:book', name: 'Book', attributes: ['dc:attribute:title', 'dc:attribute:type', 'x:attribute:pages', 'x:attribute:contributor'] },
      { code: 'x:type:novel', name: 'Novel', parent: 'x:type:book', attributes: [] },
      { code: 'x:type:person', name: 'Person', attributes: ['dc:attribute:title', 'dc:attribute:type'] },
    ],
    attributes: [
      { code: 'dc:attribute:title', name: 'Title', dataType: 'text' },
      { code: 'dc:attribute:type', name: 'Type', dataType: 'link' },
      { code: 'x:attribute:pages', name: 'Pages', dataType: 'integer' },
      { code: 'x:attribute:contributor', name: 'Contributor', dataType: 'attribute-group', groupAttributes: ['x:attribute:role'] },
      { code: 'x:attribute:role', name: 'Role', dataType: 'text' },
      { code: 'x:attribute:notes', name: 'Notes', dataType: 'text' },
    ],
    qualifiers: [{ code: 'x:qualifier:alternative', name: 'Alternative' }],
    labels: [
      { code: 'x:label:public', name: 'Public' },
      { code: 'x:label:staff', name: 'Staff' },
    ],
  },
  'test',
);

const spec = deciderSpec(objectDecider(schema));
const test = suite('objects: decider');

const REF = 'obj1';
const typeOf = (code: string): AttributeValue => ({ type: 'link', ref: schema.types.get(code)!.ref });
const text = (value: string, qualifier?: string): AttributeValue => ({ type: 'text', value, ...(qualifier ? { qualifier } : {}) });
const TITLE = 'dc:attribute:title';
const TYPE = 'dc:attribute:type';
const PAGES = 'x:attribute:pages';
const ALT = 'x:qualifier:alternative';

const book: Attributes = { [TYPE]: [typeOf('x:type:book')], [TITLE]: [text('Dune')] };
const created: ObjectEvent = { type: 'ObjectCreated', data: { ref: REF, objectType: 'x:type:book', attributes: book, labels: ['x:label:public'] } };
const deleted: ObjectEvent = { type: 'ObjectDeleted', data: { ref: REF } };
const change = (fields: Omit<ObjectCommand & { type: 'ChangeObject' }, 'type' | 'ref'>): ObjectCommand => ({ type: 'ChangeObject', ref: REF, ...fields });
const changed = (set: Attributes, extra: { objectType?: string; labels?: readonly string[] } = {}): ObjectEvent => ({
  type: 'ObjectAttributesChanged',
  data: { ref: REF, set, ...extra },
});

// CreateObject

test('CreateObject: an object of the type its first dc:attribute:type value names, labels without repeats', () => {
  spec
    .given([])
    .when({ type: 'CreateObject', ref: REF, attributes: book, labels: ['x:label:public', 'x:label:staff', 'x:label:public'] })
    .then([{ type: 'ObjectCreated', data: { ref: REF, objectType: 'x:type:book', attributes: book, labels: ['x:label:public', 'x:label:staff'] } }]);
});

test('CreateObject: subtypes, members of the type attribute groups and qualified values are accepted', () => {
  const attributes: Attributes = {
    [TYPE]: [typeOf('x:type:novel')],
    [TITLE]: [text('Dune'), text('Dune I', ALT)],
    'x:attribute:role': [{ type: 'text', value: 'author', extension: { desc: 'x:attribute:contributor', groupId: 1 } }],
  };
  spec.given([]).when({ type: 'CreateObject', ref: REF, attributes, labels: [] }).then([{ type: 'ObjectCreated', data: { ref: REF, objectType: 'x:type:novel', attributes, labels: [] } }]);
});

test('CreateObject: refused when the object exists (even deleted)', () => {
  const command: ObjectCommand = { type: 'CreateObject', ref: REF, attributes: book, labels: [] };
  spec.given([created]).when(command).thenThrows('svc:object:exists', { reason: 'conflict', message: 'Object obj1 already exists' });
  spec.given([created, deleted]).when(command).thenThrows('svc:object:exists', { reason: 'conflict' });
});

test('CreateObject: refused without a type, or when dc:attribute:type does not link to a type', () => {
  const create = (attributes: Attributes): ObjectCommand => ({ type: 'CreateObject', ref: REF, attributes, labels: [] });
  const message = 'attributes.dc:attribute:type: an object needs a type';
  spec.given([]).when(create({ [TITLE]: [text('Dune')] })).thenThrows('svc:object:no-type', { reason: 'invalid', message });
  spec.given([]).when(create({ [TYPE]: [{ type: 'link', ref: 'not-a-type' }] })).thenThrows('svc:object:no-type', { message });
  spec.given([]).when(create({ [TYPE]: [text('x:type:book')] })).thenThrows('svc:object:no-type', { message });
});

test('CreateObject: refused for unknown attributes, attributes outside the type, and values of the wrong kind', () => {
  const create = (extra: Attributes): ObjectCommand => ({ type: 'CreateObject', ref: REF, attributes: { ...book, ...extra }, labels: [] });
  spec.given([]).when(create({ 'x:attribute:nope': [text('x')] })).thenThrows('svc:object:unknown-attribute', { reason: 'invalid', message: 'attributes.x:attribute:nope: unknown attribute' });
  spec
    .given([])
    .when(create({ 'x:attribute:notes': [text('x')] }))
    .thenThrows('svc:object:attribute-not-in-type', { reason: 'invalid', message: 'attributes.x:attribute:notes: not an attribute of type x:type:book' });
  spec
    .given([])
    .when(create({ [PAGES]: [text('412')] }))
    .thenThrows('svc:object:bad-value', { reason: 'invalid', message: 'attributes.x:attribute:pages[0]: x:attribute:pages holds integer values, not text' });
  spec
    .given([])
    .when(create({ 'x:attribute:role': [{ type: 'text', value: 'author', extension: { desc: 'x:attribute:other', groupId: 1 } }] }))
    .thenThrows('svc:object:bad-value', { message: /x:attribute:other is not an attribute group of type x:type:book with member x:attribute:role/ });
});

test('CreateObject: refused for unknown labels', () => {
  spec
    .given([])
    .when({ type: 'CreateObject', ref: REF, attributes: book, labels: ['x:label:public', 'x:label:secret'] })
    .thenThrows('svc:object:unknown-label', { reason: 'invalid', message: 'labels: unknown label x:label:secret' });
});

// ChangeObject

test('ChangeObject: replace, append, set and remove record the complete new value lists of what changed', () => {
  spec.given([created]).when(change({ changes: [{ op: 'replace', attribute: TITLE, values: [text('Dune Messiah')] }] })).then([changed({ [TITLE]: [text('Dune Messiah')] })]);
  spec
    .given([created])
    .when(change({ changes: [{ op: 'append', attribute: TITLE, values: [text('Dune 2')] }, { op: 'append', attribute: PAGES, values: [{ type: 'integer', value: 412 }] }] }))
    .then([changed({ [TITLE]: [text('Dune'), text('Dune 2')], [PAGES]: [{ type: 'integer', value: 412 }] })]);
  spec.given([created]).when(change({ changes: [{ op: 'set', attribute: TITLE, values: [text('A', ALT)] }] })).then([changed({ [TITLE]: [text('A', ALT)] })]);
  spec.given([created]).when(change({ changes: [{ op: 'remove', attribute: TITLE }] })).then([changed({ [TITLE]: [] })]);
});

test('ChangeObject: qualified replace and remove touch only the values with that qualifier', () => {
  const withAlt: ObjectEvent = changed({ [TITLE]: [text('Dune'), text('Old', ALT)] });
  spec
    .given([created, withAlt])
    .when(change({ changes: [{ op: 'replace', attribute: TITLE, qualifier: ALT, values: [text('New')] }] }))
    .then([changed({ [TITLE]: [text('Dune'), text('New', ALT)] })]);
  spec.given([created, withAlt]).when(change({ changes: [{ op: 'remove', attribute: TITLE, qualifier: ALT }] })).then([changed({ [TITLE]: [text('Dune')] })]);
});

test('ChangeObject: a new dc:attribute:type changes the object type', () => {
  spec
    .given([created])
    .when(change({ changes: [{ op: 'set', attribute: TYPE, values: [typeOf('x:type:novel')] }] }))
    .then([changed({ [TYPE]: [typeOf('x:type:novel')] }, { objectType: 'x:type:novel' })]);
});

test('ChangeObject: labels alone record ObjectLabelsChanged; with attribute changes they join the one save', () => {
  spec
    .given([created])
    .when(change({ labels: { add: ['x:label:staff'], remove: ['x:label:public'] } }))
    .then([{ type: 'ObjectLabelsChanged', data: { ref: REF, labels: ['x:label:staff'] } }]);
  spec
    .given([created])
    .when(change({ changes: [{ op: 'set', attribute: TITLE, values: [text('Dune 2')] }], labels: { add: ['x:label:staff'] } }))
    .then([changed({ [TITLE]: [text('Dune 2')] }, { labels: ['x:label:public', 'x:label:staff'] })]);
  // An attribute change with labels that stay the same records the attributes only, and the other way round.
  spec.given([created]).when(change({ changes: [{ op: 'set', attribute: TITLE, values: [text('Dune 2')] }], labels: { add: ['x:label:public'] } })).then([changed({ [TITLE]: [text('Dune 2')] })]);
  spec
    .given([created])
    .when(change({ changes: [{ op: 'set', attribute: TITLE, values: [text('Dune')] }], labels: { remove: ['x:label:public'] } }))
    .then([{ type: 'ObjectLabelsChanged', data: { ref: REF, labels: [] } }]);
});

test('ChangeObject: nothing changes when the values and labels stay the same (or nothing is asked)', () => {
  spec.given([created]).when(change({ changes: [{ op: 'set', attribute: TITLE, values: [text('Dune')] }] })).thenNothing();
  spec.given([created]).when(change({ changes: [{ op: 'remove', attribute: PAGES }] })).thenNothing();
  spec.given([created]).when(change({ labels: { add: ['x:label:public'], remove: ['x:label:staff'] } })).thenNothing();
  spec.given([created]).when(change({ changes: [], labels: {} })).thenNothing();
  spec.given([created]).when(change({})).thenNothing();
  // Asking for nothing on a deleted object is no refusal either.
  spec.given([created, deleted]).when(change({})).thenNothing();
});

test('CreateObject and SetObjectAttributes: `alsoOf` lets an object hold the attributes of further types (a destination over several annotated types)', () => {
  const withPages = { [TYPE]: [typeOf('x:type:person')], [TITLE]: [text('Ada')], 'x:attribute:pages': [{ type: 'integer', value: 3 } as AttributeValue] };
  spec.given([]).when({ type: 'CreateObject', ref: REF, attributes: withPages, labels: [] }).thenThrows('svc:object:attribute-not-in-type');
  spec
    .given([])
    .when({ type: 'CreateObject', ref: REF, attributes: withPages, labels: [], alsoOf: ['x:type:person', 'x:type:book'] })
    .then([{ type: 'ObjectCreated', data: { ref: REF, objectType: 'x:type:person', attributes: withPages, labels: [] } }]);
  const person: ObjectEvent = { type: 'ObjectCreated', data: { ref: REF, objectType: 'x:type:person', attributes: { [TYPE]: [typeOf('x:type:person')], [TITLE]: [text('Ada')] }, labels: [] } };
  spec.given([person]).when({ type: 'SetObjectAttributes', ref: REF, attributes: withPages }).thenThrows('svc:object:attribute-not-in-type');
  spec
    .given([person])
    .when({ type: 'SetObjectAttributes', ref: REF, attributes: withPages, alsoOf: ['x:type:book'] })
    .then([{ type: 'ObjectAttributesChanged', data: { ref: REF, set: { 'x:attribute:pages': withPages['x:attribute:pages']! } } }]);
});

test('ChangeObject: refused for a missing object, and for a deleted one', () => {
  const retitle = change({ changes: [{ op: 'set', attribute: TITLE, values: [text('X')] }] });
  spec.given([]).when(retitle).thenThrows('svc:object:no-such-object', { reason: 'not-found', message: 'Object obj1 does not exist' });
  spec.given([]).when(change({})).thenThrows('svc:object:no-such-object', { reason: 'not-found' });
  spec.given([created, deleted]).when(retitle).thenThrows('svc:object:deleted', { reason: 'conflict', message: 'Object obj1 is deleted; undelete it first' });
  spec.given([created, deleted]).when(change({ labels: { add: ['x:label:staff'] } })).thenThrows('svc:object:deleted', { reason: 'conflict' });
});

test('ChangeObject: refused when the result breaks the schema (no type, wrong values, unknown labels)', () => {
  spec.given([created]).when(change({ changes: [{ op: 'remove', attribute: TYPE }] })).thenThrows('svc:object:no-type', { reason: 'invalid' });
  spec.given([created]).when(change({ changes: [{ op: 'set', attribute: PAGES, values: [text('many')] }] })).thenThrows('svc:object:bad-value', { reason: 'invalid' });
  spec.given([created]).when(change({ changes: [{ op: 'set', attribute: 'x:attribute:notes', values: [text('n')] }] })).thenThrows('svc:object:attribute-not-in-type');
  spec.given([created]).when(change({ labels: { remove: ['x:label:nope'] } })).thenThrows('svc:object:unknown-label', { reason: 'invalid', message: 'labels: unknown label x:label:nope' });
});

// SetObjectAttributes (data import)

test('SetObjectAttributes: records what differs from the stored values; dropped attributes become []', () => {
  spec
    .given([created])
    .when({ type: 'SetObjectAttributes', ref: REF, attributes: { [TYPE]: [typeOf('x:type:novel')], [PAGES]: [{ type: 'integer', value: 1 }] } })
    .then([changed({ [TYPE]: [typeOf('x:type:novel')], [TITLE]: [], [PAGES]: [{ type: 'integer', value: 1 }] }, { objectType: 'x:type:novel' })]);
});

test('SetObjectAttributes: the same values (in any key order) record nothing', () => {
  spec.given([created]).when({ type: 'SetObjectAttributes', ref: REF, attributes: { [TITLE]: [{ value: 'Dune', type: 'text' }], [TYPE]: [typeOf('x:type:book')] } }).thenNothing();
});

test('SetObjectAttributes: refused without a type, for values the schema refuses, and for a missing object', () => {
  spec.given([created]).when({ type: 'SetObjectAttributes', ref: REF, attributes: { [TITLE]: [text('x')] } }).thenThrows('svc:object:no-type', { reason: 'invalid' });
  spec.given([created]).when({ type: 'SetObjectAttributes', ref: REF, attributes: { ...book, 'x:attribute:nope': [text('x')] } }).thenThrows('svc:object:unknown-attribute');
  spec.given([]).when({ type: 'SetObjectAttributes', ref: REF, attributes: book }).thenThrows('svc:object:no-such-object', { reason: 'not-found' });
});

// DeleteObject, UndeleteObject

test('DeleteObject: deletes a live object; a deleted one stays as it is; a missing one is not found', () => {
  spec.given([created]).when({ type: 'DeleteObject', ref: REF }).then([deleted]);
  spec.given([created, deleted]).when({ type: 'DeleteObject', ref: REF }).thenNothing();
  spec.given([]).when({ type: 'DeleteObject', ref: REF }).thenThrows('svc:object:no-such-object', { reason: 'not-found', message: 'Object obj1 does not exist' });
});

test('UndeleteObject: undeletes a deleted object; a live one stays as it is; a missing one is not found', () => {
  spec.given([created, deleted]).when({ type: 'UndeleteObject', ref: REF }).then([{ type: 'ObjectUndeleted', data: { ref: REF } }]);
  spec.given([created, deleted, { type: 'ObjectUndeleted', data: { ref: REF } }]).when({ type: 'UndeleteObject', ref: REF }).thenNothing();
  spec.given([created]).when({ type: 'UndeleteObject', ref: REF }).thenNothing();
  spec.given([]).when({ type: 'UndeleteObject', ref: REF }).thenThrows('svc:object:no-such-object', { reason: 'not-found' });
});

// evolve

test('evolve: every event moves recordVersion up by one; the state folds without recorded times', () => {
  const { evolve, initialState } = objectDecider(schema);
  const events: ObjectEvent[] = [created, changed({ [PAGES]: [{ type: 'integer', value: 3 }] }, { labels: ['x:label:staff'] }), deleted];
  const state = events.reduce((s, e) => evolve(s, e, new Date()), initialState);
  assert.equal(state, {
    ref: REF,
    objectType: 'x:type:book',
    attributes: { ...book, [PAGES]: [{ type: 'integer', value: 3 }] },
    labels: ['x:label:staff'],
    deleted: true,
    recordVersion: 3,
  });
  assert.throws(() => evolve(null, deleted, new Date()), /ObjectDeleted for obj1 before ObjectCreated/);
});

test.run();
