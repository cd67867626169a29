import { randomUUID } from 'node:crypto';
import type { EventDecoder } from '../../events/decode.ts';
import { domainCodecs } from '../../events/codecs.ts';
import { WrongExpectedRevisionError, type EventMetadata, type EventStore, type NewEvent } from '../../events/event-store.ts';

export interface DomainEvent {
  readonly type: string;
  readonly data: unknown;
}

export type Evolve<S, E extends DomainEvent> = (state: S | null, event: E, recordedAt: Date) => S;

export interface Aggregate<S> {
  readonly state: S | null;
  /** Revision of the stream's last event; -1 when the stream does not exist. */
  readonly revision: number;
}

/**
 * Folds a stream into its state. With `from` (a state already folded up to `from.revision`), only
 * the events after that revision are read: events are immutable and revisions dense, so the result
 * is the same as folding the whole stream.
 */
export const loadAggregate = async <S, E extends DomainEvent>(
  events: EventStore,
  decode: EventDecoder,
  stream: string,
  evolve: Evolve<S, E>,
  from?: Aggregate<S>,
): Promise<Aggregate<S>> => {
  let state: S | null = from && from.revision >= 0 ? from.state : null;
  let revision = from && from.revision >= 0 ? from.revision : -1;
  for await (const recorded of events.readStream(stream, revision >= 0 ? { fromRevision: revision + 1 } : {})) {
    state = evolve(state, decode<E>(recorded), recorded.recordedAt);
    revision = recorded.revision;
  }
  return { state, revision };
};

/** New events with ids, the request's metadata and the current schema version of each type. */
export const toNewEvents = (produced: readonly DomainEvent[], metadata: EventMetadata): NewEvent[] =>
  produced.map((e) => {
    const version = domainCodecs[e.type]?.version ?? 1;
    return { id: randomUUID(), type: e.type, data: e.data, metadata: version > 1 ? { ...metadata, schemaVersion: version } : metadata };
  });

export interface CommandResult<S> {
  /** State after the command (the loaded state when nothing changed). */
  readonly state: S | null;
  readonly appended: number;
  /** Global position of the last appended event; undefined when nothing was appended. */
  readonly position?: number;
}

/**
 * Load, decide, append with the loaded revision as the expected one. A concurrent writer makes
 * the append fail; the command is then decided again on fresh state.
 */
export const runCommand = async <S, E extends DomainEvent>(
  deps: { events: EventStore; decode: EventDecoder },
  stream: string,
  evolve: Evolve<S, E>,
  decide: (state: S | null) => readonly E[],
  metadata: EventMetadata,
  attempts = 5,
): Promise<CommandResult<S>> => {
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await loadAggregate(deps.events, deps.decode, stream, evolve);
    const produced = decide(state);
    if (produced.length === 0) return { state, appended: 0 };
    try {
      const result = await deps.events.append(stream, toNewEvents(produced, metadata), revision < 0 ? 'no_stream' : revision);
      const now = new Date();
      return { state: produced.reduce<S | null>((s, e) => evolve(s, e, now), state), appended: produced.length, position: result.position };
    } catch (e) {
      if (!(e instanceof WrongExpectedRevisionError) || attempt >= attempts) throw e;
    }
  }
};
