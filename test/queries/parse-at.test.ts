import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAt } from '../../src/queries/parse-at.ts';
import { DomainError } from '../../src/domain/errors.ts';

const test = suite('parseAt: the ISO forms Haplo (XDate) accepts, converted to UTC');

const iso = (text: string) => parseAt(text)!.toISOString();

test('absent stays absent', () => {
  assert.is(parseAt(undefined), undefined);
});

test('date and time without zone is UTC, with or without seconds and fractions', () => {
  assert.is(iso('2024-03-12T10:30:00'), '2024-03-12T10:30:00.000Z');
  assert.is(iso('2024-03-12T10:30:00.250Z'), '2024-03-12T10:30:00.250Z');
  assert.is(iso('2024-03-12T10:30'), '2024-03-12T10:30:00.000Z');
  assert.is(iso('2024-03-12T10:30:05.5'), '2024-03-12T10:30:05.500Z');
  assert.is(iso('2024-03-12T10:30:05.123456'), '2024-03-12T10:30:05.123Z', 'digits past milliseconds are dropped');
});

test('a space separates date and time as T does', () => {
  assert.is(iso('2024-03-12 10:30:00'), '2024-03-12T10:30:00.000Z');
  assert.is(iso('2024-03-12 10:30'), '2024-03-12T10:30:00.000Z');
});

test('date only, year and month, year alone: the start of that period in UTC', () => {
  assert.is(iso('2024-03-12'), '2024-03-12T00:00:00.000Z');
  assert.is(iso('2024-03'), '2024-03-01T00:00:00.000Z');
  assert.is(iso('2024'), '2024-01-01T00:00:00.000Z');
});

test('Z and ±HH:MM / ±HHMM offsets are converted to UTC', () => {
  assert.is(iso('2024-03-12T10:30:00Z'), '2024-03-12T10:30:00.000Z');
  assert.is(iso('2024-03-12T10:30:00+01:00'), '2024-03-12T09:30:00.000Z');
  assert.is(iso('2024-03-12T10:30:00-05:30'), '2024-03-12T16:00:00.000Z');
  assert.is(iso('2024-03-12T00:15+0100'), '2024-03-11T23:15:00.000Z');
  assert.is(iso('2024-03-12 10:30:00.5+02:00'), '2024-03-12T08:30:00.500Z');
});

test('years 0000-0099 are those years, not 19xx', () => {
  assert.is(parseAt('0050-06-01T00:00:00')!.getUTCFullYear(), 50);
  assert.is(iso('0099-12-31T23:59:59'), '0099-12-31T23:59:59.000Z');
  assert.is(iso('0000-01-01'), '0000-01-01T00:00:00.000Z');
  assert.is(iso('0001'), '0001-01-01T00:00:00.000Z');
});

test('anything else is a DomainError (a JSON 400 at the edge) naming the accepted forms', () => {
  const bad = [
    '', 'yesterday', '24-03-12', '2024-3-12', '2024-13-01', '2024-02-30T00:00:00', '2023-02-29', '2024-01-01T25:00:00', '2024-01-01T10:60',
    '2024-01-01T10', '2024-01-01T10:00:00+1', '2024-01-01T10:00:00+24:00', '2024-01-01T10:00:00 Z', '2024-01-01T10:00:00.Z', '2024-01-01T',
    '12345-01-01', '2024-01-01T10:00:00+01:60',
  ];
  for (const text of bad) {
    try {
      parseAt(text);
      assert.unreachable(`${JSON.stringify(text)} was accepted`);
    } catch (e) {
      assert.instance(e, DomainError, text);
      assert.is((e as DomainError).kind, 'svc:api:reporting:bad-at', text);
      assert.match((e as Error).message, 'YYYY-MM-DD', text);
    }
  }
});

test('the first of repeated parameters is used', () => {
  assert.is(parseAt(['2024-03-12', '2025-01-01'])!.toISOString(), '2024-03-12T00:00:00.000Z');
});

test.run();
