import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL pages past which the writing connection checkpoints itself after all: the thread below keeps
 * the WAL far shorter, and this bounds it (about 40 MB) if that thread falls behind or is gone.
 */
export const FALLBACK_CHECKPOINT_PAGES = 10_000;
/** SQLite's own threshold, given back to the writing connection if the thread stops. */
const SQLITE_DEFAULT_PAGES = 1_000;
/** How often the thread checkpoints: a WAL holds at most what the writes of this long add, mostly. */
const EVERY_MS = 200;

// Plain JavaScript evaluated in the thread: no module of this project has to be loadable there
// (from the TypeScript sources, a worker would first have to register the loader).
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = NORMAL');
const checkpoint = () => {
  // PASSIVE: copies what no reader still needs, never waits for a reader or a writer. Another
  // process's checkpoint under way makes this one busy: it is tried again at the next tick.
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface BackgroundCheckpoints {
  /** Stops the thread (after the checkpoint it may be running); the connection checkpoints itself again. */
  close(): Promise<void>;
}

/**
 * Checkpoints of a WAL database file in a thread of their own. By default SQLite checkpoints in the
 * commit that takes the WAL past 1,000 pages, on the committing connection: it copies those pages
 * into the file and syncs it, and for a read store written on the service's main thread that was a
 * stall of up to 140 ms of every request (measured under load: one a run, each time a commit). The
 * thread's own connection runs a PASSIVE checkpoint every EVERY_MS beside the writes; the writing
 * connection checkpoints itself only past FALLBACK_CHECKPOINT_PAGES, or at SQLite's threshold again
 * once the thread has stopped (it could not open the file, or it failed).
 */
export const checkpointInBackground = (db: Database.Database, file: string, everyMs = EVERY_MS): BackgroundCheckpoints => {
  db.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { driver, file, everyMs } });
  // Never what keeps a process alive: a store left open at exit loses nothing by it.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let closing = false;
  worker.on('error', () => undefined);
  void exited.then(() => {
    if (!closing && db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
  });
  return {
    async close() {
      closing = true;
      // Awaited, so the wait keeps the process alive until the thread has closed its connection.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
};
