import { rebuildProjections } from '../../projections/rebuild.ts';
import type { CliContext } from '../context.ts';
import { progressReporter } from '../progress.ts';

export const rebuildHelp = `svc rebuild <projection|all> [--batch-size N]

Rebuilds read models from the event log, blue/green: a new version is built into fresh
collections while the old one keeps serving, then switched in atomically and the old one dropped.
Shows a progress bar with events/s and ETA on a terminal, plain progress lines otherwise.
"all" rebuilds every projection in one pass over the log. Ctrl-C stops after the batch in
progress and commits what was folded; running the same command again resumes.
Projections: see "svc projections" (collection folds may be named by collection name).`;

export const rebuild = async (cli: CliContext, name: string, flags: { batchSize?: number }): Promise<number> => {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    // All of them in one pass over the log.
    const result = await rebuildProjections({
      events: cli.engines.events,
      reads: cli.engines.reads,
      projectors: cli.select(name),
      cacheBytes: cli.config.rebuildCacheBytes,
      ...(flags.batchSize ? { batchSize: flags.batchSize } : {}),
      onProgress: progressReporter(),
      signal: controller.signal,
    });
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
