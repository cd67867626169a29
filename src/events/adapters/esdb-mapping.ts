/** Pure conversions between the EventStore port and the `@eventstore/db-client` 6.x types. */
import { randomUUID } from 'node:crypto';
import {
  ANY,
  NO_STREAM,
  START,
  isSystemStream,
  jsonEvent,
  type AllStreamResolvedEvent,
  type CurrentRevision,
  type EventData,
  type ExpectedRevision as EsdbExpectedRevision,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
} from '@eventstore/db-client';
import type { EventMetadata, ExpectedRevision, NewEvent, RecordedEvent } from '../event-store.ts';

/** The 6.x parser only knows `esdb://` and `esdb+discover://`; KurrentDB renamed the scheme but not the format. */
export const toEsdbConnectionString = (connectionString: string): string =>
  connectionString.trim().replace(/^kurrentdb(\+discover)?:\/\//i, (_match, discover: string | undefined) =>
    discover === undefined ? 'esdb://' : 'esdb+discover://',
  );

export const toEsdbExpectedRevision = (expected: ExpectedRevision): EsdbExpectedRevision => {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
};

/** -1 is the port's "stream does not exist". */
export const fromCurrentRevision = (current: CurrentRevision): number =>
  current === NO_STREAM ? -1 : Number(current);

export const toEventData = (event: NewEvent): EventData =>
  jsonEvent({
    id: event.id ?? randomUUID(),
    type: event.type,
    // JSON.stringify(undefined) yields no text at all, which the client cannot encode.
    data: (event.data ?? null) as JSONType,
    metadata: event.metadata === undefined ? undefined : ({ ...event.metadata } as JSONType),
  });

/** `$`-typed events and `$`-streams belong to the server (stats, projections, metadata, links). */
export const isSystemEvent = (type: string, stream: string): boolean => type.startsWith('$') || isSystemStream(stream);

/** Positions are exact record positions, for which commit and prepare positions coincide. */
export const toReadPosition = (after: number | undefined): ReadPosition =>
  after === undefined || after <= 0 ? START : { commit: BigInt(after), prepare: BigInt(after) };

/** -1 as an unsigned 64-bit integer: how older servers fill a position they do not know. */
const UNSET_POSITION = 0xffff_ffff_ffff_ffffn;

export const knownPosition = (commit: bigint | undefined): number | undefined =>
  commit === undefined || commit === UNSET_POSITION ? undefined : Number(commit);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

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
    metadata: isPlainObject(event.metadata) ? (event.metadata as EventMetadata) : {},
    stream: event.streamId,
    revision: Number(event.revision),
    position: Number(commit),
    // The client already converted the .NET ticks to a Date, truncated to whole milliseconds.
    recordedAt: event.created,
  };
};
