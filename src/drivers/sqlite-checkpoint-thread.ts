import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { endWorker } from './end-worker.ts';
import { checkpointResult, type CheckpointResult, type CheckpointRow } from './sqlite.ts';

/**
 * The thread's code: a connection of its own to the file, which only ever checkpoints, and posts
 * back the row SQLite answers. Plain JavaScript: a worker thread loading a TypeScript module needs
 * tsx loaded into it first, which cost 0.6 s of CPU at every start of a service run from the
 * sources, for these few lines. The file's journal mode is the serving connection's to set.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
const db = new Database(workerData.file, { fileMustExist: true });
const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return parentPort.postMessage(checkpoint());
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

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
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, everyMs } });
    // Checkpoints on a timer must not keep the process alive.
    this.worker.unref();
    this.worker.on('message', (row: CheckpointRow) => {
      this.asked.shift()?.resolve(checkpointResult(row));
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
    await endWorker(this.worker);
  }
}
