import { DomainError } from '../errors.ts';
import type { Decider } from '../decider.ts';
import type { ApiKeyEvent, GroupEvent, UserEvent } from './events.ts';

export type User = {
  readonly username: string;
  readonly email?: string;
  readonly profileRef?: string;
  readonly groups: readonly string[];
  readonly active: boolean;
  readonly service: boolean;
  readonly tags?: Readonly<Record<string, string>>;
};

export type Group = {
  readonly code: string;
  readonly title: string;
  readonly readAll: boolean;
  readonly readLabels: readonly string[];
};

export type ApiKey = {
  readonly id: string;
  readonly username: string;
  readonly name: string;
  readonly path: string;
  readonly lookup: string;
  readonly hash: string;
  readonly revoked: boolean;
  readonly createdAt: string;
};

export const USERNAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;
export const GROUP_CODE = /^[a-z0-9-]+:[a-z0-9-]+(:[a-z0-9-]+)*$/;

export const evolveUser = (state: User | null, event: UserEvent): User => {
  if (event.type === 'UserCreated') return { ...event.data, active: true };
  if (!state) throw new Error(`UserChanged for ${event.data.username} before UserCreated`);
  const { username: _, ...changes } = event.data;
  return { ...state, ...changes };
};

export const evolveGroup = (state: Group | null, event: GroupEvent): Group => {
  if (event.type === 'GroupCreated') return event.data;
  if (!state) throw new Error(`GroupChanged for ${event.data.code} before GroupCreated`);
  return { ...state, ...event.data };
};

export const evolveApiKey = (state: ApiKey | null, event: ApiKeyEvent, recordedAt: Date): ApiKey => {
  if (event.type === 'ApiKeyIssued') return { ...event.data, revoked: false, createdAt: recordedAt.toISOString() };
  if (!state) throw new Error(`ApiKeyRevoked for ${event.data.id} before ApiKeyIssued`);
  return { ...state, revoked: true };
};

export type UserCommand =
  | {
      readonly type: 'CreateUser';
      readonly username: string;
      readonly email?: string;
      readonly profileRef?: string;
      readonly groups: readonly string[];
      readonly service?: boolean;
      readonly tags?: Readonly<Record<string, string>>;
    }
  /** A user for machines (no profile, no groups), created on first use: nothing happens when the user exists. */
  | { readonly type: 'EnsureServiceUser'; readonly username: string }
  | {
      readonly type: 'ChangeUser';
      readonly username: string;
      readonly email?: string;
      readonly active?: boolean;
      readonly groups?: readonly string[];
      readonly tags?: Readonly<Record<string, string>>;
    };

const createUser = (state: User | null, command: UserCommand & { type: 'CreateUser' }): UserEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:user:exists', `User ${command.username} already exists`);
  return [
    {
      type: 'UserCreated',
      data: {
        username: command.username,
        ...(command.email ? { email: command.email } : {}),
        ...(command.profileRef ? { profileRef: command.profileRef } : {}),
        groups: [...new Set(command.groups)],
        service: command.service ?? false,
        ...(command.tags && Object.keys(command.tags).length ? { tags: command.tags } : {}),
      },
    },
  ];
};

const changeUser = (state: User | null, command: UserCommand & { type: 'ChangeUser' }): UserEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:user:no-such-user', `User ${command.username} does not exist`);
  const changes: { email?: string; active?: boolean; groups?: readonly string[]; tags?: Readonly<Record<string, string>> } = {};
  if (command.tags !== undefined && JSON.stringify(command.tags) !== JSON.stringify(state.tags ?? {})) changes.tags = command.tags;
  if (command.email !== undefined && command.email !== state.email) changes.email = command.email;
  if (command.active !== undefined && command.active !== state.active) changes.active = command.active;
  if (command.groups !== undefined) {
    const groups = [...new Set(command.groups)];
    if (groups.length !== state.groups.length || groups.some((g) => !state.groups.includes(g))) changes.groups = groups;
  }
  return Object.keys(changes).length ? [{ type: 'UserChanged', data: { username: command.username, ...changes } }] : [];
};

