import * as t from 'io-ts';
import { DomainError } from './errors.ts';
import { eventTypes, props, readonlyOf, type Decider, type EventOf } from './decider.ts';

/** Data codecs of the events of a work unit (stream `workunit-<id>`): a workflow attached to a store object. */
export const workUnitEventCodecs = {
  WorkUnitCreated: props(
    {
      id: t.string,
      ref: t.string,
      workType: t.string,
      state: t.string,
      deadline: t.union([t.string, t.null]),
      data: readonlyOf(t.UnknownRecord),
      tags: readonlyOf(t.record(t.string, t.string)),
    },
    {
      /** Defaults to the time the unit was recorded. */
      openedAt: t.string,
    },
  ),
  WorkUnitTransitioned: readonlyOf(t.type({ id: t.string, state: t.string, closed: t.boolean })),
};

export type WorkUnitEvent = EventOf<typeof workUnitEventCodecs>;
export const WORK_UNIT_EVENT_TYPES = eventTypes(workUnitEventCodecs);
export const workUnitStream = (id: string) => `workunit-${id}`;

export type WorkUnit = {
  readonly id: string;
  readonly ref: string;
  readonly workType: string;
  readonly state: string;
  readonly createdAt: string;
  readonly openedAt: string;
  readonly deadline: string | null;
  readonly closed: boolean;
  readonly data: Readonly<Record<string, unknown>>;
  readonly tags: Readonly<Record<string, string>>;
};

export const WORK_TYPE = /^[a-z0-9-]+:[a-z0-9-]+(:[a-z0-9-]+)*$/;
export const STATE = /^[a-z0-9_-]{1,64}$/;

export const evolveWorkUnit = (state: WorkUnit | null, event: WorkUnitEvent, recordedAt: Date): WorkUnit => {
  if (event.type === 'WorkUnitCreated') {
    const createdAt = recordedAt.toISOString();
    return { ...event.data, createdAt, openedAt: event.data.openedAt ?? createdAt, closed: false };
  }
  if (!state) throw new Error(`WorkUnitTransitioned for ${event.data.id} before WorkUnitCreated`);
  return { ...state, state: event.data.state, closed: event.data.closed };
};

export type WorkUnitCommand =
  | {
      readonly type: 'CreateWorkUnit';
      readonly id: string;
      readonly ref: string;
      readonly workType: string;
      readonly state: string;
      readonly openedAt?: string;
      readonly deadline: string | null;
      readonly data: Readonly<Record<string, unknown>>;
      readonly tags: Readonly<Record<string, string>>;
    }
  /** Moves the unit to a state; `closed` stays as it is unless given. */
  | { readonly type: 'TransitionWorkUnit'; readonly id: string; readonly state: string; readonly closed?: boolean };

export const workUnitDecider: Decider<WorkUnitCommand, WorkUnit | null, WorkUnitEvent> = {
  initialState: null,
  evolve: evolveWorkUnit,
  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkUnit': {
        if (state) throw new DomainError('conflict', 'svc:workflow:exists', `Workflow ${command.id} already exists`);
        const { type: _, ...data } = command;
        return [{ type: 'WorkUnitCreated', data }];
      }
      case 'TransitionWorkUnit': {
        if (!state) throw new DomainError('not-found', 'svc:workflow:no-such-workflow', `Workflow ${command.id} does not exist`);
        const closed = command.closed ?? state.closed;
        if (state.state === command.state && state.closed === closed) return [];
        return [{ type: 'WorkUnitTransitioned', data: { id: command.id, state: command.state, closed } }];
      }
    }
  },
};
