import type { EventStore } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES } from '../domain/objects/events.ts';

/** A longer way behind a checkpoint is caught up by reading a kept mirror again, not the log. */
export const MAX_DELTA_EVENTS = 5000;

type Changed = Set<string> | undefined;

/**
 * Which objects the log's object events between two positions are about. A live answer brings its
 * rows (LiveRows) and then its objects' descriptions (LiveInfos) over the same stretch of the log:
 * the last stretch read is kept, so the second asks the store nothing (the log never changes below
 * its head, so a stretch's answer never goes stale). Made in the composition root, shared by both.
 */
export class ChangedObjects {
  private last: { readonly after: number; readonly upTo: number; readonly refs: Promise<Changed> } | undefined;

  constructor(private readonly events: EventStore) {}

  /**
   * Refs of the objects whose events lie in (after, upTo]; undefined when there are more than
   * MAX_DELTA_EVENTS of them (reading the mirror again is then cheaper than following the log).
   */
  since(after: number, upTo: number): Promise<Changed> {
    const last = this.last;
    if (last && last.after === after && last.upTo === upTo) return last.refs;
    const refs = this.read(after, upTo);
    this.last = { after, upTo, refs };
    // A failed read is not kept: the next call reads again.
    refs.catch(() => {
      if (this.last?.refs === refs) this.last = undefined;
    });
    return refs;
  }

  private async read(after: number, upTo: number): Promise<Changed> {
    const refs = new Set<string>();
    let seen = 0;
    for await (const event of this.events.readAll({ after, types: OBJECT_EVENT_TYPES, maxCount: MAX_DELTA_EVENTS + 1 })) {
      if (event.position > upTo) return refs;
      const ref = (event.data as { ref?: unknown }).ref;
      if (typeof ref !== 'string' || ++seen > MAX_DELTA_EVENTS) return undefined;
      refs.add(ref);
    }
    return seen > MAX_DELTA_EVENTS ? undefined : refs;
  }
}
