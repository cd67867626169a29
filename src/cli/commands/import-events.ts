import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ExportedEvent } from '../../events/event-store.ts';
import { rebuildProjections } from '../../projections/rebuild.ts';
import type { CliContext } from '../context.ts';
import { parseEventLine } from '../event-lines.ts';
import { progressReporter } from '../progress.ts';

export const importEventsHelp = `svc import-events FILE|-

Loads a log written by "svc events --export" (FILE, or "-" for standard input) into an EMPTY event
store (a fresh SVC_DATA_DIR, or an empty KurrentDB): a restore. Each event keeps its id, stream,
revision, type, data, metadata and recorded time, and the log its order; positions are the new
store's. A store holding any event is refused and left as it is. The file is read line by line
(constant memory). Then every read model is rebuilt from the imported log (as "svc rebuild all").
Embedded store: all or nothing. KurrentDB: appended in order, the original recorded times kept in
each event's metadata (svcRecordedAt) and read back as its time; a failure leaves what came before.`;

/** The file's events, one per non-blank line, checked as they are read. */
async function* readLog(file: string): AsyncIterable<ExportedEvent> {
  const input = file === '-' ? process.stdin : createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    yield parseEventLine(line, n);
  }
}

export const importEvents = async (cli: CliContext, file: string): Promise<number> => {
  const result = await cli.engines.events.importEvents(readLog(file));
  process.stderr.write(`Imported ${result.events} events (log position ${result.head}); rebuilding the read models\n`);
  const rebuilt = await rebuildProjections({ events: cli.engines.events, reads: cli.engines.reads, projectors: cli.select('all'), onProgress: progressReporter() });
  return rebuilt.phase === 'done' ? 0 : 1;
};
