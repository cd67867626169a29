/**
 * The checkpoint thread of one SQLite file (see sqlite-checkpoint-thread.ts): a connection of its
 * own, which only ever checkpoints.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { passiveCheckpoint } from './sqlite.ts';
import type { CheckpointWorkerData } from './sqlite-checkpoint-thread.ts';

const port = parentPort!;
const { file, everyMs } = workerData as CheckpointWorkerData;
// The file's journal mode is the serving connection's to set (WAL, persistent in the file).
const db = new Database(file, { fileMustExist: true });

const checkpoint = () => passiveCheckpoint(db);

const timer = setInterval(checkpoint, everyMs);

port.on('message', (message: 'now' | 'close') => {
  if (message === 'close') {
    clearInterval(timer);
    db.close();
    port.close();
    return;
  }
  port.postMessage(checkpoint());
});
