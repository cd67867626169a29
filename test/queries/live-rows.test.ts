/**
 * The kept rows of live answers stay in id order after writes without sorting every row again:
 * changed rows take their predecessors' places, rows gone leave, new rows are merged in, and the
 * array an answer is reading is never changed under it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RowDoc } from '../../src/projections/read-models.ts';
import { reordered } from '../../src/queries/live-rows.ts';

const random = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const row = (id: string, v: number): RowDoc => ({ id, values: [id, v], labels: [], linkedTo: [] });
const byId = (a: RowDoc, b: RowDoc) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

test('after replacements, removals and additions: the rows of the map, in id order', () => {
  const next = random(3);
  for (let round = 0; round < 200; round++) {
    const n = Math.floor(next() * 300);
    const rows = new Map<string, RowDoc>();
    for (let i = 0; i < n; i++) {
      const id = `r${Math.floor(next() * 1000).toString().padStart(4, '0')}`;
      rows.set(id, row(id, 0));
    }
    const before = [...rows.values()].sort(byId);
    const frozen = [...before];
    const touched = new Set<string>();
    for (let k = Math.floor(next() * 20); k > 0; k--) {
      const id = `r${Math.floor(next() * 1000).toString().padStart(4, '0')}`;
      touched.add(id);
      if (next() < 0.3) rows.delete(id);
      else rows.set(id, row(id, round + 1));
    }
    const after = reordered(before, touched, rows);
    assert.equal(after, [...rows.values()].sort(byId), `round ${round}`);
    assert.equal(before, frozen, 'the array before is left as it was');
  }
});

test('a changed row is the new document, in its place; untouched rows are the same objects', () => {
  const before = ['a', 'b', 'c', 'd'].map((id) => row(id, 0));
  const rows = new Map(before.map((r) => [r.id, r]));
  const changed = row('c', 1);
  rows.set('c', changed);
  const after = reordered(before, ['c'], rows);
  assert.is(after[2], changed);
  assert.is(after[0], before[0]);
  assert.is.not(after, before);
});

test.run();
