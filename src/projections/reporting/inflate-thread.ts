import { Worker } from 'node:worker_threads';
import { endWorker } from '../../drivers/end-worker.ts';
import { inflateHere, type Inflate } from './snapshot-chunks.ts';

/**
 * The thread's code: Brotli-decompresses what it is sent, in one call, and sends the text back in
 * a buffer of its own, moved rather than copied. Plain JavaScript, so that it needs no loader.
 */
const WORKER = `
const { parentPort } = require('node:worker_threads');
const { brotliDecompressSync } = require('node:zlib');
parentPort.on('message', (z) => {
  if (z === 'close') return parentPort.close();
  let out;
  try {
    out = brotliDecompressSync(z, { chunkSize: 1024 * 1024 });
  } catch (e) {
    return parentPort.postMessage({ error: String(e && e.message) });
  }
  // Only a buffer that is the text's alone may move: a view may share its memory with others.
  const text = out.byteOffset === 0 && out.buffer.byteLength === out.byteLength ? out.buffer : out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
  parentPort.postMessage({ text }, [text]);
});
`;

/**
 * Decompresses snapshot chunks on a thread of its own while the event loop applies the ones before:
 * a chain of 57 chunks (the middle of a 1M-event history) decompresses in tens of milliseconds, and
 * done on the loop it added them to every cold `at` answer. Handed to libuv's thread pool through
 * zlib's asynchronous calls, each cost the loop as much as decompressing it there (a stream, its
 * output buffer and callbacks); here a chunk costs the loop one message. Answers come back in the
 * order asked. Made once per process (its composition root); `close` ends the thread.
 *
 * The thread only saves the loop time: once it is gone (closed, or died), what it was asked and is
 * asked later is decompressed on the loop, so no answer fails for want of it.
 */
export class InflateThread {
  private readonly worker: Worker;
  /** What the thread was sent and has not answered, in order; `z` is the caller's, left as it was. */
  private readonly asked: { z: Uint8Array; resolve(text: Buffer): void; reject(e: Error): void }[] = [];
  private gone = false;

  constructor() {
    this.worker = new Worker(WORKER, { eval: true });
    // An idle thread must not keep the process alive.
    this.worker.unref();
    this.worker.on('message', (m: { text: ArrayBuffer } | { error: string }) => {
      const asked = this.asked.shift();
      if ('text' in m) asked?.resolve(Buffer.from(m.text));
      else asked?.reject(new Error(`Snapshot chunk not decompressed: ${m.error}`));
      // A closing thread is waited for until it has ended.
      if (this.asked.length === 0 && !this.gone) this.worker.unref();
    });
    const stopped = () => {
      this.gone = true;
      for (const a of this.asked.splice(0)) inflateHere(a.z).then(a.resolve, a.reject);
    };
    this.worker.on('error', stopped);
    this.worker.on('exit', stopped);
  }

  /**
   * The text of a chunk's stored bytes, which stay the caller's. Only they are sent: a message copies
   * the whole memory under a view (a driver's blob may be a view on a large reply).
   */
  inflate: Inflate = (z) => {
    if (this.gone) return inflateHere(z);
    return new Promise((resolve, reject) => {
      this.asked.push({ z, resolve, reject });
      this.worker.ref();
      if (z.byteOffset === 0 && z.byteLength === z.buffer.byteLength) this.worker.postMessage(z);
      else {
        const own = new Uint8Array(z);
        this.worker.postMessage(own, [own.buffer]);
      }
    });
  };

  /** Ends the thread once it has answered what it was sent. */
  async close(): Promise<void> {
    if (this.gone) return;
    this.gone = true;
    await endWorker(this.worker);
  }
}
