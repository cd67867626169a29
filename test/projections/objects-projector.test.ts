import { suite } from 'uvu';
import { BEHAVIOUR, PARENT, TITLE, TYPE } from '../../src/domain/schema.ts';
import { objectsProjector } from '../../src/projections/objects-projector.ts';
import { OBJECTS, OBJECT_LINKS, type LinkDoc, type ObjectDoc } from '../../src/projections/read-models.ts';
import { decode, givenAt, projectionSpec, recorded } from '../support/projection-spec.ts';
import { MemoryDocs } from '../../src/projections/batch-docs.ts';
import * as assert from 'uvu/assert';
import { changed, created, deleted, link, relabelled, text, typeRef, undeleted } from './object-events.ts';

const test = suite('projections: objects');
const objects = projectionSpec(objectsProjector(decode));

const PERSON = 'svc:type:person';
const DEPARTMENT = 'svc:type:department';
const PROJECT = 'phd:type:project';
const PART_TIME = 'phd:type:project-part-time';
const ALT = 'svc:qualifier:alternative';
const JOB = 'svc:attribute:job-title';
const RESEARCHER = 'phd:attribute:researcher';
const SUPERVISOR = 'phd:attribute:supervisor';
const COMMON = 'svc:label:common';
const ARCHIVED = 'svc:label:archived';

const ADA = 'ada000000001';
const BOB = 'b0b000000002';
const CY = 'c00000000003';
const DEPT = 'dept00000001';
const FAC = 'fac000000001';
const FAC2 = 'fac000000002';
const PHD = 'phd000000001';

const linkDoc = (from: string, attribute: string, index: number, to: string, fromType: string, qualifier: string | null = null): LinkDoc => ({
  id: `${from}|${attribute}|${index}`,
  from,
  to,
  attribute,
  qualifier,
  fromType,
  fromCreated: givenAt(0),
});

const ada = created(ADA, PERSON, { [TITLE]: [text('Ada')], [JOB]: [text('Analyst')] });
const adaDoc: ObjectDoc = {
  id: ADA,
  ref: ADA,
  objectType: PERSON,
  attributes: { [TYPE]: [link(typeRef(PERSON))], [TITLE]: [text('Ada')], [JOB]: [text('Analyst')] },
  labels: [],
  deleted: false,
  recordVersion: 1,
  creationDate: givenAt(0),
  lastModificationDate: givenAt(0),
  title: 'Ada',
  titles: ['Ada'],
  behaviour: null,
};
const adaTypeLink = linkDoc(ADA, TYPE, 0, typeRef(PERSON), PERSON);

const dept = created(DEPT, DEPARTMENT, { [TITLE]: [text('Computing')], [PARENT]: [link(FAC)], [BEHAVIOUR]: [{ type: 'configuration-name', value: 'computing' }] }, [COMMON]);

const deptDoc: ObjectDoc = {
  id: DEPT,
  ref: DEPT,
  objectType: DEPARTMENT,
  attributes: { [TYPE]: [link(typeRef(DEPARTMENT))], [TITLE]: [text('Computing')], [PARENT]: [link(FAC)], [BEHAVIOUR]: [{ type: 'configuration-name', value: 'computing' }] },
  labels: [COMMON],
  deleted: false,
  recordVersion: 1,
  creationDate: givenAt(0),
  lastModificationDate: givenAt(0),
  title: 'Computing',
  titles: ['Computing'],
  behaviour: 'computing',
};

test('a created object is one document with its title, titles and behaviour, and one link document per link value', async () => {
  const model = objects.given([dept]);
  await model.thenDocs(OBJECTS, [deptDoc]);
  await model.thenDocs(OBJECT_LINKS, [linkDoc(DEPT, TYPE, 0, typeRef(DEPARTMENT), DEPARTMENT), linkDoc(DEPT, PARENT, 0, FAC, DEPARTMENT)]);
});

test('changed attributes: the new values, one more version, and the title recomputed from the first unqualified title', async () => {
  const model = objects.given([ada, changed(ADA, { [TITLE]: [text('The Countess', ALT), text('Ada Lovelace')], [JOB]: [text('Mathematician')] })]);
  await model.thenDoc(OBJECTS, ADA, {
    ...adaDoc,
    attributes: { ...adaDoc.attributes, [TITLE]: [text('The Countess', ALT), text('Ada Lovelace')], [JOB]: [text('Mathematician')] },
    recordVersion: 2,
    lastModificationDate: givenAt(1),
    title: 'Ada Lovelace',
    titles: ['The Countess', 'Ada Lovelace'],
  });
  await model.thenDocs(OBJECT_LINKS, [adaTypeLink]);
});

