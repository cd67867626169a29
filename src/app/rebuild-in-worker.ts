import { Worker } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { rebuildMemory, RebuildInProgressError, type RebuildProgress } from '../projections/rebuild.ts';
import type { RebuildLauncher } from '../projections/runner.ts';
import type { RebuildWorkerInput, RebuildWorkerMessage } from './rebuild-worker.ts';

// Run from the TypeScript sources (tsx) or from compiled JavaScript: the worker is the sibling file.
const fromSources = import.meta.url.endsWith('.ts');
const workerFile = new URL(fromSources ? './rebuild-worker.ts' : './rebuild-worker.js', import.meta.url).href;
// A worker thread does not inherit the TypeScript loader of the thread that starts it: from the
// sources it registers tsx first (as bin/svc.mjs does), then loads the worker module.
const bootstrap = fromSources
  ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerFile)}); });`
  : `import(${JSON.stringify(workerFile)});`;

/**
 * Rebuilds in a worker thread of their own, one per rebuild; a stop asks the worker to finish the
 * page in progress (the rebuild is then resumed by the next holder of the projection).
 */
export const rebuildInWorker =
  (config: Config, more: Pick<RebuildWorkerInput, 'batchSize' | 'resumeAfterStop'> & { readonly onProgress?: (p: RebuildProgress) => void } = {}): RebuildLauncher =>
  (projectors, { owner, signal }) =>
    new Promise<RebuildProgress>((resolve, reject) => {
      const names = projectors.map((p) => p.name);
      const { onProgress, ...options } = more;
      const input: RebuildWorkerInput = { config, projections: names, owner, ...options, progress: onProgress !== undefined };
      const worker = new Worker(bootstrap, { eval: true, workerData: input, resourceLimits: { maxOldGenerationSizeMb: rebuildMemory(config.rebuildCacheBytes).maxOldGenerationSizeMb } });
      let settled = false;
      const stop = () => worker.postMessage('stop');
      signal.addEventListener('abort', stop, { once: true });
      worker.on('message', (message: RebuildWorkerMessage) => {
        if (message.kind === 'progress') return onProgress?.(message.progress);
        settled = true;
        // Its engines are closed before it answers: nothing is left for it to do.
        void worker.terminate();
        if (message.kind === 'done') resolve(message.progress);
        else reject(message.inProgress ? new RebuildInProgressError(names.join(', ')) : new Error(message.message));
      });
      worker.on('error', (e) => {
        if (!settled) reject(e);
        settled = true;
      });
      worker.on('exit', (code) => {
        signal.removeEventListener('abort', stop);
        if (!settled) reject(new Error(`The rebuild worker exited (code ${code}) before it finished`));
        settled = true;
      });
    });
