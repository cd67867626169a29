import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { RecordedEvent } from '../../events/event-store.ts';
import type { CliContext } from '../context.ts';
import { UsageError } from '../context.ts';
import { eventLine } from '../event-lines.ts';
import { writeLine } from '../output.ts';

export const eventsHelp = `svc events [--stream S] [--type T]... [--from P] [--until ISO] [--follow]
svc events --export FILE|-

Prints events as JSON lines (id, type, stream, revision, position, recordedAt, data, metadata).
  --stream S   only the events of stream S (e.g. object-<ref>, user-<username>)
  --type T     only events of type T (repeatable)
  --from P     only events after global position P
  --until ISO  only events recorded at or before this UTC time
  --follow     keep printing new events as they are appended (Ctrl-C to stop)
  --export F   the whole log, in order, to file F ("-": standard output), for "svc import-events":
               a backup. Read page by page and written as the reader takes it (constant memory);
               a file appears under its name only once complete. Takes no filter.`;

interface Flags {
  stream?: string;
  type?: string[];
  from?: string;
  until?: string;
  follow?: boolean;
  export?: string;
}

const exportLog = async (cli: CliContext, file: string): Promise<number> => {
  const toStdout = file === '-';
  const partial = `${file}.partial`;
  const out = toStdout ? process.stdout : createWriteStream(partial, { mode: 0o600 });
  let count = 0;
  let last = 0;
  try {
    for await (const e of cli.engines.events.readAll()) {
      await writeLine(out, eventLine(e));
      count++;
      last = e.position;
    }
    if (!toStdout) {
      out.end();
      await finished(out);
      renameSync(partial, file);
    }
  } catch (error) {
    if (!toStdout) {
      out.destroy();
      rmSync(partial, { force: true });
    }
    throw error;
  }
  process.stderr.write(`Exported ${count} events (log position ${last})${toStdout ? '' : ` to ${file}`}\n`);
  return 0;
};

export const events = async (cli: CliContext, flags: Flags): Promise<number> => {
  if (flags.export !== undefined) {
    if (flags.stream || flags.type?.length || flags.from !== undefined || flags.until !== undefined || flags.follow) throw new UsageError('--export writes the whole log; it takes no --stream, --type, --from, --until or --follow');
    if (flags.export === '') throw new UsageError('--export needs a file name, or - for standard output');
    return exportLog(cli, flags.export);
  }
  const after = flags.from === undefined ? 0 : Number(flags.from);
  if (!Number.isSafeInteger(after) || after < 0) throw new UsageError('--from must be a non-negative integer position');
  const until = flags.until === undefined ? undefined : new Date(flags.until);
  if (until && Number.isNaN(until.getTime())) throw new UsageError('--until must be an ISO 8601 date-time, e.g. 2024-03-12T10:00:00Z');
  const types = flags.type?.length ? flags.type : undefined;
  const print = (e: RecordedEvent) => writeLine(process.stdout, eventLine(e));
  let last = after;
  const keep = (e: RecordedEvent) => (!flags.stream || e.stream === flags.stream) && (!types || types.includes(e.type)) && (!until || e.recordedAt <= until);
  if (flags.stream && !flags.follow) {
    for await (const e of cli.engines.events.readStream(flags.stream)) if (e.position > after && keep(e)) await print(e);
    return 0;
  }
  for await (const e of cli.engines.events.readAll({ after, ...(types ? { types } : {}), ...(until ? { until } : {}) })) {
    if (keep(e)) await print(e);
    last = e.position;
  }
  if (!flags.follow) return 0;
  const subscription = cli.engines.events.subscribe({ after: last, ...(types ? { types } : {}) }, async (batch) => {
    for (const e of batch) if (keep(e)) await print(e);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    subscription.done.then(resolve, resolve);
  });
  await subscription.stop();
  return 0;
};
