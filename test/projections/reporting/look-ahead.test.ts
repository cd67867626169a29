import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { lookAhead } from '../../../src/projections/reporting/facts.ts';
import type { CollectionDef, FactSource } from '../../../src/domain/reporting/collection.ts';

const test = suite('Reporting facts: what a row reads of other objects');

const collection = (...sources: FactSource[]): CollectionDef =>
  ({ name: 'c', description: '', types: ['t'], facts: sources.map((source, i) => ({ name: `f${i}`, type: 'text', description: '', source })) }) as unknown as CollectionDef;

const chain = (depth: number): FactSource => (depth === 0 ? { attribute: 'a' } : { attribute: 'a', linked: chain(depth - 1) });

test('only the linked chains are followed when every fact says how far it reads', () => {
  const c = collection({ title: true }, { attribute: 'x' }, chain(1), chain(3), { function: 'phd:progress-percent' });
  const ahead = lookAhead(c, 3);
  assert.is(ahead.walk, false);
  assert.equal(ahead.chains, [chain(1), chain(3)]);
});

test('every object in reach is fetched for a chain longer than the look-ahead or a function that may look anywhere', () => {
  assert.is(lookAhead(collection(chain(4)), 3).walk, true);
  assert.is(lookAhead(collection({ function: 'no-such-function' }), 3).walk, true);
});

test.run();
