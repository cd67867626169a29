import { collectionData } from '../../queries/reporting-api.ts';
import { DomainError } from '../../domain/errors.ts';
import { parseAt } from '../../queries/parse-at.ts';
import type { CliContext } from '../context.ts';
import { UsageError } from '../context.ts';
import { toCsv } from '../csv.ts';

export const collectionDataHelp = `svc collection-data <name> [--at YYYY-MM-DDThh:mm:ss] [--format json|csv]

Prints a reporting collection's data, the same answer as GET /api/reporting/v0/collection-data/<name>
(with read access to everything): JSON by default, or CSV for spreadsheets (a header row of
column names, ref and objectTitle first as in the API, list values joined with ";").
--at takes the API's forms: a date, YYYY-MM, a space for T, hh:mm, Z or ±hh:mm (UTC without a zone).`;

export const collectionDataCommand = async (cli: CliContext, name: string, flags: { at?: string; format?: string }): Promise<number> => {
  const format = flags.format ?? 'json';
  if (format !== 'json' && format !== 'csv') throw new UsageError('--format must be json or csv');
  let at: Date | undefined;
  try {
    at = parseAt(flags.at);
  } catch (e) {
    if (e instanceof DomainError) throw new UsageError(e.message.replace(/^at/, '--at'));
    throw e;
  }
  const data = await collectionData(cli.reporting(), name, at, { all: true, labels: new Set() });
  process.stdout.write(format === 'csv' ? toCsv(data.columns, data.rows as unknown[][]) : `${JSON.stringify(data, null, 2)}\n`);
  return 0;
};
