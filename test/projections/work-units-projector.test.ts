import { suite } from 'uvu';
import { workUnitStream, type WorkUnitEvent } from '../../src/domain/work-units.ts';
import { workUnitsProjector } from '../../src/projections/work-units-projector.ts';
import { WORK_UNITS, type WorkUnitDoc } from '../../src/projections/read-models.ts';
import { decode, givenAt, projectionSpec, type GivenEvent } from '../support/projection-spec.ts';

const test = suite('projections: work units');
const units = projectionSpec(workUnitsProjector(decode));

const unit = (event: WorkUnitEvent): GivenEvent => ({ ...event, stream: workUnitStream(event.data.id) });
const reviewData = { id: 'wu1', ref: 'phd000000001', workType: 'phd:workflow:review', state: 'submitted', deadline: '2026-03-01', data: { round: 1 }, tags: { year: '2026' } };
const created = unit({ type: 'WorkUnitCreated', data: reviewData });
const review: WorkUnitDoc = {
  id: 'wu1',
  ref: 'phd000000001',
  workType: 'phd:workflow:review',
  state: 'submitted',
  deadline: '2026-03-01',
  data: { round: 1 },
  tags: { year: '2026' },
  createdAt: givenAt(0),
  openedAt: givenAt(0),
  closed: false,
};

test('a created unit is open, opened when it was recorded unless it says otherwise', async () => {
  await units.given([created]).thenDocs(WORK_UNITS, [review]);
  const backdated = unit({ type: 'WorkUnitCreated', data: { ...reviewData, id: 'wu2', openedAt: '2025-12-01T00:00:00.000Z' } });
  await units.given([backdated]).thenDoc(WORK_UNITS, 'wu2', { ...review, id: 'wu2', openedAt: '2025-12-01T00:00:00.000Z' });
});

test('transitions move the state and may close the unit', async () => {
  const moved = unit({ type: 'WorkUnitTransitioned', data: { id: 'wu1', state: 'reviewed', closed: false } });
  const done = unit({ type: 'WorkUnitTransitioned', data: { id: 'wu1', state: 'done', closed: true } });
  await units.given([created, moved]).thenDocs(WORK_UNITS, [{ ...review, state: 'reviewed' }]);
  await units.given([created, moved, done]).thenDocs(WORK_UNITS, [{ ...review, state: 'done', closed: true }]);
});

test('a transition of a unit never created fails the fold', async () => {
  await units.given([unit({ type: 'WorkUnitTransitioned', data: { id: 'nope', state: 'done', closed: true } })]).thenFails(/WorkUnitTransitioned for nope before WorkUnitCreated/);
});

test.run();
