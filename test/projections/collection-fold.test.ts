import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCollections } from '../../src/app/load-collections.ts';
import type { AttributeValue } from '../../src/domain/objects/values.ts';
import { PARENT, TITLE } from '../../src/domain/schema.ts';
import type { RowDoc } from '../../src/projections/read-models.ts';
import type { Doc } from '../../src/projections/read-store.ts';
import { MemoryDocs } from '../../src/projections/batch-docs.ts';
import { collectionFold, collectionNames } from '../../src/projections/reporting/collection-fold.ts';
import type { ObjectInfo } from '../../src/projections/reporting/object-info.ts';
import { decode, projectionSpec, recorded } from '../support/projection-spec.ts';
import { changed, created, deleted, link, relabelled, schema, text, undeleted } from './object-events.ts';
import { noPause } from '../../src/projections/projector.ts';

const test = suite('projections: reporting collection fold');

const PERSON = 'svc:type:person';
const FACULTY = 'svc:type:faculty';
const DEPARTMENT = 'svc:type:department';
const PROJECT = 'phd:type:project';
const PART_TIME = 'phd:type:project-part-time';
const RESEARCHER = 'phd:attribute:researcher';
const SUPERVISOR = 'phd:attribute:supervisor';
const IN_DEPARTMENT = 'svc:attribute:department';
const START = 'phd:attribute:start-date';
const FUNDED = 'phd:attribute:funded';
const EXAMS = 'phd:attribute:exams-done';
const PROGRESS = 'phd:attribute:progress';
const JOB = 'svc:attribute:job-title';
const COMMON = 'svc:label:common';
const ARCHIVED = 'svc:label:archived';
const labelRef = (code: string) => schema.labels.get(code)!.ref;

// Declared as config/collections.json declares them, and checked by the same loader.
const [projects, faculties] = parseCollections(
  {
    collections: [
      {
        name: 'projects',
        description: 'PhD projects',
        categories: ['Research'],
        types: [PROJECT],
        facts: [
          { name: 'title', type: 'text', description: 'Title', source: { title: true } },
          { name: 'researcher', type: 'ref', description: 'Researcher', source: { attribute: RESEARCHER } },
          { name: 'researcherName', type: 'text', description: 'Name of the researcher', source: { attribute: RESEARCHER, linked: { title: true } } },
          { name: 'faculty', type: 'ref', description: 'Faculty', source: { attribute: IN_DEPARTMENT, linked: { attribute: PARENT } } },
          { name: 'supervisors', type: 'refList', description: 'Supervisors', source: { attribute: SUPERVISOR, all: true } },
          { name: 'startDate', type: 'date', description: 'Start date', source: { attribute: START, part: 'start' } },
          { name: 'isFunded', type: 'boolean', description: 'Funded', source: { attribute: FUNDED, exists: true } },
          { name: 'examsDone', type: 'int', description: 'Examinations done', source: { attribute: EXAMS } },
          { name: 'progressPercent', type: 'smallint', description: 'Progress in percent', source: { function: 'phd:progress-percent' } },
          { name: 'labels', type: 'labelList', description: 'Labels', source: { labels: true } },
        ],
      },
      {
        name: 'project_faculties',
        description: 'The faculty of each project, by name',
        categories: ['Research'],
        types: [PROJECT],
        facts: [
          {
            name: 'facultyName',
            type: 'text',
            description: 'Name of the faculty of the department',
            source: { attribute: IN_DEPARTMENT, linked: { attribute: PARENT, linked: { title: true } } },
          },
        ],
      },
    ],
  },
  schema,
);
const names = collectionNames('projects');
const fold = projectionSpec(collectionFold(projects!, schema, decode));

const ADA = 'ada000000001';
const BOB = 'b0b000000002';
const CY = 'c00000000003';
const ENG = 'fac000000001';
const SCI = 'fac000000002';
const DEPT = 'dept00000001';
const PHD = 'phd000000001';
const PHD2 = 'phd000000002';