export const userDecider: Decider<UserCommand, User | null, UserEvent> = {
  initialState: null,
  evolve: evolveUser,
  decide(command, state) {
    switch (command.type) {
      case 'CreateUser':
        return createUser(state, command);
      case 'EnsureServiceUser':
        return state ? [] : createUser(null, { type: 'CreateUser', username: command.username, groups: [], service: true });
      case 'ChangeUser':
        return changeUser(state, command);
    }
  },
};

type GroupDefinition = { readonly code: string; readonly title: string; readonly readAll: boolean; readonly readLabels: readonly string[] };

export type GroupCommand =
  | ({ readonly type: 'CreateGroup' } & GroupDefinition)
  /** Creates the group unless it exists (whatever its definition then). */
  | ({ readonly type: 'EnsureGroup' } & GroupDefinition);

const createGroup = (command: GroupDefinition): GroupEvent[] => [
  { type: 'GroupCreated', data: { code: command.code, title: command.title, readAll: command.readAll, readLabels: [...new Set(command.readLabels)] } },
];

export const groupDecider: Decider<GroupCommand, Group | null, GroupEvent> = {
  initialState: null,
  evolve: evolveGroup,
  decide(command, state) {
    switch (command.type) {
      case 'CreateGroup':
        if (state) throw new DomainError('conflict', 'svc:group:exists', `Group ${command.code} already exists`);
        return createGroup(command);
      case 'EnsureGroup':
        return state ? [] : createGroup(command);
    }
  },
};

export type ApiKeyCommand =
  | {
      readonly type: 'IssueApiKey';
      readonly id: string;
      readonly username: string;
      readonly name: string;
      readonly path: string;
      readonly lookup: string;
      readonly hash: string;
    }
  | { readonly type: 'RevokeApiKey'; readonly id: string };

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKey | null, ApiKeyEvent> = {
  initialState: null,
  evolve: evolveApiKey,
  decide(command, state) {
    switch (command.type) {
      case 'IssueApiKey': {
        if (state) throw new DomainError('conflict', 'svc:api-key:exists', `API key ${command.id} already exists`);
        const { id, username, name, path, lookup, hash } = command;
        return [{ type: 'ApiKeyIssued', data: { id, username, name, path, lookup, hash } }];
      }
      case 'RevokeApiKey':
        if (!state) throw new DomainError('not-found', 'svc:api-key:no-such-key', `API key ${command.id} does not exist`);
        return state.revoked ? [] : [{ type: 'ApiKeyRevoked', data: { id: command.id } }];
    }
  },
};

/**
 * Whether a key's path restriction covers a request path: `=/x` matches `/x` exactly; anything
 * else is a prefix (`/api/v0-` covers every v0 API). Query strings are not part of the match.
 */
export const pathCovered = (restriction: string, path: string): boolean =>
  restriction.startsWith('=') ? path === restriction.slice(1) : path.startsWith(restriction);

/** Where keys issued for writing file tags are restricted to. */
export const FILE_TAGS_PATH = '/api/v0-file/tags/';

/**
 * Whether a key may change file tags: only a key issued for it, i.e. restricted to the tag endpoint
 * (`/api/v0-file/tags/` or below, or an exact path there). A read key (`/api/`, `/api/v0-file/`)
 * covers the endpoint but was not issued for writing.
 */
export const mayWriteFileTags = (keyPath: string): boolean => (keyPath.startsWith('=') ? keyPath.slice(1) : keyPath).startsWith(FILE_TAGS_PATH);

/** Read access of a user: everything, or objects carrying one of the labels. */
export interface ReadAccess {
  readonly all: boolean;
  readonly labels: ReadonlySet<string>;
}

export const readAccessOf = (user: User, groups: readonly Group[]): ReadAccess => {
  const mine = groups.filter((g) => user.groups.includes(g.code));
  return { all: mine.some((g) => g.readAll), labels: new Set(mine.flatMap((g) => g.readLabels)) };
};

export const canRead = (access: ReadAccess, labels: readonly string[]): boolean =>
  access.all || labels.some((l) => access.labels.has(l));
