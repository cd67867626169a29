import { rebuildInWorker } from '../../app/rebuild-in-worker.ts';
import type { CliContext } from '../context.ts';
import { progressReporter } from '../progress.ts';

export const rebuildHelp = `svc rebuild <projection|all> [--batch-size N]

Rebuilds read models from the event log, blue/green: a new version is built into fresh
collections while the old one keeps serving, then switched in atomically and the old one dropped.
Shows a progress bar with events/s and ETA on a terminal, plain progress lines otherwise.
"all" rebuilds every projection, shared out among SVC_REBUILD_WORKERS worker threads (2 by
default) that each read the log once; progress is the slowest one's. Ctrl-C stops after the batch in
progress and commits what was folded; running the same command again resumes.
Projections: see "svc projections" (collection folds may be named by collection name).`;

export const rebuild = async (cli: CliContext, name: string, flags: { batchSize?: number }): Promise<number> => {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // In worker threads, each folding its share of the projections in one pass over the log, their heaps bounded by SVC_REBUILD_CACHE together.
    const launch = rebuildInWorker(cli.config, { leases: cli.engines.reads, resumeAfterStop: false, onProgress: progressReporter(), ...(flags.batchSize ? { batchSize: flags.batchSize } : {}) });
    const result = await launch(cli.select(name), { owner: `rebuild-${process.pid}-${Math.random().toString(36).slice(2, 10)}`, signal: controller.signal });
    if (result.phase === 'interrupted') {
      process.stderr.write(`Interrupted at position ${result.position}; run "svc rebuild ${name}" again to resume.\n`);
      return 130;
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
};