const startDate: AttributeValue = { type: 'datetime', start: '2024-09-01T00:00:00.000Z', end: '2024-09-02T00:00:00.000Z', precision: 'd', specifiedAsRange: false };

const people = [
  created(ADA, PERSON, { [TITLE]: [text('Ada')], [JOB]: [text('Analyst')] }),
  created(BOB, PERSON, { [TITLE]: [text('Bob')] }),
  created(CY, PERSON, { [TITLE]: [text('Cy')] }),
];
const organisation = [
  created(ENG, FACULTY, { [TITLE]: [text('Engineering')] }),
  created(SCI, FACULTY, { [TITLE]: [text('Science')] }),
  created(DEPT, DEPARTMENT, { [TITLE]: [text('Computing')], [PARENT]: [link(ENG)] }),
];
const phd = created(
  PHD,
  PROJECT,
  {
    [TITLE]: [text('Engines')],
    [RESEARCHER]: [link(ADA)],
    [SUPERVISOR]: [link(BOB), link(CY)],
    [IN_DEPARTMENT]: [link(DEPT)],
    [START]: [startDate],
    [FUNDED]: [{ type: 'configuration-name', value: 'phd:funded:studentship' }],
    [EXAMS]: [{ type: 'integer', value: 2 }],
    [PROGRESS]: [{ type: 'number', value: 0.456 }],
  },
  [COMMON],
);
const world = [...people, ...organisation, phd];

const info = (o: Partial<ObjectInfo> & Pick<ObjectInfo, 'id' | 'objectType' | 'title'>): ObjectInfo => ({ parent: null, behaviour: null, deleted: false, labels: [], attributes: {}, ...o });
/** What the fold keeps of PHD. */
const phdInfo = info({
  id: PHD,
  objectType: PROJECT,
  title: 'Engines',
  labels: [COMMON],
  attributes: {
    [RESEARCHER]: [link(ADA)],
    [SUPERVISOR]: [link(BOB), link(CY)],
    [IN_DEPARTMENT]: [link(DEPT)],
    [START]: [startDate],
    [FUNDED]: [{ type: 'configuration-name', value: 'phd:funded:studentship' }],
    [EXAMS]: [{ type: 'integer', value: 2 }],
    [PROGRESS]: [{ type: 'number', value: 0.456 }],
  },
});

/** The row of PHD as `world` makes it; `values` replaces facts by name. */
const phdRow = (facts: Partial<Record<string, unknown>> = {}, row: Partial<RowDoc> = {}): RowDoc => {
  const values: Record<string, unknown> = {
    title: 'Engines',
    researcher: ADA,
    researcherName: 'Ada',
    faculty: ENG,
    supervisors: [BOB, CY],
    startDate: '2024-09-01T00:00:00.000Z',
    isFunded: true,
    examsDone: 2,
    progressPercent: 46,
    labels: [labelRef(COMMON)],
    ...facts,
  };
  return { id: PHD, values: [PHD, ...projects!.facts.map((f) => values[f.name])], labels: [COMMON], linkedTo: [ADA, DEPT], ...row };
};

test('one row per object of the collection types, subtypes included, with every declared fact', async () => {
  await fold.given([...world, created(PHD2, PART_TIME, { [TITLE]: [text('Part time')] })]).thenDocs(names.rows, [
    phdRow(),
    { id: PHD2, values: [PHD2, 'Part time', null, null, null, [], null, false, null, null, []], labels: [], linkedTo: [] },
  ]);
});

test('the fold keeps of every object its title, parent and only the attributes the facts read', async () => {
  const model = fold.given(world);
  await model.thenDocs(names.objects, [
    info({ id: ADA, objectType: PERSON, title: 'Ada' }),
    info({ id: BOB, objectType: PERSON, title: 'Bob' }),
    info({ id: CY, objectType: PERSON, title: 'Cy' }),
    info({ id: DEPT, objectType: DEPARTMENT, title: 'Computing', parent: ENG, attributes: { [PARENT]: [link(ENG)] } }),
    info({ id: ENG, objectType: FACULTY, title: 'Engineering' }),
    phdInfo,
    info({ id: SCI, objectType: FACULTY, title: 'Science' }),
  ]);
  // Only the objects read through `linked` facts make the row depend on them.
  await model.thenDocs(names.dependents, [
    { id: ADA, rows: [PHD] },
    { id: DEPT, rows: [PHD] },
  ]);
});

