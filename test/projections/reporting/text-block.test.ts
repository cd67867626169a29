/**
 * A block of texts copied out of a decompressed chunk: each reads back as the text it was cut from,
 * whether its neighbours were kept with it (copied in one stretch) or left behind.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TextBlock } from '../../../src/projections/reporting/text-block.ts';

/** Lines joined by newlines, as a chunk holds its entries, and where each starts and ends. */
const chunk = (lines: readonly string[]) => {
  const bytes = Buffer.from(lines.join('\n'));
  const at: [number, number][] = [];
  let start = 0;
  for (const line of lines) {
    const end = start + Buffer.byteLength(line);
    at.push([start, end]);
    start = end + 1;
  }
  return { bytes, at };
};

test('texts kept side by side and apart read back as they were, in their own bytes', () => {
  const lines = ['{"a":1}', '{"b":"naïve"}', '{"c":[1,2]}', '{"d":"\\t"}', '{"e":null}', '{"f":"€"}'];
  const { bytes, at } = chunk(lines);
  for (const keep of [[0, 1, 2, 3, 4, 5], [1, 2, 4], [0, 5], [3]]) {
    const block = TextBlock.copy(bytes, 'utf8', keep.flatMap((i) => at[i]!));
    keep.forEach((i, j) => {
      assert.is(block.text(j), lines[i], `text ${i} of ${keep}`);
      assert.is(block.size(j), Buffer.byteLength(lines[i]!));
    });
  }
  // Its own copy: the source may be reused or freed.
  const block = TextBlock.copy(bytes, 'utf8', [...at[0]!, ...at[2]!]);
  bytes.fill(0x20);
  assert.is(block.text(1), lines[2]);
});

test('texts side by side are copied in one stretch, a copy for each stretch', () => {
  const lines = ['{"a":1}', '{"b":"naïve"}', '{"c":[1,2]}', '{"d":"\\t"}', '{"e":null}', '{"f":"€"}'];
  const { bytes, at } = chunk(lines);
  let copies = 0;
  const counted = Object.assign(bytes, {
    copy(...args: Parameters<Buffer['copy']>) {
      copies++;
      return Buffer.prototype.copy.apply(bytes, args);
    },
  });
  for (const [keep, stretches] of [[[0, 1, 2, 3, 4, 5], 1], [[1, 2, 4], 2], [[0, 2, 4], 3], [[3, 4], 1]] as const) {
    copies = 0;
    const block = TextBlock.copy(counted, 'utf8', keep.flatMap((i) => at[i]!));
    assert.is(copies, stretches, `copies for ${keep}`);
    keep.forEach((i, j) => assert.is(block.text(j), lines[i], `text ${i} of ${keep}`));
  }
});

test('ASCII text reads back through latin1', () => {
  const lines = ['{"x":"plain"}', '{"y":2}'];
  const { bytes, at } = chunk(lines);
  const block = TextBlock.copy(bytes, 'latin1', at.flat());
  assert.equal([block.text(0), block.text(1)], lines);
});

test.run();
