import type { CliContext } from '../context.ts';
import { storedProjectionStatus } from '../projection-status.ts';

export const projectionsHelp = `svc projections [--json]

Lists every projection (read model) with its state, checkpoint, the head of the event log, the lag
between them and the process folding it, as GET /api/admin/projections reports them (--json prints
the same objects). States: live, catching-up, or rebuilding (a rebuild is running or was
interrupted; run "svc rebuild <name>" to resume it). Events a projection does not fold count as
folded: an idle projection shows lag 0 here as in the admin API.`;

export const projections = async (cli: CliContext, flags: { json?: boolean }): Promise<number> => {
  const rows = await storedProjectionStatus(cli.engines.events, cli.engines.reads, cli.projectors);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  const header = ['projection', 'state', 'checkpoint', 'head', 'lag', 'folded by'];
  const table = [header, ...rows.map((r) => [r.name, r.state, String(r.checkpoint), String(r.head), String(r.lag), r.lease?.owner ?? 'nobody'])];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const numeric = (i: number) => i >= 2 && i <= 4;
  for (const r of table) process.stdout.write(`${r.map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()}\n`);
  return 0;
};
