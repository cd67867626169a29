import { fork } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { PdfProcessInput, PdfProcessMessage } from './pdf-process.ts';

export interface PdfLimits {
  /** The whole read, process start included; then the process is killed. */
  readonly timeoutMs?: number;
  /** The reading process's JavaScript heap (V8 old generation), in MiB. */
  readonly maxHeapMb?: number;
  /** Images in the page with more pixels than this are left out of the drawing (decompression bombs). */
  readonly maxImagePixels?: number;
  /**
   * How far the reading process's resident memory may grow once PDF.js is loaded, in MiB (checked where the
   * system tells it: Linux). Decoded streams live outside the heap: a 1 MB file can inflate a content stream
   * to gigabytes.
   */
  readonly maxMemoryMb?: number;
}

// Generous for a loaded 2-core machine (the process loads PDF.js before it reads); a hostile file still ends here.
export const DEFAULT_PDF_LIMITS: Required<PdfLimits> = { timeoutMs: 20_000, maxHeapMb: 256, maxImagePixels: 50_000_000, maxMemoryMb: 1024 };
const MEMORY_CHECK_MS = 20;

export interface PdfRead {
  readonly numberOfPages: number;
  /** The first page as shown, in points. */
  readonly width: number;
  readonly height: number;
  /** The first page drawn with its largest side at most drawMaxPixels, as RGBA pixels; absent if drawing failed. */
  readonly drawing?: { readonly width: number; readonly height: number; readonly rgba: Uint8Array };
  /** Why there is no drawing. */
  readonly drawingProblem?: string;
}

export class PdfUnreadableError extends Error {}

// Run from the TypeScript sources (tsx) or from compiled JavaScript: the process's module is the sibling file.
const fromSources = import.meta.url.endsWith('.ts');
const processFile = new URL(fromSources ? './pdf-process.ts' : './pdf-process.js', import.meta.url);
const loader = fromSources ? ['--import', import.meta.resolve('tsx')] : [];

/** Resident memory of a process in bytes, where /proc tells it. */
const residentBytes = async (pid: number): Promise<number | undefined> => {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
};

/** Told when a reading process starts and when it has exited (to count them). */
export type PdfProcessObserver = (change: 'started' | 'exited') => void;

// A killed process that has still not exited by then no longer holds up the read's answer.
const EXIT_WAIT_MS = 5_000;

/**
 * Reads a PDF in a process of its own, bounded in time, heap and memory. Resolves with the
 * properties once they are read, with the drawing if that also succeeded; rejects
 * (PdfUnreadableError) when not even the properties could be read. Settles only once the process
 * has exited, so that a bound on reads at once bounds the processes alive.
 */
export const readPdf = (bytes: Buffer, drawMaxPixels: number, limits: PdfLimits = {}, observe?: PdfProcessObserver): Promise<PdfRead> => {
  const { timeoutMs, maxHeapMb, maxImagePixels, maxMemoryMb } = { ...DEFAULT_PDF_LIMITS, ...limits };
  return new Promise<PdfRead>((resolve, reject) => {
    const child = fork(processFile, [], {
      execArgv: [...loader, `--max-old-space-size=${maxHeapMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    // The end of its standard error names a fatal error (V8's out-of-memory report) when it dies of one.
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    let read: PdfRead | undefined;
    let settled = false;
    let exited = false;
    let answer: (() => void) | undefined;
    let exitWait: NodeJS.Timeout | undefined;
    const finish = (problem?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watch);
      // Properties already read stand even when drawing the page then failed.
      const outcome = read;
      answer = outcome
        ? () => resolve(outcome.drawing || !problem ? outcome : { ...outcome, drawingProblem: problem })
        : () => reject(new PdfUnreadableError(problem ?? 'the PDF could not be read'));
      // A process that never started has no exit to wait for.
      if (exited || child.pid === undefined) return answer();
      child.kill('SIGKILL');
      exitWait = setTimeout(answer, EXIT_WAIT_MS).unref();
    };
    const timer = setTimeout(() => finish(`reading the PDF did not finish within ${timeoutMs} ms`), timeoutMs);
    let baseline: number | undefined;
    let watch: NodeJS.Timeout | undefined;
    const watchMemory = async () => {
      baseline = await residentBytes(child.pid!);
      if (baseline === undefined || settled) return;
      watch = setInterval(() => {
        void residentBytes(child.pid!).then((rss) => {
          if (rss !== undefined && rss - baseline! > maxMemoryMb * 1024 ** 2) finish(`reading the PDF used more than ${maxMemoryMb} MiB of memory`);
        });
      }, MEMORY_CHECK_MS);
    };
    child.on('message', (message: PdfProcessMessage) => {
      if (message.kind === 'ready') {
        const input: PdfProcessInput = { bytes, drawMaxPixels, maxImagePixels };
        void watchMemory().then(() => !settled && child.send(input));
      } else if (message.kind === 'properties') read = { numberOfPages: message.numberOfPages, width: message.width, height: message.height };
      else if (message.kind === 'drawing' && read) read = { ...read, drawing: { width: message.width, height: message.height, rgba: message.rgba } };
      else if (message.kind === 'failed') finish(message.message);
      else if (message.kind === 'done') finish();
    });
    child.on('error', (e) => finish(e.message));
    let spawned = false;
    child.on('spawn', () => {
      spawned = true;
      observe?.('started');
    });
    child.on('exit', (code, signal) => {
      exited = true;
      if (spawned) observe?.('exited');
      clearTimeout(exitWait);
      if (settled) return answer!();
      finish(/heap out of memory|Allocation failed/.test(stderr) ? `reading the PDF ran out of memory (heap limit ${maxHeapMb} MiB)` : `the PDF reader stopped (${signal ?? `exit code ${code}`})`);
    });
  });
};
