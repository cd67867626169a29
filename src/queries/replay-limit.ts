/** Refusal of work past a limiter's queue: nothing was done, the client may ask again later. */
export class BusyError extends Error {
  override readonly name = 'BusyError';
  constructor(
    message: string,
    /** Seconds after which asking again is sensible. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/**
 * At most `concurrency` tasks run at once, at most `queue` wait for a turn (first come, first
 * served), and any more are refused at once with BusyError. Replays for `at` answers each hold a
 * copy of a fold's state and keep the event loop busy: without a bound, 128 at once made the
 * process unresponsive for seconds at hundreds of MB.
 */
export class ReplayLimiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly concurrency: number,
    readonly queue: number,
    private readonly what = 'answers as at a past instant',
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queue) {
        throw new BusyError(`Too many ${this.what} at once (${this.running} running, ${this.waiting.length} waiting); retry later`, 1);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next in line, so `running` never dips below the bound while some wait.
      if (next) next();
      else this.running--;
    }
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }
}
