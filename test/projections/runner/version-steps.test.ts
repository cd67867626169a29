/**
 * A projection's version steps name the documents each of this process's commits changed, so that
 * a cache of values made from single documents drops only theirs when the version moves; any move
 * it cannot account for (one that names nothing, one no longer remembered) drops everything.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { WriteOp } from '../../../src/projections/read-store.ts';
import { VersionSteps } from '../../../src/projections/runner/version-steps.ts';
import { VersionedCache } from '../../../src/projections/versioned-cache.ts';

const put = (collection: string, id: string): WriteOp => ({ kind: 'put', collection, doc: { id } });
const del = (collection: string, id: string): WriteOp => ({ kind: 'delete', collection, id });

test('the ids changed since a version, by collection, across the steps after it', () => {
  const steps = new VersionSteps();
  steps.committed(1, [put('objects', 'a'), put('links', 'x')]);
  steps.committed(2, [put('objects', 'b'), del('objects', 'c')]);
  assert.equal([...steps.changedSince('objects', 0, 2)!].sort(), ['a', 'b', 'c']);
  assert.equal([...steps.changedSince('objects', 1, 2)!].sort(), ['b', 'c']);
  assert.equal([...steps.changedSince('links', 0, 2)!], ['x']);
  assert.equal([...steps.changedSince('links', 1, 2)!], []);
  assert.equal([...steps.changedSince('objects', 2, 2)!], []);
});

test('a move that names nothing, a gap, or a version not yet reached: not known', () => {
  const steps = new VersionSteps();
  steps.committed(1, [put('objects', 'a')]);
  steps.moved(2);
  steps.committed(3, [put('objects', 'b')]);
  assert.is(steps.changedSince('objects', 0, 3), undefined);
  assert.is(steps.changedSince('objects', 1, 3), undefined);
  assert.equal([...steps.changedSince('objects', 2, 3)!], ['b']);
  // Steps skipped (versions moved without a step here) or asked beyond the current version.
  const gaps = new VersionSteps();
  gaps.committed(5, [put('objects', 'a')]);
  assert.is(gaps.changedSince('objects', 3, 5), undefined);
  assert.is(gaps.changedSince('objects', 6, 5), undefined);
});

test("another process's commit: known for the collections named, not for the others", () => {
  const steps = new VersionSteps();
  steps.committed(1, [put('objects', 'a'), put('links', 'x')]);
  steps.observed(2, new Map([['objects', new Set(['b'])]]));
  assert.equal([...steps.changedSince('objects', 0, 2)!].sort(), ['a', 'b']);
  assert.is(steps.changedSince('links', 0, 2), undefined);
  assert.equal([...steps.changedSince('links', 0, 1)!], ['x']);
  steps.observed(3, undefined);
  assert.is(steps.changedSince('objects', 2, 3), undefined);
  steps.observed(4, new Map([['objects', new Set(Array.from({ length: 5000 }, (_, i) => `o${i}`))]]));
  assert.is(steps.changedSince('objects', 3, 4), undefined, 'too many ids: not kept');
});

test('bounded: old steps are forgotten, and a large commit names nothing', () => {
  const steps = new VersionSteps();
  for (let v = 1; v <= 100; v++) steps.committed(v, [put('objects', `d${v}`)]);
  assert.is(steps.changedSince('objects', 0, 100), undefined, 'steps beyond the bound are not remembered');
  assert.equal([...steps.changedSince('objects', 98, 100)!], ['d99', 'd100']);
  steps.committed(101, Array.from({ length: 5000 }, (_, i) => put('objects', `big${i}`)));
  assert.is(steps.changedSince('objects', 100, 101), undefined);
  // Large steps push older ones out sooner: 8,192 ids in all.
  const large = new VersionSteps();
  for (let v = 1; v <= 3; v++) large.committed(v, Array.from({ length: 4000 }, (_, i) => put('objects', `v${v}-${i}`)));
  assert.is(large.changedSince('objects', 0, 3), undefined);
  assert.is(large.changedSince('objects', 1, 3)!.size, 8000);
});

test('a versioned cache drops only the changed keys where they are known, everything where not', () => {
  const steps = new VersionSteps();
  let version = 0;
  const cache = new VersionedCache<string, string>(() => version, 100, (since) => steps.changedSince('objects', since, version));
  for (const k of ['a', 'b', 'c']) cache.set(k, `${k}0`, version);
  steps.committed(++version, [put('objects', 'b')]);
  assert.is(cache.get('a'), 'a0');
  assert.is(cache.get('b'), undefined);
  assert.is(cache.get('c'), 'c0');
  cache.set('b', 'b1', version);
  steps.moved(++version);
  assert.is(cache.get('a'), undefined);
  assert.is(cache.get('b'), undefined);
  assert.is(cache.size, 0);
  // A value loaded before a move is not kept, whatever the move changed.
  const loadedAt = version;
  steps.committed(++version, [put('objects', 'z')]);
  cache.set('a', 'stale?', loadedAt);
  assert.is(cache.get('a'), undefined);
});

test.run();
