/**
 * Snapshot chunks decompressed on a thread of their own come back as the text that was compressed,
 * in the order asked; a chunk that is not Brotli fails alone. Once the thread is gone (closed, or
 * died), nothing is left unanswered: the loop decompresses instead.
 */
import { brotliCompressSync } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InflateThread } from '../../../src/projections/reporting/inflate-thread.ts';
import { inflateHere } from '../../../src/projections/reporting/snapshot-chunks.ts';

const texts = [Buffer.from('{"a":1}\n{"b":"naïve"}'), Buffer.alloc(3_000_000, 'x'), Buffer.from(''), Buffer.from('€'.repeat(50_000))];

test('texts come back whole and in order, a bad chunk fails alone, and the thread goes on', async () => {
  const thread = new InflateThread();
  try {
    const asked = texts.map((t) => thread.inflate(brotliCompressSync(t)));
    const bad = thread.inflate(Buffer.from('not brotli at all'));
    const after = thread.inflate(brotliCompressSync(texts[0]!));
    const back = await Promise.all(asked);
    back.forEach((b, i) => {
      assert.ok(Buffer.isBuffer(b), `text ${i} is a Buffer`);
      assert.ok(b.equals(texts[i]!), `text ${i} whole`);
    });
    await bad.then(
      () => assert.unreachable('a chunk that is not Brotli decompressed'),
      (e: Error) => assert.match(e.message, /not decompressed/),
    );
    assert.ok((await after).equals(texts[0]!), 'the thread answers after a failure');
  } finally {
    await thread.close();
  }
});

test('the same text as on the event loop; the compressed bytes stay the caller’s', async () => {
  const thread = new InflateThread();
  try {
    const z = brotliCompressSync(texts[3]!);
    const copy = Buffer.from(z);
    assert.ok((await thread.inflate(z)).equals(await inflateHere(z)));
    assert.ok(z.equals(copy), 'the compressed bytes are left as they were');
    // A view on a larger buffer (as a driver's blob may be): only its bytes are read, and left as they were.
    const larger = Buffer.concat([Buffer.from('head'), z, Buffer.from('tail')]);
    const view = larger.subarray(4, 4 + z.length);
    assert.ok((await thread.inflate(view)).equals(texts[3]!));
    assert.ok(view.equals(copy) && larger.subarray(0, 4).toString() === 'head', 'the view and what is around it are left as they were');
  } finally {
    await thread.close();
  }
});

test('a thread that died leaves nothing unanswered: what it was sent, and what comes after, is decompressed on the loop', async () => {
  const thread = new InflateThread();
  try {
    // Running (a thread ended while it starts up can abort the process: node's, not this code's).
    assert.ok((await thread.inflate(brotliCompressSync(texts[0]!))).equals(texts[0]!));
    const asked = texts.map((t) => thread.inflate(brotliCompressSync(t)));
    // As an out-of-memory end of the thread would.
    await (thread as unknown as { worker: Worker }).worker.terminate();
    const back = await Promise.all([...asked, thread.inflate(brotliCompressSync(texts[0]!))]);
    back.forEach((b, i) => assert.ok(b.equals(texts[i % texts.length]!), `text ${i} whole`));
    await thread.inflate(Buffer.from('not brotli at all')).then(
      () => assert.unreachable('a chunk that is not Brotli decompressed'),
      (e: Error) => assert.instance(e, Error),
    );
  } finally {
    await thread.close();
  }
});

test('a closed thread has answered what it was sent, and what comes after is decompressed on the loop', async () => {
  const thread = new InflateThread();
  const asked = thread.inflate(brotliCompressSync(texts[1]!));
  await thread.close();
  assert.ok((await asked).equals(texts[1]!));
  assert.ok((await thread.inflate(brotliCompressSync(texts[0]!))).equals(texts[0]!));
});

test.run();
