import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { RecordedEvent } from './event-store.ts';

/**
 * How events read back from the store are checked and brought to their current shape. Each event
 * type has a codec for its current data shape and, optionally, upcasters from older schema
 * versions (`metadata.schemaVersion`, 1 when absent), so shapes can change without rewriting history.
 */
export interface EventCodec {
  readonly codec: t.Mixed;
  /** Current schema version of this event type's data. */
  readonly version: number;
  /** upcasters[v] turns version v data into version v + 1. */
  readonly upcasters?: Readonly<Record<number, (data: unknown) => unknown>>;
}

export class EventDecodeError extends Error {
  override readonly name = 'EventDecodeError';
  constructor(event: RecordedEvent, problems: readonly string[]) {
    super(`Event ${event.id} (${event.type} at ${event.position}) does not match its codec: ${problems.join('; ')}`);
  }
}

const describe = (errors: t.Errors): string[] =>
  errors.slice(0, 5).map((e) => {
    const path = e.context.map((c) => c.key).filter(Boolean).join('.');
    return `${path || '(data)'}: expected ${e.context[e.context.length - 1]?.type.name ?? 'value'}`;
  });

export type EventDecoder = <E extends { type: string; data: unknown }>(event: RecordedEvent) => E;

/** A decoder over a codec table; unknown event types pass through untouched (other services may share a log). */
export const eventDecoder = (codecs: Readonly<Record<string, EventCodec>>): EventDecoder => {
  // Every projector decodes the events it folds: the shared log reader hands them all the same
  // objects, so each event is checked once, not once per projector.
  const decoded = new WeakMap<RecordedEvent, unknown>();
  return <E extends { type: string; data: unknown }>(event: RecordedEvent): E => {
    const hit = decoded.get(event);
    if (hit) return hit as E;
    const entry = codecs[event.type];
    if (!entry) return event as unknown as E;
    let data = event.data;
    for (let v = event.metadata.schemaVersion ?? 1; v < entry.version; v++) {
      const up = entry.upcasters?.[v];
      if (!up) throw new EventDecodeError(event, [`no upcaster from schema version ${v}`]);
      data = up(data);
    }
    // The type guard allocates nothing; full decoding (errors, transforming codecs) only when it fails.
    if (entry.codec.is(data)) {
      const out = data === event.data ? event : { ...event, data };
      decoded.set(event, out);
      return out as unknown as E;
    }
    const result = entry.codec.decode(data);
    if (isLeft(result)) throw new EventDecodeError(event, describe(result.left));
    const out = { ...event, data: result.right };
    decoded.set(event, out);
    return out as unknown as E;
  };
};
