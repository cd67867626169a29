import type { RecordedEvent } from '../../events/event-store.ts';
import type { CliContext } from '../context.ts';
import { UsageError } from '../context.ts';

export const eventsHelp = `svc events [--stream S] [--type T]... [--from P] [--until ISO] [--follow]

Prints events as JSON lines (id, type, stream, revision, position, recordedAt, data, metadata).
  --stream S   only the events of stream S (e.g. object-<ref>, user-<username>)
  --type T     only events of type T (repeatable)
  --from P     only events after global position P
  --until ISO  only events recorded at or before this UTC time
  --follow     keep printing new events as they are appended (Ctrl-C to stop)`;

const print = (e: RecordedEvent) =>
  process.stdout.write(
    `${JSON.stringify({ id: e.id, type: e.type, stream: e.stream, revision: e.revision, position: e.position, recordedAt: e.recordedAt.toISOString(), data: e.data, metadata: e.metadata })}\n`,
  );

export const events = async (cli: CliContext, flags: { stream?: string; type?: string[]; from?: string; until?: string; follow?: boolean }): Promise<number> => {
  const after = flags.from === undefined ? 0 : Number(flags.from);
  if (!Number.isSafeInteger(after) || after < 0) throw new UsageError('--from must be a non-negative integer position');
  const until = flags.until === undefined ? undefined : new Date(flags.until);
  if (until && Number.isNaN(until.getTime())) throw new UsageError('--until must be an ISO 8601 date-time, e.g. 2024-03-12T10:00:00Z');
  const types = flags.type?.length ? flags.type : undefined;
  let last = after;
  const keep = (e: RecordedEvent) => (!flags.stream || e.stream === flags.stream) && (!types || types.includes(e.type)) && (!until || e.recordedAt <= until);
  if (flags.stream && !flags.follow) {
    for await (const e of cli.engines.events.readStream(flags.stream)) if (e.position > after && keep(e)) print(e);
    return 0;
  }
  for await (const e of cli.engines.events.readAll({ after, ...(types ? { types } : {}), ...(until ? { until } : {}) })) {
    if (keep(e)) print(e);
    last = e.position;
  }
  if (!flags.follow) return 0;
  const subscription = cli.engines.events.subscribe({ after: last, ...(types ? { types } : {}) }, async (batch) => {
    for (const e of batch) if (keep(e)) print(e);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
    subscription.done.then(resolve, resolve);
  });
  await subscription.stop();
  return 0;
};
