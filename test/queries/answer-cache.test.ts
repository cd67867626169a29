import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerCache } from '../../src/queries/answer-cache.ts';

const test = suite('AnswerCache: serialised answers for one version, bounded in bytes');
// Answers come as slices: two here, so their bytes are counted over every slice.
const bytes = (n: number, fill = 'x') => [Buffer.from(fill.repeat(n - (n >> 1))), Buffer.from(fill.repeat(n >> 1))];
const text = (slices: readonly Buffer[]) => Buffer.concat(slices).toString();

test('kept for the version read before computing; a moved version computes again', async () => {
  const cache = new AnswerCache(1000);
  let version = 1;
  let computed = 0;
  const compute = async () => bytes(10, String(++computed));
  assert.is(text(await cache.through('k', () => version, compute)), '1'.repeat(10));
  assert.is(text(await cache.through('k', () => version, compute)), '1'.repeat(10));
  version = 2;
  assert.is(text(await cache.through('k', () => version, compute)), '2'.repeat(10));
  assert.is(computed, 2);
  assert.is(cache.bytes, 10);
});

test('an answer computed while the version moved is served once but not kept', async () => {
  const cache = new AnswerCache(1000);
  let version = 1;
  const first = await cache.through('k', () => version, async () => {
    version = 2;
    return bytes(5, 'a');
  });
  assert.is(text(first), 'aaaaa');
  assert.is(cache.size, 0);
  assert.is(text(await cache.through('k', () => version, async () => bytes(5, 'b'))), 'bbbbb');
});

test('the least recently used answers go once the bytes are past the bound; one too large is not kept', async () => {
  const cache = new AnswerCache(100);
  const v = () => 1;
  await cache.through('a', v, async () => bytes(40));
  await cache.through('b', v, async () => bytes(40));
  await cache.through('a', v, async () => bytes(40, 'y'));
  await cache.through('c', v, async () => bytes(40));
  assert.is(cache.bytes, 80);
  let again = 0;
  await cache.through('b', v, async () => (again++, bytes(40)));
  assert.is(again, 1, 'b was the least recently used');
  await cache.through('huge', v, async () => bytes(60));
  assert.ok(cache.bytes <= 100);
  let huge = 0;
  await cache.through('huge', v, async () => (huge++, bytes(60)));
  assert.is(huge, 1);
});

test('a caller that read the version before loading its sources tags its answer with that one', async () => {
  const cache = new AnswerCache(1000);
  let version = 1;
  // Read at 1, then the version moved while the caller loaded: its answer is not kept for 2.
  const read = version;
  version = 2;
  assert.is(text(await cache.through('k', () => version, async () => bytes(4, 'a'), read)), 'aaaa');
  assert.is(cache.size, 0, 'an answer from sources read at 1 is never kept for 2');
  // Read at 2 and still 2: kept, and served to the next caller that read 2.
  assert.is(text(await cache.through('k', () => version, async () => bytes(4, 'b'), version)), 'bbbb');
  assert.is(text(await cache.through('k', () => version, async () => bytes(4, 'c'), version)), 'bbbb');
});

test('callers asking at once share one computation; a negative version keeps nothing', async () => {
  const cache = new AnswerCache(1000);
  let computed = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const compute = async () => {
    computed++;
    await gate;
    return bytes(3);
  };
  const both = Promise.all([cache.through('k', () => 7, compute), cache.through('k', () => 7, compute)]);
  release();
  await both;
  assert.is(computed, 1);
  await cache.through('off', () => -1, async () => bytes(3));
  await cache.through('off', () => -1, async () => (computed++, bytes(3)));
  assert.is(computed, 2);
});

test.run();
