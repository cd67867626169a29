import { DomainError } from './errors.ts';

/** Domain events of a work unit (stream `workunit-<id>`): a workflow attached to a store object. */
export type WorkUnitEvent =
  | {
      readonly type: 'WorkUnitCreated';
      readonly data: {
        readonly id: string;
        readonly ref: string;
        readonly workType: string;
        readonly state: string;
        /** Defaults to the time the unit was recorded. */
        readonly openedAt?: string;
        readonly deadline: string | null;
        readonly data: Readonly<Record<string, unknown>>;
        readonly tags: Readonly<Record<string, string>>;
      };
    }
  | { readonly type: 'WorkUnitTransitioned'; readonly data: { readonly id: string; readonly state: string; readonly closed: boolean } };

export const WORK_UNIT_EVENT_TYPES = ['WorkUnitCreated', 'WorkUnitTransitioned'] as const;
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

export const decideCreateWorkUnit = (state: WorkUnit | null, command: WorkUnitEvent & { type: 'WorkUnitCreated' }): WorkUnitEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:workflow:exists', `Workflow ${command.data.id} already exists`);
  return [command];
};

export const decideTransition = (state: WorkUnit | null, command: { id: string; state: string; closed?: boolean }): WorkUnitEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:workflow:no-such-workflow', `Workflow ${command.id} does not exist`);
  const closed = command.closed ?? state.closed;
  if (state.state === command.state && state.closed === closed) return [];
  return [{ type: 'WorkUnitTransitioned', data: { id: command.id, state: command.state, closed } }];
};
