import * as t from 'io-ts';

/** An event as the domain writes it: its type name and its data. */
export interface DomainEvent {
  readonly type: string;
  readonly data: unknown;
}

/**
 * One aggregate's rules, the same shape for every stream: `decide` says which events a command
 * produces in a state (none when it changes nothing; a refusal is a thrown DomainError), `evolve`
 * moves a state on by one event, and `initialState` is the state of a stream without events.
 * Every aggregate here starts as null (the thing does not exist yet).
 */
export interface Decider<Command, State, Event extends DomainEvent> {
  decide(command: Command, state: State): readonly Event[];
  evolve(state: State, event: Event, recordedAt: Date): State;
  readonly initialState: State;
}

/** Codecs of the data of each event type, keyed by event type. */
export type EventCodecs = Readonly<Record<string, t.Mixed>>;

/** The event union of a record of data codecs: `{ type: K; data: TypeOf<codecs[K]> }` for each type K. */
export type EventOf<Codecs extends EventCodecs> = {
  readonly [K in keyof Codecs & string]: { readonly type: K; readonly data: t.TypeOf<Codecs[K]> };
}[keyof Codecs & string];

/** The event type names of a record of data codecs, in declaration order. */
export const eventTypes = <Codecs extends EventCodecs>(codecs: Codecs): readonly (keyof Codecs & string)[] => Object.keys(codecs);

/**
 * `t.readonly` named as the codec it wraps: the types are readonly, while decoding, and the messages
 * of a stored event that does not match, stay those of the plain codec.
 */
export const readonlyOf = <C extends t.Mixed>(codec: C) => t.readonly(codec, codec.name);

/** `t.readonlyArray`, named as `t.array` names its codec (see `readonlyOf`). */
export const readonlyArrayOf = <C extends t.Mixed>(item: C) => t.readonlyArray(item, `Array<${item.name}>`);

/** A readonly object codec with required and optional properties. */
export const props = <R extends t.Props, O extends t.Props>(required: R, optional: O) => readonlyOf(t.intersection([t.type(required), t.partial(optional)]));
