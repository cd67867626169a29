import { Worker } from 'node:worker_threads';

/** Decompresses a snapshot chunk's stored bytes into its text. */
export type Inflate = (z: Uint8Array) => Promise<Buffer>;

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
 */
export class InflateThread {
  private readonly worker: Worker;
  private readonly asked: { resolve(text: Buffer): void; reject(e: Error): void }[] = [];
  private ended: string | undefined;

  constructor() {
    this.worker = new Worker(WORKER, { eval: true });
    // An idle thread must not keep the process alive.
    this.worker.unref();
    this.worker.on('message', (m: { text: ArrayBuffer } | { error: string }) => {
      const asked = this.asked.shift();
      if ('text' in m) asked?.resolve(Buffer.from(m.text));
      else asked?.reject(new Error(`Snapshot chunk not decompressed: ${m.error}`));
      if (this.asked.length === 0) this.worker.unref();
    });
    const stopped = (reason: string) => {
      this.ended ??= reason;
      for (const a of this.asked.splice(0)) a.reject(new Error(`The decompression thread stopped (${reason})`));
    };
    this.worker.on('error', (e: Error) => stopped(e.message));
    this.worker.on('exit', (code) => stopped(`exit code ${code}`));
  }

  /**
   * The text of a chunk's stored bytes, which stay the caller's. Only they are sent: a message copies
   * the whole memory under a view (a driver's blob may be a view on a large reply).
   */
  inflate: Inflate = (z) => {
    if (this.ended !== undefined) return Promise.reject(new Error(`The decompression thread stopped (${this.ended})`));
    return new Promise((resolve, reject) => {
      this.asked.push({ resolve, reject });
      this.worker.ref();
      if (z.byteOffset === 0 && z.byteLength === z.buffer.byteLength) this.worker.postMessage(z);
      else {
        const own = new Uint8Array(z);
        this.worker.postMessage(own, [own.buffer]);
      }
    });
  };

  async close(): Promise<void> {
    if (this.ended !== undefined) return;
    this.ended = 'closed';
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage('close');
    await exited;
  }
}
