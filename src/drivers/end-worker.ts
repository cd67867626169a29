import type { Worker } from 'node:worker_threads';

/**
 * Asks a worker thread that ends itself on the message `'close'` to do so (after what it was sent
 * before), and resolves once it has exited. Referenced meanwhile, so the process waits for it too.
 * The caller makes sure the thread has not exited already: its `'exit'` would never come.
 */
export const endWorker = (worker: Worker): Promise<void> => {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.ref();
  worker.postMessage('close');
  return exited;
};
