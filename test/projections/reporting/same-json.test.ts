import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sameJson } from '../../../src/projections/reporting/same-json.ts';
import { seededRandom } from '../../../bench/support.ts';

const test = suite('sameJson');

const random = seededRandom(15);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const LEAVES: unknown[] = [null, undefined, 0, -0, 1, 1.5, NaN, Infinity, '', 'a', 'b', true, false, '2024-01-01T00:00:00.000Z'];
const value = (depth: number): unknown => {
  const r = random();
  if (depth <= 0 || r < 0.5) return pick(LEAVES);
  if (r < 0.75) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth - 1));
  const o: Record<string, unknown> = {};
  for (const k of ['x', 'y', 'z']) if (random() < 0.6) o[k] = value(depth - 1);
  return o;
};
/** A near copy: same most of the time, with one change or reordering some of the time. */
const variant = (v: unknown): unknown => {
  const r = random();
  if (r < 0.5) return structuredClone(v);
  if (r < 0.7) return value(2);
  if (Array.isArray(v)) return v.length && random() < 0.5 ? v.map((x, i) => (i === 0 ? variant(x) : x)) : [...v].reverse();
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse());
  return pick(LEAVES);
};

test('agrees with comparing JSON.stringify of both, for generated values and near copies', () => {
  let same = 0;
  for (let i = 0; i < 20_000; i++) {
    const a = value(3);
    const b = variant(a);
    const expected = JSON.stringify(a) === JSON.stringify(b);
    if (expected) same++;
    assert.is(sameJson(a, b), expected, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  assert.ok(same > 5_000 && same < 19_000, `${same} equal pairs`);
});

test('key order counts, as in the JSON; left-out properties and nulls in arrays as JSON writes them', () => {
  assert.not.ok(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 }));
  assert.ok(sameJson({ a: 1, b: undefined }, { a: 1 }));
  assert.ok(sameJson([undefined, NaN], [null, null]));
  assert.not.ok(sameJson(undefined, null));
  assert.ok(sameJson(['x', 1, true], ['x', 1, true]));
  assert.not.ok(sameJson(['x'], ['x', 'y']));
  assert.not.ok(sameJson([], {}));
  assert.not.ok(sameJson('1', 1));
});

test.run();
