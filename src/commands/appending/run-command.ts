import { newEventId } from '../../events/event-id.ts';
import type { EventDecoder } from '../../events/decode.ts';
import { domainCodecs } from '../../events/codecs.ts';
import type { Decider, DomainEvent } from '../../domain/decider.ts';
import type { EventMetadata, EventStore, NewEvent } from '../../events/event-store.ts';
import type { StreamLocks } from './stream-locks.ts';
import { untilCommitted } from './until-committed.ts';

export type { DomainEvent };

export type Evolve<S, E extends DomainEvent> = (state: S | null, event: E, recordedAt: Date) => S;

export interface Aggregate<S> {
  readonly state: S | null;
  /** Revision of the stream's last event; -1 when the stream does not exist. */
  readonly revision: number;
}

/** Folds the events of a stream after `from.revision` onto `from.state`. */
const fold = async <S, E extends DomainEvent>(
  events: EventStore,
  decode: EventDecoder,
  stream: string,
  evolve: (state: S, event: E, recordedAt: Date) => S,
  from: { readonly state: S; readonly revision: number },
): Promise<{ state: S; revision: number }> => {
  let { state, revision } = from;
  for await (const recorded of events.readStream(stream, revision >= 0 ? { fromRevision: revision + 1 } : {})) {
    state = evolve(state, decode<E>(recorded), recorded.recordedAt);
    revision = recorded.revision;
  }
  return { state, revision };
};

/**
 * Folds a stream into its state. With `from` (a state already folded up to `from.revision`), only
 * the events after that revision are read: events are immutable and revisions dense, so the result
 * is the same as folding the whole stream.
 */
export const loadAggregate = <S, E extends DomainEvent>(
  events: EventStore,
  decode: EventDecoder,
  stream: string,
  evolve: Evolve<S, E>,
  from?: Aggregate<S>,
): Promise<Aggregate<S>> => fold<S | null, E>(events, decode, stream, evolve, from && from.revision >= 0 ? from : { state: null, revision: -1 });

/** A stream's state as a decider folds it, and the revision of its last event (-1 when the stream does not exist). */
export const loadState = <C, S, E extends DomainEvent>(
  deps: { events: EventStore; decode: EventDecoder },
  stream: string,
  decider: Decider<C, S, E>,
): Promise<{ state: S; revision: number }> => fold(deps.events, deps.decode, stream, decider.evolve, { state: decider.initialState, revision: -1 });

const fromKept = <S>(loaded: Aggregate<S>, decider: { readonly initialState: S }): { state: S; revision: number } =>
  loaded.revision < 0 ? { state: decider.initialState, revision: -1 } : { state: loaded.state as S, revision: loaded.revision };

/** New events with ids, the request's metadata and the current schema version of each type. */
export const toNewEvents = (produced: readonly DomainEvent[], metadata: EventMetadata): NewEvent[] =>
  produced.map((e) => {
    const version = domainCodecs[e.type]?.version ?? 1;
    return { id: newEventId(), type: e.type, data: e.data, metadata: version > 1 ? { ...metadata, schemaVersion: version } : metadata };
  });

export interface CommandResult<S> {
  /** State after the command (the loaded state when nothing changed). */
  readonly state: S;
  readonly appended: number;
  /** Global position of the last appended event; undefined when nothing was appended. */
  readonly position?: number;
}

/** What runCommand needs: the log, and how long contention may delay a command (see `untilCommitted`). */
export interface RunCommandDeps {
  readonly events: EventStore;
  readonly decode: EventDecoder;
  /** SVC_WAIT_TIMEOUT_MS: the time bound of retries after conflicts (5 s when not given). */
  readonly waitTimeoutMs?: number;
  /** The process's stream locks: commands on one stream then take turns after a conflict. */
  readonly locks?: StreamLocks;
}

const DEFAULT_TIMEOUT_MS = 5000;

/** Kept states of a family of streams (StreamStates), folded by the decider's own `evolve`. */
export interface KeptStates<S> {
  load(stream: string): Promise<Aggregate<S>>;
}

/**
 * Load, decide, append with the loaded revision as the expected one. A concurrent writer makes
 * the append fail; the command is then decided again on fresh state, in turn with the other
 * commands on the stream, until the time bound (then ContentionTimeout).
 *
 * With `states`, a stream is loaded from its kept state and the events appended since (none, or a
 * few): a stream's whole history is read only the first time. Without, every load reads it whole.
 */
export const runCommand = <C, S, E extends DomainEvent>(
  deps: RunCommandDeps,
  stream: string,
  decider: Decider<C, S, E>,
  command: C,
  metadata: EventMetadata,
  states?: KeptStates<S>,
): Promise<CommandResult<S>> =>
  untilCommitted({ timeoutMs: deps.waitTimeoutMs ?? DEFAULT_TIMEOUT_MS, ...(deps.locks ? { locks: deps.locks } : {}) }, async (attempt) => {
    await attempt.beforeLoad(stream);
    const { state, revision } = states ? fromKept(await states.load(stream), decider) : await loadState(deps, stream, decider);
    const produced = decider.decide(command, state);
    if (produced.length === 0) return { state, appended: 0 };
    attempt.writes([stream]);
    const result = await deps.events.append(stream, toNewEvents(produced, metadata), revision < 0 ? 'no_stream' : revision);
    const now = new Date();
    return { state: produced.reduce((s, e) => decider.evolve(s, e, now), state), appended: produced.length, position: result.position };
  });
