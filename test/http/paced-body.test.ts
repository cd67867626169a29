/**
 * A long body gives the event loop back while it is written: the short requests arriving meanwhile
 * wait for a slice of it, not for all of it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Readable } from 'node:stream';
import { pacedBody } from '../../src/http/paced-body.ts';

const slices = Array.from({ length: 32 }, (_, i) => Buffer.alloc(32 * 1024, 97 + (i % 26)));

/** Turns of the event loop seen while `body` is read to its end, and the bytes read. */
const read = async (body: Readable) => {
  let turns = 0;
  let reading = true;
  const tick = () => {
    turns++;
    if (reading) setImmediate(tick);
  };
  setImmediate(tick);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  reading = false;
  return { turns, bytes: Buffer.concat(chunks) };
};

test('1 MiB in 32 KiB slices, 64 KiB a turn: every byte, in order, over at least 15 turns', async () => {
  const { turns, bytes } = await read(pacedBody(slices, 64 * 1024));
  assert.ok(bytes.equals(Buffer.concat(slices)));
  assert.ok(turns >= 15, `${turns} turns`);
  // The same slices as one stream, unpaced, are read in a turn or two.
  assert.ok((await read(Readable.from(slices))).turns <= 3);
});

test('no slices: an empty body', async () => {
  assert.is((await read(pacedBody([]))).bytes.length, 0);
});

test.run();