test('an attribute set to no values is removed; without a title the title is empty', async () => {
  await objects.given([ada, changed(ADA, { [TITLE]: [], [JOB]: [] })]).thenDoc(OBJECTS, ADA, {
    ...adaDoc,
    attributes: { [TYPE]: [link(typeRef(PERSON))] },
    recordVersion: 2,
    lastModificationDate: givenAt(1),
    title: '',
    titles: [],
  });
});

test('a change to other attributes keeps title and behaviour, and moves the link; removing the behaviour clears it', async () => {
  const moved = objects.given([dept, changed(DEPT, { [PARENT]: [link(FAC2)] })]);
  await moved.thenDoc(OBJECTS, DEPT, { ...deptDoc, attributes: { ...deptDoc.attributes, [PARENT]: [link(FAC2)] }, recordVersion: 2, lastModificationDate: givenAt(1) });
  await moved.thenDoc(OBJECT_LINKS, `${DEPT}|${PARENT}|0`, linkDoc(DEPT, PARENT, 0, FAC2, DEPARTMENT));
  const { [BEHAVIOUR]: _, ...withoutBehaviour } = deptDoc.attributes;
  await objects
    .given([dept, changed(DEPT, { [BEHAVIOUR]: [] })])
    .thenDoc(OBJECTS, DEPT, { ...deptDoc, attributes: withoutBehaviour, recordVersion: 2, lastModificationDate: givenAt(1), behaviour: null });
});

test('changed labels replace the labels and add a version; link documents stay as they were', async () => {
  const model = objects.given([ada, relabelled(ADA, [COMMON, ARCHIVED])]);
  await model.thenDoc(OBJECTS, ADA, { ...adaDoc, labels: [COMMON, ARCHIVED], recordVersion: 2, lastModificationDate: givenAt(1) });
  await model.thenDocs(OBJECT_LINKS, [adaTypeLink]);
});

test('one save that changes attributes and labels applies both', async () => {
  await objects
    .given([ada, changed(ADA, { [JOB]: [text('Engineer')] }, { labels: [ARCHIVED] })])
    .thenDoc(OBJECTS, ADA, { ...adaDoc, attributes: { ...adaDoc.attributes, [JOB]: [text('Engineer')] }, labels: [ARCHIVED], recordVersion: 2, lastModificationDate: givenAt(1) });
});

test('deleted, then undeleted: the flag follows, each a new version; the link documents stay', async () => {
  const gone = objects.given([ada, deleted(ADA)]);
  await gone.thenDoc(OBJECTS, ADA, { ...adaDoc, deleted: true, recordVersion: 2, lastModificationDate: givenAt(1) });
  await gone.thenDocs(OBJECT_LINKS, [adaTypeLink]);
  const back = objects.given([ada, deleted(ADA), undeleted(ADA)]);
  await back.thenDoc(OBJECTS, ADA, { ...adaDoc, deleted: false, recordVersion: 3, lastModificationDate: givenAt(2) });
  await back.thenDocs(OBJECT_LINKS, [adaTypeLink]);
});

const project = created(PHD, PROJECT, { [TITLE]: [text('Engines')], [RESEARCHER]: [link(ADA)], [SUPERVISOR]: [link(BOB), link(CY)] });
const projectLinks = (fromType = PROJECT, typeTarget = typeRef(PROJECT)) => [
  linkDoc(PHD, TYPE, 0, typeTarget, fromType),
  linkDoc(PHD, RESEARCHER, 0, ADA, fromType),
  linkDoc(PHD, SUPERVISOR, 0, BOB, fromType),
  linkDoc(PHD, SUPERVISOR, 1, CY, fromType),
];

test('link values added: one link document each, numbered by position', async () => {
  await objects
    .given([project, changed(PHD, { [SUPERVISOR]: [link(BOB), link(CY), link(ADA, 'svc:qualifier:work')] })])
    .thenDocs(OBJECT_LINKS, [...projectLinks(), linkDoc(PHD, SUPERVISOR, 2, ADA, PROJECT, 'svc:qualifier:work')]);
});