test('a row follows changes to its own facts: values, an attribute removed, the title, the labels', async () => {
  await fold
    .given([...world, changed(PHD, { [EXAMS]: [{ type: 'integer', value: 3 }], [FUNDED]: [], [TITLE]: [text('Steam engines')] }), relabelled(PHD, [COMMON, ARCHIVED])])
    .thenDocs(names.rows, [
      phdRow({ title: 'Steam engines', examsDone: 3, isFunded: false, labels: [labelRef(COMMON), labelRef(ARCHIVED)].sort() }, { labels: [COMMON, ARCHIVED] }),
    ]);
});

test('a row goes when its object is deleted and comes back when it is undeleted', async () => {
  const gone = fold.given([...world, deleted(PHD)]);
  await gone.thenDocs(names.rows, []);
  await gone.thenDocs(names.dependents, []);
  const back = fold.given([...world, deleted(PHD), undeleted(PHD)]);
  await back.thenDocs(names.rows, [phdRow()]);
  await back.thenDocs(names.dependents, [
    { id: ADA, rows: [PHD] },
    { id: DEPT, rows: [PHD] },
  ]);
});

test('a row goes when its object stops being of the collection types; an object retyped into them gains one', async () => {
  const retyped = fold.given([...world, changed(PHD, {}, { objectType: PERSON })]);
  await retyped.thenDocs(names.rows, []);
  await retyped.thenNoDoc(names.dependents, ADA);
  await retyped.thenDoc(names.objects, PHD, { ...phdInfo, objectType: PERSON });
  await fold
    .given([...world, changed(ADA, { [TITLE]: [text('Ada, a project now')] }, { objectType: PART_TIME })])
    .thenDoc(names.rows, ADA, { id: ADA, values: [ADA, 'Ada, a project now', null, null, null, [], null, false, null, null, []], labels: [], linkedTo: [] });
});

test("a dependent row is updated when a linked object's title changes", async () => {
  await fold.given([...world, changed(ADA, { [TITLE]: [text('Ada Lovelace')] })]).thenDocs(names.rows, [phdRow({ researcherName: 'Ada Lovelace' })]);
});

test('a dependent row is updated when its department moves to another faculty', async () => {
  await fold.given([...world, changed(DEPT, { [PARENT]: [link(SCI)] })]).thenDocs(names.rows, [phdRow({ faculty: SCI })]);
});

test('a row that links to another object stops depending on the one it linked to before', async () => {
  const model = fold.given([...world, changed(PHD, { [RESEARCHER]: [link(BOB)] }), changed(ADA, { [TITLE]: [text('Ada Lovelace')] })]);
  await model.thenDocs(names.rows, [phdRow({ researcher: BOB, researcherName: 'Bob' }, { linkedTo: [BOB, DEPT] })]);
  await model.thenDocs(names.dependents, [
    { id: BOB, rows: [PHD] },
    { id: DEPT, rows: [PHD] },
  ]);
});

test('a row that links to an object created after it reads that object once it exists', async () => {
  const [ada, bob, cy] = people;
  const early = fold.given([bob!, cy!, ...organisation, phd]);
  await early.thenDocs(names.rows, [phdRow({ researcherName: null })]);
  await fold.given([bob!, cy!, ...organisation, phd, ada!]).thenDocs(names.rows, [phdRow()]);
});

test('a change to an attribute no fact reads changes nothing the fold keeps', async () => {
  const model = fold.given([...world, changed(ADA, { [JOB]: [text('Engineer')] })]);
  await model.thenDoc(names.objects, ADA, info({ id: ADA, objectType: PERSON, title: 'Ada' }));
  await model.thenDocs(names.rows, [phdRow()]);
});

