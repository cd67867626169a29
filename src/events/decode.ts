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

/**
 * A decoder over a codec table; unknown event types pass through untouched (other services may share a log).
 *
 * The projectors of a one-event batch (a push's, as the runner folds it, projector by projector)
 * decode the same event one after another: the last event decoded is kept with its result, so that
 * one is checked once. Nothing else is kept: a WeakMap of every event decoded, so that a batch of
 * any size was checked once, cost more than the checks it saved. Beside a fold's large heap its
 * entries took 1.4-2.6 µs an event (the collector walks the table; a map of the last 64 events was
 * slower still in a rebuild) against about 0.5 µs for a check, and a rebuild worker, whose fold is
 * the only one decoding its events, paid it for nothing: a fresh service caught up 1M events in
 * 62.6, 63.5 and 62.9 s (104, 112, 109 CPU-s) without it, against 69.2, 74.5, 76.3 s (122, 130, 135). A
 * live batch of several events is checked again by each projector folding it, a check (well under
 * a microsecond) per event and projector.
 */
export const eventDecoder = (codecs: Readonly<Record<string, EventCodec>>): EventDecoder => {
  let last: RecordedEvent | undefined;
  let lastOut: unknown;
  const decodeOne = (event: RecordedEvent): unknown => {
    const entry = codecs[event.type];
    if (!entry) return event;
    let data = event.data;
    for (let v = event.metadata.schemaVersion ?? 1; v < entry.version; v++) {
      const up = entry.upcasters?.[v];
      if (!up) throw new EventDecodeError(event, [`no upcaster from schema version ${v}`]);
      data = up(data);
    }
    // The type guard first; full decoding (errors, transforming codecs) only when it fails.
    if (entry.codec.is(data)) return data === event.data ? event : { ...event, data };
    const result = entry.codec.decode(data);
    if (isLeft(result)) throw new EventDecodeError(event, describe(result.left));
    return { ...event, data: result.right };
  };
  return <E extends { type: string; data: unknown }>(event: RecordedEvent): E => {
    if (event !== last) {
      lastOut = decodeOne(event);
      last = event;
    }
    return lastOut as E;
  };
};
