import { rebuildCheckpoint } from '../../projections/rebuild.ts';
import type { CliContext } from '../context.ts';

export const projectionsHelp = `svc projections [--json]

Lists every projection (read model) with its checkpoint, the head of the event log, the lag
between them and its status: current, behind, or rebuilding (a rebuild is running or was
interrupted; run "svc rebuild <name>" to resume it).`;

export const projections = async (cli: CliContext, flags: { json?: boolean }): Promise<number> => {
  const head = await cli.engines.events.headPosition();
  const rows = await Promise.all(
    cli.projectors.map(async (p) => {
      const checkpoint = (await cli.engines.reads.getCheckpoint(p.name))?.position ?? 0;
      const rebuilding = (await cli.engines.reads.getCheckpoint(rebuildCheckpoint(p.name))) !== null;
      const lag = Math.max(0, head - checkpoint);
      return { name: p.name, checkpoint, head, lag, status: rebuilding ? 'rebuilding' : lag === 0 ? 'current' : 'behind' };
    }),
  );
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const header = ['projection', 'checkpoint', 'head', 'lag', 'status'];
  const table = [header, ...rows.map((r) => [r.name, String(r.checkpoint), String(r.head), String(r.lag), r.status])];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) process.stdout.write(`${r.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
  return 0;
};
