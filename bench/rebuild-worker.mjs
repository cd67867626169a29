/**
 * The rebuild process of the `rebuild` benchmark: what `svc rebuild all` does (src/cli/commands/
 * rebuild.ts: the CLI's context over SVC_DATA_DIR, then `rebuildProjections` for every projector of
 * the app model in one pass over the log, in the rebuild worker thread, default batch size), without
 * the progress bar, in the form of the service the run measures (bench/service-form.ts). Prints one
 * JSON line when every projection has been switched in:
 * `{projections, processed, position, ms, phase, peakRssMb, cpuSeconds}` (`processed` = events
 * read from the log once, for all projections).
 */
import { ownPeakRssMb } from './peak-rss.mjs';
import { serviceModule } from './service-module.mjs';

const { openCli } = await serviceModule('src/cli/context');
const { rebuildInWorker } = await serviceModule('src/app/rebuild-in-worker');

const cli = await openCli();
try {
  const projectors = cli.select('all');
  const started = performance.now();
  const result = await rebuildInWorker(cli.config, { resumeAfterStop: false })(projectors, { owner: `bench-rebuild-${process.pid}`, signal: new AbortController().signal });
  const ms = performance.now() - started;
  // The process's own peak resident set (all its threads), what the memory bound is judged on.
  const peakRssMb = ownPeakRssMb();
  // CPU of every thread of the process: on a busy machine what a change saves shows here before it shows in wall time.
  const usage = process.resourceUsage();
  const cpuSeconds = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1e5) / 10;
  process.stdout.write(`${JSON.stringify({ projections: projectors.map((p) => p.name), processed: result.processed, position: result.position, ms: Math.round(ms), phase: result.phase, peakRssMb, cpuSeconds })}\n`);
} finally {
  await cli.close();
}
