import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { workUnitDecider, workUnitStream, type WorkUnitCommand, type WorkUnitEvent } from '../../src/domain/work-units.ts';
import { deciderSpec, GIVEN_AT } from '../support/decider-spec.ts';

const spec = deciderSpec(workUnitDecider);
const test = suite('work units: decider');

const unit = { id: 'w1', ref: 'obj1', workType: 'phd:workflow:examination', state: 'submitted', deadline: null, data: { n: 1 }, tags: { dept: 'x' } };
const created: WorkUnitEvent = { type: 'WorkUnitCreated', data: unit };
const create: WorkUnitCommand = { type: 'CreateWorkUnit', ...unit };
const transition = (state: string, closed?: boolean): WorkUnitCommand => ({ type: 'TransitionWorkUnit', id: 'w1', state, ...(closed === undefined ? {} : { closed }) });
const transitioned = (state: string, closed: boolean): WorkUnitEvent => ({ type: 'WorkUnitTransitioned', data: { id: 'w1', state, closed } });

test('CreateWorkUnit: records the unit (openedAt only when given)', () => {
  spec.given([]).when(create).then([created]);
  spec
    .given([])
    .when({ ...create, deadline: '2026-03-01T00:00:00.000Z', openedAt: '2026-01-01T00:00:00.000Z' })
    .then([{ type: 'WorkUnitCreated', data: { ...unit, deadline: '2026-03-01T00:00:00.000Z', openedAt: '2026-01-01T00:00:00.000Z' } }]);
  assert.is(workUnitStream('w1'), 'workunit-w1');
});

test('CreateWorkUnit: refused when the unit exists', () => {
  spec.given([created]).when(create).thenThrows('svc:workflow:exists', { reason: 'conflict', message: 'Workflow w1 already exists' });
});

test('TransitionWorkUnit: moves to the state; closed stays as it is unless given', () => {
  spec.given([created]).when(transition('review')).then([transitioned('review', false)]);
  spec.given([created]).when(transition('submitted', true)).then([transitioned('submitted', true)]);
  spec.given([created, transitioned('done', true)]).when(transition('reopened')).then([transitioned('reopened', true)]);
  spec.given([created, transitioned('done', true)]).when(transition('done', false)).then([transitioned('done', false)]);
});

test('TransitionWorkUnit: nothing when state and closed are as they are', () => {
  spec.given([created]).when(transition('submitted')).thenNothing();
  spec.given([created]).when(transition('submitted', false)).thenNothing();
  spec.given([created, transitioned('done', true)]).when(transition('done')).thenNothing();
});

test('TransitionWorkUnit: refused for a missing unit', () => {
  spec.given([]).when(transition('review')).thenThrows('svc:workflow:no-such-workflow', { reason: 'not-found', message: 'Workflow w1 does not exist' });
});

test('evolve: opened when recorded unless openedAt says otherwise; transitions set state and closed', () => {
  const state = [created, transitioned('done', true)].reduce((s, e) => workUnitDecider.evolve(s, e, GIVEN_AT), workUnitDecider.initialState);
  assert.equal(state, { ...unit, state: 'done', closed: true, createdAt: GIVEN_AT.toISOString(), openedAt: GIVEN_AT.toISOString() });
  const opened = workUnitDecider.evolve(null, { type: 'WorkUnitCreated', data: { ...unit, openedAt: '2020-01-01T00:00:00.000Z' } }, GIVEN_AT);
  assert.is(opened?.openedAt, '2020-01-01T00:00:00.000Z');
  assert.throws(() => workUnitDecider.evolve(null, transitioned('x', false), GIVEN_AT), /WorkUnitTransitioned for w1 before WorkUnitCreated/);
});

test.run();
