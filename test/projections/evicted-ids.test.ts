import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EvictedIds } from '../../src/projections/evicted-ids.ts';

const test = suite('EvictedIds');

/** Ids shaped as the service's object refs: 12 characters of consonants and digits, from a fixed sequence. */
const refs = (n: number, seed: number): string[] => {
  const alphabet = '0123456789bcdfghjkmnpqrstvwxyz';
  let x = seed;
  return Array.from({ length: n }, () => {
    let id = '';
    for (let i = 0; i < 12; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      id += alphabet[(x >>> 16) % alphabet.length];
    }
    return id;
  });
};

test('an id added is always held; one never added almost never is', () => {
  const added = refs(150_000, 1);
  // What a rebuild's 24 MB cache share asks for: 768 kB, rounded down to 512 kB.
  const filter = new EvictedIds(768 * 1024);
  for (const id of added) filter.add(0, id);
  for (const id of added) assert.ok(filter.mayHold(0, id), id);
  const others = refs(100_000, 2);
  const wrong = others.filter((id) => filter.mayHold(0, id)).length;
  // 512 kB holds 28 bits per id here: 4 probes are wrong for about one id in 2,800.
  assert.ok(wrong < 100, `${wrong} of 100,000 ids never added said to be held`);
});

test('collections are told apart: an id added for one is not held for another', () => {
  const filter = new EvictedIds(64 * 1024);
  const ids = refs(1000, 3);
  for (const id of ids) filter.add(1, id);
  assert.ok(ids.every((id) => filter.mayHold(1, id)));
  const elsewhere = ids.filter((id) => filter.mayHold(0, id) || filter.mayHold(2, id)).length;
  assert.ok(elsewhere < 5, `${elsewhere} of 1,000 held for another collection`);
});

test('its size is a power of two of at least 4 kB, never more than asked for past that', () => {
  assert.is(new EvictedIds(0).bytes, 4096);
  assert.is(new EvictedIds(5000).bytes, 4096);
  assert.is(new EvictedIds(8192).bytes, 8192);
  assert.is(new EvictedIds(768 * 1024).bytes, 512 * 1024);
});

test.run();
