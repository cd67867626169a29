/** Why a PDF was not read: the reader was busy. The file is stored without its PDF properties. */
export class PdfReadsBusyError extends Error {
  override readonly name = 'PdfReadsBusyError';
}

export interface PdfReadBounds {
  /** PDF reads at once (each runs a process of its own of 100-300 MB). */
  readonly concurrency: number;
  /** Reads waiting for a turn; any more are not read. */
  readonly queue: number;
  /** Longest a read waits for a turn before it is given up. */
  readonly maxWaitMs: number;
}

/**
 * At most `concurrency` PDF reads run at once, at most `queue` wait (first come, first served) and
 * none waits longer than `maxWaitMs`: several uploads of PDFs at once would otherwise start a
 * reading process each. A read that does not get a turn is refused with PdfReadsBusyError, so the
 * upload goes on without the PDF's properties rather than failing or hanging.
 */
export class PdfReadLimiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly bounds: PdfReadBounds) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.bounds.concurrency) await this.turn();
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next in line, so `running` never dips below the bound while some wait.
      if (next) next();
      else this.running--;
    }
  }

  private turn(): Promise<void> {
    const { queue, maxWaitMs } = this.bounds;
    if (this.waiting.length >= queue) {
      return Promise.reject(new PdfReadsBusyError(`not read: ${this.running} PDF reads running and ${this.waiting.length} waiting, the most allowed (SVC_PDF_CONCURRENCY, SVC_PDF_QUEUE)`));
    }
    return new Promise<void>((resolve, reject) => {
      const granted = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiting.indexOf(granted);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        reject(new PdfReadsBusyError(`not read: no turn among ${this.running} PDF reads running within ${maxWaitMs} ms (SVC_PDF_QUEUE_WAIT_MS)`));
      }, maxWaitMs);
      this.waiting.push(granted);
    });
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
