/**
 * The rebuild process of the `rebuild` benchmark: what `svc rebuild all` does (src/cli/commands/
 * rebuild.ts: the CLI's context over SVC_DATA_DIR, then `rebuildProjection` for every projector of
 * the app model, one after the other, default batch size), without the progress bar. Prints one
 * JSON line per projection when it is switched in: `{projection, processed, position, ms, phase}`.
 */
import { openCli } from '../src/cli/context.ts';
import { rebuildProjection } from '../src/projections/rebuild.ts';

const cli = await openCli();
try {
  for (const projector of cli.select('all')) {
    const started = performance.now();
    const result = await rebuildProjection({ events: cli.engines.events, reads: cli.engines.reads, projector });
    const ms = performance.now() - started;
    process.stdout.write(`${JSON.stringify({ projection: projector.name, processed: result.processed, position: result.position, ms: Math.round(ms), phase: result.phase })}\n`);
  }
} finally {
  await cli.close();
}
