/**
 * The event log for the admin pages: one stream's events a page at a time (by revision), or the
 * whole log forwards from a position, optionally by stream prefix and event type. Events are shown
 * as stored (not upcast): this is the log as it is.
 */
import type { EventStore, RecordedEvent } from '../events/event-store.ts';

export interface EventRow {
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly type: string;
  readonly recordedAt: string;
  readonly correlationId: string | null;
  readonly actor: string | null;
  /** The start of the data's JSON. */
  readonly preview: string;
  readonly truncated: boolean;
}

const PREVIEW = 240;

const rowOf = (e: RecordedEvent): EventRow => {
  const json = JSON.stringify(e.data) ?? 'null';
  // Cut at a code point, never inside a surrogate pair.
  const preview = json.length > PREVIEW ? Array.from(json.slice(0, PREVIEW + 1)).slice(0, -1).join('') : json;
  return {
    stream: e.stream,
    revision: e.revision,
    position: e.position,
    type: e.type,
    recordedAt: e.recordedAt.toISOString(),
    correlationId: e.metadata.correlationId ?? null,
    actor: e.metadata.actor ?? null,
    preview,
    truncated: json.length > PREVIEW,
  };
};

export interface StreamPage {
  readonly items: readonly EventRow[];
  /** Events in the stream (its last revision + 1; 0 when it has none). */
  readonly total: number;
  /** Revisions where the neighbouring pages start. */
  readonly next?: number;
  readonly prev?: number;
}

/** `size` events of `stream` from revision `from`, oldest first. */
export const streamEvents = async (events: EventStore, stream: string, from: number, size: number): Promise<StreamPage> => {
  const got: RecordedEvent[] = [];
  for await (const e of events.readStream(stream, { fromRevision: from, maxCount: size + 1 })) got.push(e);
  let total = 0;
  for await (const e of events.readStream(stream, { direction: 'backwards', maxCount: 1 })) total = e.revision + 1;
  const items = got.slice(0, size).map(rowOf);
  const first = items[0]?.revision ?? Math.min(from, total);
  const next = got.length > size ? items[items.length - 1]!.revision + 1 : undefined;
  const prev = first > 0 ? Math.max(0, first - size) : undefined;
  return { items, total, ...(next !== undefined ? { next } : {}), ...(prev !== undefined ? { prev } : {}) };
};

export interface LogPage {
  readonly items: readonly EventRow[];
  /** The position to continue after, when there is more. */
  readonly next?: number;
}

/** `size` events of the whole log after `after`, oldest first; `streamPrefix` and `type` narrow it. */
export const logEvents = async (events: EventStore, o: { after: number; size: number; streamPrefix: string; type: string }): Promise<LogPage> => {
  const got: RecordedEvent[] = [];
  const filter = { ...(o.streamPrefix ? { streamPrefix: o.streamPrefix } : {}), ...(o.type ? { types: [o.type] } : {}) };
  for await (const e of events.readAll({ ...filter, ...(o.after > 0 ? { after: o.after } : {}), maxCount: o.size + 1 })) got.push(e);
  const items = got.slice(0, o.size).map(rowOf);
  return { items, ...(got.length > o.size ? { next: items[items.length - 1]!.position } : {}) };
};
