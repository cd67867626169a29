import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { normalise, rowValues } from '../../../src/projections/reporting/facts.ts';
import type { CollectionDef } from '../../../src/domain/reporting/collection.ts';
import type { ObjectInfo } from '../../../src/projections/reporting/object-info.ts';
import type { Schema } from '../../../src/domain/schema.ts';

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

test('attribute facts read every value, or only those with the qualifier asked for, and leave the object as it was', () => {
  const email = (value: string, qualifier?: string) => ({ type: 'text', value, ...(qualifier ? { qualifier } : {}) });
  const emails = [email('a@x.org', 'svc:qualifier:work'), email('b@x.org'), email('c@x.org', 'svc:qualifier:home')];
  const object = { id: 'p1', objectType: 't', title: 'P', parent: null, behaviour: null, deleted: false, labels: [], attributes: { 'svc:attribute:email': emails } } as unknown as ObjectInfo;
  const fact = (name: string, source: object) => ({ name, type: 'json', description: name, source }) as unknown as CollectionDef['facts'][number];
  const collection = {
    facts: [
      fact('first', { attribute: 'svc:attribute:email' }),
      fact('all', { attribute: 'svc:attribute:email', all: true }),
      fact('home', { attribute: 'svc:attribute:email', qualifier: 'svc:qualifier:home' }),
      fact('work', { attribute: 'svc:attribute:email', qualifier: 'svc:qualifier:work', all: true }),
      fact('none', { attribute: 'svc:attribute:email', qualifier: 'svc:qualifier:other' }),
      fact('count', { attribute: 'svc:attribute:email', count: true }),
      fact('countWork', { attribute: 'svc:attribute:email', qualifier: 'svc:qualifier:work', count: true }),
      fact('missing', { attribute: 'svc:attribute:phone', all: true }),
    ],
  } as unknown as CollectionDef;
  const before = JSON.stringify(object);
  const values = rowValues(collection, object, () => undefined, { labels: new Map() } as unknown as Schema);
  assert.equal(values, ['p1', emails[0], emails, emails[2], [emails[0]], null, 3, 1, []]);
  assert.is(JSON.stringify(object), before);
  assert.is.not(values[2], emails, 'an all fact is a list of its own');
});

test.run();
