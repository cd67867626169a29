/** Pure conversions between the EventStore port and the `@kurrent/kurrentdb-client` 1.x types. */
import { newEventId } from '../event-id.ts';
import {
  ANY,
  NO_STREAM,
  START,
  isSystemStream,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AppendStreamState,
  type CurrentStreamState,
  type EventData,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import type { EventMetadata, ExpectedRevision, ExportedEvent, NewEvent, RecordedEvent } from '../event-store.ts';

/**
 * The server records its own time on every append. An imported event carries the time it was first recorded
 * under this metadata key, and reads give that back as `recordedAt` (not as metadata).
 */
export const ORIGINAL_RECORDED_AT = 'svcRecordedAt';

/**
 * The client parses `kurrentdb://`, `kurrent://`, `kdb://` (and `+discover`) and still accepts `esdb://`, but warns
 * on every connect that `esdb` is deprecated (dist/Client/parseConnectionString.js); the format is the same.
 */
export const toKurrentConnectionString = (connectionString: string): string =>
  connectionString.trim().replace(/^esdb(\+discover)?:\/\//i, (_match, discover: string | undefined) =>
    discover === undefined ? 'kurrentdb://' : 'kurrentdb+discover://',
  );

export const toStreamState = (expected: ExpectedRevision): AppendStreamState => {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
};

/** -1 is the port's "stream does not exist". */
export const fromCurrentState = (current: CurrentStreamState): number => (current === NO_STREAM ? -1 : Number(current));

export const toEventData = (event: NewEvent): EventData =>
  jsonEvent({
    id: event.id ?? newEventId(),
    type: event.type,
    // JSON.stringify(undefined) yields no text at all, which the client cannot encode.
    data: (event.data ?? null) as JSONType,
    metadata: event.metadata === undefined ? undefined : ({ ...event.metadata } as JSONType),
  });

/**
 * `multiStreamAppend` takes metadata only as string keys with string values (it throws otherwise, see
 * dist/streams/appendToStream/multiStreamAppend.js; the Node client's docs, "Atomic appends"), and the server
 * gives them back to v1 reads as a JSON object of strings: `schemaVersion` travels as text, `toMetadata` turns it back.
 */
export const toMultiStreamEventData = (event: NewEvent): EventData => {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(event.metadata ?? {})) if (value !== undefined) metadata[key] = String(value);
  return jsonEvent({ id: event.id ?? newEventId(), type: event.type, data: (event.data ?? null) as JSONType, metadata });
};

/** An exported event appended as it was, its original recorded time in the metadata. */
export const toImportedEventData = (event: ExportedEvent): EventData =>
  jsonEvent({
    id: event.id,
    type: event.type,
    data: (event.data ?? null) as JSONType,
    metadata: { ...event.metadata, [ORIGINAL_RECORDED_AT]: event.recordedAt.toISOString() } as JSONType,
  });

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

/** The time an imported event was first recorded, else the server's. */
export const recordedAtOf = (event: { readonly metadata: unknown; readonly created: Date }): Date => {
  const original = isPlainObject(event.metadata) ? event.metadata[ORIGINAL_RECORDED_AT] : undefined;
  if (typeof original !== 'string') return event.created;
  const at = new Date(original);
  return Number.isNaN(at.getTime()) ? event.created : at;
};

export const toMetadata = (raw: unknown): EventMetadata => {
  if (!isPlainObject(raw)) return {};
  const { schemaVersion, [ORIGINAL_RECORDED_AT]: _original, ...rest } = raw;
  const version = typeof schemaVersion === 'string' && /^\d+$/.test(schemaVersion) ? Number(schemaVersion) : schemaVersion;
  return (typeof version === 'number' ? { ...rest, schemaVersion: version } : rest) as EventMetadata;
};

/** `$`-typed events and `$`-streams belong to the server (stats, projections, metadata, links). */
export const isSystemEvent = (type: string, stream: string): boolean => type.startsWith('$') || isSystemStream(stream);

/** Positions are exact record positions, for which commit and prepare positions coincide. */
export const toReadPosition = (after: number | undefined): ReadPosition =>
  after === undefined || after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) };

/** -1 as an unsigned 64-bit integer: how older servers fill a position they do not know. */
const UNSET_POSITION = 0xffff_ffff_ffff_ffffn;

export const knownPosition = (commit: bigint | undefined): number | undefined =>
  commit === undefined || commit === UNSET_POSITION ? undefined : Number(commit);

/** `undefined` for an unresolvable link (no `event`), which only happens with `resolveLinkTos`. */
export const toRecordedEvent = (resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined => {
  const event = resolved.event;
  if (event === undefined) return undefined;
  // Stream reads carry the event's log position only from server 22.6 on; older servers send 0 or 2^64-1.
  let commit = event.position?.commit;
  if (commit === undefined || commit === 0n || commit === UNSET_POSITION) commit = resolved.commitPosition;
  if (commit === undefined || commit === UNSET_POSITION) {
    throw new Error(
      `EventStoreDB returned event ${event.id} of ${event.streamId} without a log position (server older than 22.6?)`,
    );
  }
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: toMetadata(event.metadata),
    stream: event.streamId,
    revision: Number(event.revision),
    position: Number(commit),
    // The client already converted the recorded time to a Date, truncated to whole milliseconds.
    recordedAt: recordedAtOf(event),
  };
};
