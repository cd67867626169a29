import { Worker } from 'node:worker_threads';
import { workerBootstrap } from '../../drivers/worker-bootstrap.ts';
import { endWorker } from '../../drivers/end-worker.ts';
import { fromWire, type Committed, type EncodedAppend, type WireError } from './sqlite-append.ts';

const bootstrap = workerBootstrap(import.meta.url, 'sqlite-append-worker');

export interface AppendWorkerData {
  readonly file: string;
}

export interface AppendRequest {
  readonly id: number;
  readonly appends: readonly EncodedAppend[];
  readonly times: readonly number[];
}

export type WriterMessage = { readonly id: number; readonly committed: Committed } | { readonly id: number; readonly error: WireError };

/**
 * The writer thread stopped (crashed, was terminated, could not open the file) before answering.
 * The append may or may not have been committed: appending the same events again (same ids) is safe.
 */
export class AppendThreadStoppedError extends Error {
  override readonly name = 'AppendThreadStoppedError';
  constructor(readonly reason: string) {
    super(`The event store's writer thread stopped before answering (${reason}): the append may or may not have been written; appending the same events again is safe`);
  }
}

interface Waiter {
  resolve(committed: Committed): void;
  reject(error: Error): void;
}

/**
 * The main thread's side of the writer thread (`sqlite-append-worker.ts`). The thread is started by
 * the first append and again by the first one after it stopped, so a crash fails the appends it had
 * not answered (never leaving them waiting) and the store goes on with a fresh thread; a thread that
 * cannot start fails every append with the reason. While nothing is waiting for it the thread does
 * not keep the process alive.
 */
export class SqliteAppendThread {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiter>();
  private nextId = 0;
  private closed = false;

  constructor(private readonly file: string) {}

  append(appends: readonly EncodedAppend[], times: readonly number[]): Promise<Committed> {
    if (this.closed) return Promise.reject(new Error('The event store is closed'));
    const worker = this.worker ?? this.start();
    const id = ++this.nextId;
    return new Promise<Committed>((resolve, reject) => {
      if (this.waiting.size === 0) worker.ref();
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, appends, times } satisfies AppendRequest);
    });
  }

  /** Whether a writer thread is running now (it starts with the first append). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /**
   * Ends the writer thread at once, as a crash would: the appends it had not answered fail with
   * AppendThreadStoppedError (a transaction it had begun is rolled back with its connection).
   */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  /** Lets the thread answer every append posted so far, then ends it; later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    await endWorker(worker);
  }

  private start(): Worker {
    const worker = new Worker(bootstrap, { eval: true, workerData: { file: this.file } satisfies AppendWorkerData });
    worker.unref();
    worker.on('message', (message: WriterMessage) => {
      const waiter = this.waiting.get(message.id);
      if (!waiter) return;
      this.waiting.delete(message.id);
      if (this.waiting.size === 0 && !this.closed) worker.unref();
      if ('error' in message) waiter.reject(fromWire(message.error));
      else waiter.resolve(message.committed);
    });
    worker.on('error', (e) => this.stopped(worker, e.message));
    worker.on('exit', (code) => this.stopped(worker, `exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private stopped(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(new AppendThreadStoppedError(reason));
    // After an uncaught error the thread is ending anyway; make sure it does.
    void worker.terminate();
  }
}
