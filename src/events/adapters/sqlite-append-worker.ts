/**
 * The embedded event store's writer thread: its own connection to the file, on which every append
 * of the process is committed (synchronous=FULL: the fsync of each commit blocks this thread, not
 * the event loop of the one serving requests). Requests are handled one at a time, in the order
 * posted, and each is answered only after its commit returned.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteFile } from '../../drivers/sqlite.ts';
import { SqliteAppender, toWire } from './sqlite-append.ts';
import type { AppendRequest, AppendWorkerData, WriterMessage } from './sqlite-append-thread.ts';

const port = parentPort!;
const { file } = workerData as AppendWorkerData;
const db = openSqliteFile(file, 'FULL');
const appender = new SqliteAppender(db);

const answer = (message: WriterMessage) => port.postMessage(message);

port.on('message', (request: AppendRequest | 'close') => {
  if (request === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    answer({ id: request.id, committed: appender.append(request.appends, request.times) });
  } catch (e) {
    answer({ id: request.id, error: toWire(e) });
  }
});
