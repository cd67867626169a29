import { verifyProjection } from '../../projections/verify.ts';
import type { CliContext } from '../context.ts';

export const verifyHelp = `svc verify <projection|all> [--json]

Replays the event log up to each projection's checkpoint into a scratch read model and compares it
with the live one, document by document. Prints a short diff and exits with status 1 when any
document differs, is missing or is unexpected.`;

const short = (v: unknown) => {
  const text = JSON.stringify(v);
  return text && text.length > 160 ? `${text.slice(0, 157)}...` : text;
};

export const verify = async (cli: CliContext, name: string, flags: { json?: boolean }): Promise<number> => {
  let failed = false;
  for (const projector of cli.select(name)) {
    const result = await verifyProjection(cli.engines.events, cli.engines.reads, projector);
    failed ||= !result.ok;
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      continue;
    }
    process.stdout.write(`${result.ok ? 'ok  ' : 'DIFF'} ${result.projection} at ${result.position}: ${result.documents} documents, ${result.differenceCount} differences\n`);
    for (const d of result.differences) {
      process.stdout.write(`  ${d.kind} ${d.collection}/${d.id}\n`);
      if (d.expected) process.stdout.write(`    - from the log: ${short(d.expected)}\n`);
      if (d.live) process.stdout.write(`    + read model:   ${short(d.live)}\n`);
    }
    if (result.differenceCount > result.differences.length) process.stdout.write(`  ... and ${result.differenceCount - result.differences.length} more\n`);
  }
  return failed ? 1 : 0;
};
