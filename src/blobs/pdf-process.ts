/**
 * A child process that reads one PDF with PDF.js (started by pdf-reader.ts): the page count and
 * the first page's shown size, then that page drawn small on a @napi-rs/canvas. PDF.js parses in
 * long synchronous stretches and keeps decoded streams outside the JavaScript heap, so a hostile
 * file runs here, in a process of its own that can be stopped, measured and capped, and whose
 * running out of memory ends only itself (a worker thread's can abort the whole process).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfProcessInput {
  readonly bytes: Uint8Array;
  /** The largest side of the drawing, in pixels (the page is drawn no larger than its size in points). */
  readonly drawMaxPixels: number;
  /** Images with more pixels than this are left out of the drawing rather than decoded. */
  readonly maxImagePixels: number;
}

export type PdfProcessMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'properties'; readonly numberOfPages: number; readonly width: number; readonly height: number }
  | { readonly kind: 'drawing'; readonly width: number; readonly height: number; readonly rgba: Uint8Array }
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly message: string };

const send = (message: PdfProcessMessage) => new Promise<void>((resolve) => process.send!(message, undefined, {}, () => resolve()));

// Fonts a PDF names without embedding them, CMaps and the image decoders' WebAssembly ship in the package.
const pdfjsDir = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const dir = (name: string) => join(pdfjsDir, name) + '/';

const run = async (input: PdfProcessInput): Promise<void> => {
  const task = getDocument({
    // IPC hands a Buffer back; PDF.js takes a plain Uint8Array only.
    data: new Uint8Array(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength),
    standardFontDataUrl: dir('standard_fonts'),
    cMapUrl: dir('cmaps'),
    cMapPacked: true,
    wasmUrl: dir('wasm'),
    iccUrl: dir('iccs'),
    maxImageSize: input.maxImagePixels,
    // Nothing from the file is ever compiled to code (fonts are drawn by the interpreter).
    isEvalSupported: false,
    enableXfa: false,
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: VerbosityLevel.ERRORS,
  });
  const doc = await task.promise;
  try {
    const page = await doc.getPage(1);
    // The page as it is shown: crop box, turned by /Rotate.
    const shown = page.getViewport({ scale: 1 });
    const width = Math.round(shown.width);
    const height = Math.round(shown.height);
    await send({ kind: 'properties', numberOfPages: doc.numPages, width, height });
    if (width < 1 || height < 1) return;

    const scale = Math.min(1, input.drawMaxPixels / Math.max(shown.width, shown.height));
    const viewport = page.getViewport({ scale });
    const canvas = createCanvas(Math.max(1, Math.round(viewport.width)), Math.max(1, Math.round(viewport.height)));
    // PDF.js's parameter types are the DOM's; the napi-rs canvas implements the 2D API it uses.
    await page.render({ canvas: canvas as never, viewport, background: 'rgb(255,255,255)' }).promise;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    // Copied, not transferred: at most drawMaxPixels² × 4 bytes, and the canvas may own its memory.
    await send({ kind: 'drawing', width: canvas.width, height: canvas.height, rgba: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
  } finally {
    await doc.destroy();
  }
};

// PDF.js's own worker code, loaded now rather than on the first document (PDF.js uses it in this thread when it
// finds it here), so that everything is loaded before the starting process takes this one's memory as its baseline.
const workerModule = 'pdfjs-dist/legacy/build/pdf.worker.mjs';
(globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import(workerModule);

process.once('message', (input: PdfProcessInput) => {
  run(input)
    .then(
      () => send({ kind: 'done' }),
      (e: unknown) => send({ kind: 'failed', message: e instanceof Error ? e.message : String(e) }),
    )
    .finally(() => process.disconnect());
});
await send({ kind: 'ready' });