// A nested `linked` fact reads one more step (the department's faculty): the row depends on both,
// so renaming the faculty recomputes it. (It failed while rows depended only on direct links.)
test('a row reading through two links is updated when the far object changes', async () => {
  const nested = projectionSpec(collectionFold(faculties!, schema, decode));
  const row = (facultyName: string) => ({ id: PHD, values: [PHD, facultyName], labels: [COMMON], linkedTo: [DEPT, ENG] });
  await nested.given(world).thenDocs(collectionNames('project_faculties').rows, [row('Engineering')]);
  await nested.given([...world, changed(ENG, { [TITLE]: [text('Engineering and Design')] })]).thenDocs(collectionNames('project_faculties').rows, [row('Engineering and Design')]);
});

// Snapshots leave the dependents out (they are large lists of refs that hardly compress); loading
// one makes them again from the rows' links, so they must be the same sets the fold keeps.
test('the dependents the fold keeps are the ones derived from its rows', async () => {
  const raw = collectionFold(projects!, schema, decode);
  const histories = [
    world,
    [...world, changed(PHD, { [RESEARCHER]: [link(BOB)] })],
    [...world, changed(PHD, { [IN_DEPARTMENT]: [] })],
    [...world, deleted(PHD)],
    [...world, deleted(PHD), undeleted(PHD)],
    [...world, created(PHD2, PROJECT, { [TITLE]: [text('Turbines')], [RESEARCHER]: [link(BOB)], [IN_DEPARTMENT]: [link(DEPT)] }), changed(DEPT, { [PARENT]: [link(SCI)] })],
  ];
  const sets = (docs: Iterable<Doc>) => [...docs].map((d) => ({ id: d.id, rows: [...(d.rows as string[])].sort() })).sort((a, b) => a.id.localeCompare(b.id));
  for (const events of histories) {
    const model = fold.given(events);
    const state = new MemoryDocs();
    for (const row of await model.docs(names.rows)) state.put(names.rows, row);
    // Whatever a state held before is replaced.
    state.put(names.dependents, { id: 'stale', rows: ['gone'] });
    await raw.derived!.derive(state, noPause);
    const kept = await model.docs(names.dependents);
    if (events === world) assert.equal(sets(kept), [{ id: ADA, rows: [PHD] }, { id: DEPT, rows: [PHD] }]);
    assert.equal(sets(state.collections.get(names.dependents)!.values()), sets(kept));
  }
  assert.equal(raw.derived!.collections, [names.dependents]);
});

// A rebuild from the start and an answer replayed in memory have every document at hand: the fold
// must then run without a promise per event (they were a large part of what it allocated). The
// spec above folds over documents that are never at hand (every read waits), so it covers the other path.
test('over documents in memory an event is folded without waiting, to the same documents as over a store', async () => {
  const raw = collectionFold(projects!, schema, decode);
  const histories = [
    world,
    [...world, changed(ADA, { [TITLE]: [text('Ada L.')] }), changed(DEPT, { [PARENT]: [link(SCI)] }), changed(PHD, { [RESEARCHER]: [link(BOB)] })],
    [...world, deleted(PHD), undeleted(PHD), relabelled(PHD, [ARCHIVED]), changed(BOB, { [TITLE]: [text('Robert')] })],
  ];
  for (const events of histories) {
    const state = new MemoryDocs();
    for (const event of recorded(events)) {
      const done = raw.apply(event, state);
      assert.not.instance(done, Promise, `${event.type} of ${(event.data as { ref: string }).ref}`);
    }
    const model = fold.given(events);
    for (const c of [names.rows, names.objects, names.dependents]) {
      const held = [...(state.collections.get(c)?.values() ?? [])].sort((a, b) => a.id.localeCompare(b.id));
      assert.equal(held, await model.docs(c), c);
    }
  }
});

test.run();
