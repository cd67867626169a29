import { Worker } from 'node:worker_threads';
import type { PdfWorkerInput, PdfWorkerMessage } from './pdf-worker.ts';

export interface PdfLimits {
  /** The whole read, thread start included; then the thread is stopped. */
  readonly timeoutMs?: number;
  /** The reading thread's JavaScript heap (V8 old generation), in MiB. */
  readonly maxHeapMb?: number;
  /** Images in the page with more pixels than this are left out of the drawing (decompression bombs). */
  readonly maxImagePixels?: number;
}

// Generous for a loaded 2-core machine (the thread loads PDF.js before it reads); a hostile file still ends here.
export const DEFAULT_PDF_LIMITS: Required<PdfLimits> = { timeoutMs: 20_000, maxHeapMb: 256, maxImagePixels: 50_000_000 };

export interface PdfRead {
  readonly numberOfPages: number;
  /** The first page as shown, in points. */
  readonly width: number;
  readonly height: number;
  /** The first page drawn with its largest side at most drawMaxPixels, as RGBA pixels; absent if drawing failed. */
  readonly drawing?: { readonly width: number; readonly height: number; readonly rgba: Uint8Array };
}

export class PdfUnreadableError extends Error {}

// Run from the TypeScript sources (tsx) or from compiled JavaScript: the worker is the sibling file.
const fromSources = import.meta.url.endsWith('.ts');
const workerFile = new URL(fromSources ? './pdf-worker.ts' : './pdf-worker.js', import.meta.url).href;
// A worker thread does not inherit the TypeScript loader of the thread that starts it.
const bootstrap = fromSources
  ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerFile)}); });`
  : `import(${JSON.stringify(workerFile)});`;

/**
 * Reads a PDF in a thread of its own, bounded in time and heap. Resolves with the properties once
 * they are read, with the drawing if that also succeeded in time; rejects (PdfUnreadableError)
 * when not even the properties could be read.
 */
export const readPdf = (bytes: Buffer, drawMaxPixels: number, limits: PdfLimits = {}): Promise<PdfRead> => {
  const { timeoutMs, maxHeapMb, maxImagePixels } = { ...DEFAULT_PDF_LIMITS, ...limits };
  const data = new Uint8Array(bytes.length);
  data.set(bytes);
  const input: PdfWorkerInput = { bytes: data, drawMaxPixels, maxImagePixels };
  return new Promise<PdfRead>((resolve, reject) => {
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: input,
      transferList: [data.buffer],
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb, maxYoungGenerationSizeMb: Math.max(1, Math.min(32, maxHeapMb / 8)) },
    });
    let read: PdfRead | undefined;
    let settled = false;
    const finish = (problem?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      // Properties already read stand even when drawing the page then failed.
      if (read) resolve(read);
      else reject(new PdfUnreadableError(problem ?? 'the PDF could not be read'));
    };
    const timer = setTimeout(() => finish(`reading the PDF did not finish within ${timeoutMs} ms`), timeoutMs);
    worker.on('message', (message: PdfWorkerMessage) => {
      if (message.kind === 'properties') read = { numberOfPages: message.numberOfPages, width: message.width, height: message.height };
      else if (message.kind === 'drawing' && read) read = { ...read, drawing: { width: message.width, height: message.height, rgba: message.rgba } };
      else if (message.kind === 'failed') finish(message.message);
      else if (message.kind === 'done') finish();
    });
    worker.on('error', (e: Error & { code?: string }) =>
      finish(e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? `reading the PDF ran out of memory (heap limit ${maxHeapMb} MiB)` : e.message),
    );
    worker.on('exit', (code) => finish(`the PDF reader stopped (exit code ${code})`));
  });
};
