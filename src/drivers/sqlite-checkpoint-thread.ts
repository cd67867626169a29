import { Worker } from 'node:worker_threads';
import type { CheckpointResult } from './sqlite.ts';
import { workerBootstrap } from './worker-bootstrap.ts';

const bootstrap = workerBootstrap(import.meta.url, 'sqlite-checkpoint-worker');

export interface CheckpointWorkerData {
  readonly file: string;
  readonly everyMs: number;
}

/**
 * Copies a WAL-mode SQLite file's log back into the file from a thread of its own, every `everyMs`
 * and when asked (`now`), so that the connection serving requests can turn its own checkpoints
 * off. SQLite runs those inside the commit that takes the log past 1,000 pages, on the committing
 * thread, and a checkpoint syncs the database file: 170-410 ms on this machine's disk, during which
 * the event loop answered no request. The checkpoints are passive: they never wait for a lock nor
 * hold up a reader or a writer of any process. Should the thread stop (it could not open the file,
 * or failed), `onStopped` is told once, with the reason.
 */
export class SqliteCheckpointThread {
  private readonly worker: Worker;
  /** Callers of `now`, answered in the order they asked. */
  private readonly asked: { resolve(r: CheckpointResult): void; reject(e: Error): void }[] = [];
  private ended = false;

  constructor(file: string, everyMs: number, onStopped: (reason: string) => void) {
    this.worker = new Worker(bootstrap, { eval: true, workerData: { file, everyMs } satisfies CheckpointWorkerData });
    // Checkpoints on a timer must not keep the process alive.
    this.worker.unref();
    this.worker.on('message', (result: CheckpointResult) => {
      this.asked.shift()?.resolve(result);
      if (this.asked.length === 0) this.worker.unref();
    });
    const stopped = (reason: string) => {
      if (this.ended) return;
      this.ended = true;
      for (const a of this.asked.splice(0)) a.reject(new Error(`The checkpoint thread of ${file} stopped (${reason})`));
      onStopped(reason);
    };
    // A SqliteError thrown in the thread arrives as a plain object: its code is what is left of it.
    this.worker.on('error', (e: Partial<Error> & { code?: string }) => stopped(e.message ?? e.code ?? 'failed'));
    this.worker.on('exit', (code) => stopped(`exit code ${code}`));
  }

  /** Checkpoints now (after any checkpoint under way). */
  now(): Promise<CheckpointResult> {
    if (this.ended) return Promise.reject(new Error('The checkpoint thread has stopped'));
    return new Promise((resolve, reject) => {
      this.asked.push({ resolve, reject });
      this.worker.ref();
      this.worker.postMessage('now');
    });
  }

  /** Ends the thread (a checkpoint under way finishes first); `onStopped` is not told. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.worker.postMessage('close');
    await exited;
  }
}