test('a link value removed: the documents after it move up one place and the last one goes', async () => {
  const model = objects.given([project, changed(PHD, { [SUPERVISOR]: [link(CY)] })]);
  await model.thenDocs(OBJECT_LINKS, [linkDoc(PHD, TYPE, 0, typeRef(PROJECT), PROJECT), linkDoc(PHD, RESEARCHER, 0, ADA, PROJECT), linkDoc(PHD, SUPERVISOR, 0, CY, PROJECT)]);
  await model.thenNoDoc(OBJECT_LINKS, `${PHD}|${SUPERVISOR}|1`);
});

test('a link attribute removed: its link documents go, the others stay', async () => {
  await objects
    .given([project, changed(PHD, { [SUPERVISOR]: [] })])
    .thenDocs(OBJECT_LINKS, [linkDoc(PHD, TYPE, 0, typeRef(PROJECT), PROJECT), linkDoc(PHD, RESEARCHER, 0, ADA, PROJECT)]);
});

test('a link value given a qualifier: its document carries it', async () => {
  await objects
    .given([project, changed(PHD, { [RESEARCHER]: [link(ADA, 'svc:qualifier:work')] })])
    .thenDoc(OBJECT_LINKS, `${PHD}|${RESEARCHER}|0`, linkDoc(PHD, RESEARCHER, 0, ADA, PROJECT, 'svc:qualifier:work'));
});

test('an object retyped: every link document carries the new type', async () => {
  const model = objects.given([project, changed(PHD, { [TYPE]: [link(typeRef(PART_TIME))] }, { objectType: PART_TIME })]);
  await model.thenDocs(OBJECT_LINKS, projectLinks(PART_TIME, typeRef(PART_TIME)));
  await model.thenDoc(OBJECTS, PHD, {
    id: PHD,
    ref: PHD,
    objectType: PART_TIME,
    attributes: { [TYPE]: [link(typeRef(PART_TIME))], [TITLE]: [text('Engines')], [RESEARCHER]: [link(ADA)], [SUPERVISOR]: [link(BOB), link(CY)] },
    labels: [],
    deleted: false,
    recordVersion: 2,
    creationDate: givenAt(0),
    lastModificationDate: givenAt(1),
    title: 'Engines',
    titles: ['Engines'],
    behaviour: null,
  });
});

test('a change before the object was created fails the fold', async () => {
  await objects.given([changed(ADA, { [JOB]: [text('Analyst')] })]).thenFails(/ObjectAttributesChanged for ada000000001 before ObjectCreated/);
});

test('other objects are folded apart; events of other kinds are not folded at all', async () => {
  const model = objects.given([
    ada,
    { type: 'UserCreated', data: { username: 'ada', groups: [], service: false, profileRef: ADA }, stream: 'user-ada' },
    created(BOB, PERSON, { [TITLE]: [text('Bob')] }),
    relabelled(ADA, [COMMON]),
  ]);
  await model.thenDocs(OBJECTS, [
    { ...adaDoc, labels: [COMMON], recordVersion: 2, lastModificationDate: givenAt(3) },
    { ...adaDoc, id: BOB, ref: BOB, attributes: { [TYPE]: [link(typeRef(PERSON))], [TITLE]: [text('Bob')] }, title: 'Bob', titles: ['Bob'], creationDate: givenAt(2), lastModificationDate: givenAt(2) },
  ]);
  await model.thenDocs(OBJECT_LINKS, [adaTypeLink, { ...linkDoc(BOB, TYPE, 0, typeRef(PERSON), PERSON), fromCreated: givenAt(2) }]);
});

test('documentsOf names the one object document each event writes (what other processes drop from their caches)', async () => {
  const projector = objectsProjector(decode);
  const state = new MemoryDocs();
  const events = recorded([ada, dept, changed(ADA, { [JOB]: [text('Mathematician')] }), relabelled(DEPT, [ARCHIVED]), deleted(ADA), undeleted(ADA), changed(DEPT, { [PARENT]: [link(FAC2)] })]);
  for (const event of events) {
    const written: string[] = [];
    const put = state.put.bind(state);
    const del = state.delete.bind(state);
    await projector.apply(event, {
      get: (c, id) => state.get(c, id),
      peek: (c, id) => state.peek(c, id),
      put: (c, doc) => (c === OBJECTS && written.push(doc.id), put(c, doc)),
      delete: (c, id) => (c === OBJECTS && written.push(id), del(c, id)),
    });
    assert.equal(written, [projector.documentsOf![OBJECTS]!(event)], event.type);
  }
});

test.run();
