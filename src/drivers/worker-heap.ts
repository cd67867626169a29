import v8 from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * Starts worker threads (`start`) whose V8 heaps let their old generation grow to `mb` megabytes
 * before it is collected whole, and never set its limit lower after a collection. By default V8
 * starts a worker's old generation small and keeps its limit a little above what survives: a
 * rebuild's folds promote the documents they keep and then replace them, so with some tens of
 * megabytes alive a rebuild worker's heap was collected whole three times a second.
 *
 * Node's `resourceLimits` bound a heap's maximum only; V8 reads the initial size from a
 * process-wide flag when it makes an isolate. So the flag is set while the threads start and put
 * back (0: V8's own choice) once each has come online or exited. A thread started elsewhere in that
 * moment gets the same floor: it then collects its old generation less often.
 */
export const withOldSpaceFloor = <W extends Worker>(mb: number, start: () => readonly W[]): readonly W[] => {
  v8.setFlagsFromString(`--initial-old-space-size=${mb}`);
  let workers: readonly W[] = [];
  try {
    workers = start();
  } finally {
    const started = workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          w.once('online', resolve);
          w.once('exit', resolve);
        }),
    );
    void Promise.all(started).then(() => v8.setFlagsFromString('--initial-old-space-size=0'));
  }
  return workers;
};
