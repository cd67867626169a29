import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { normalise } from '../../../src/projections/reporting/facts.ts';

const test = suite('Reporting facts: date values in the form Haplo writes');

const dt = (start: string, end: string) => ({ type: 'datetime', start, end, precision: 'd', specifiedAsRange: true });

test('date facts are the day at midnight UTC, as an ISO string with milliseconds (Haplo stringifies a Date)', () => {
  assert.is(normalise('date', dt('2024-03-12T10:30:00.000Z', '2024-03-12T10:31:00.000Z')), '2024-03-12T00:00:00.000Z');
  assert.is(normalise('date', '2024-10-01'), '2024-10-01T00:00:00.000Z');
  assert.is(normalise('date', '2024-10-01T23:59:59.999Z'), '2024-10-01T00:00:00.000Z', 'compared by day: the time is dropped');
  assert.is(normalise('date', 'not a date'), null);
});

test('end-date facts (stored as date) take the same form: the last day the range includes', () => {
  assert.is(normalise('end-date', dt('2024-03-12T00:00:00.000Z', '2024-03-14T00:00:00.000Z')), '2024-03-13T00:00:00.000Z');
});

test.run();
