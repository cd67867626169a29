import type { EventStore } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES } from '../domain/objects/events.ts';

/** A longer way behind a checkpoint is caught up by reading a kept mirror again, not the log. */
export const MAX_DELTA_EVENTS = 5000;

/**
 * Refs of the objects whose events lie in (after, upTo]; undefined when there are more than
 * MAX_DELTA_EVENTS of them (reading the mirror again is then cheaper than following the log).
 */
export const objectsChangedSince = async (events: EventStore, after: number, upTo: number): Promise<Set<string> | undefined> => {
  const refs = new Set<string>();
  let seen = 0;
  for await (const event of events.readAll({ after, types: OBJECT_EVENT_TYPES, maxCount: MAX_DELTA_EVENTS + 1 })) {
    if (event.position > upTo) return refs;
    const ref = (event.data as { ref?: unknown }).ref;
    if (typeof ref !== 'string' || ++seen > MAX_DELTA_EVENTS) return undefined;
    refs.add(ref);
  }
  return seen > MAX_DELTA_EVENTS ? undefined : refs;
};
