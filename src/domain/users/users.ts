import { DomainError } from '../errors.ts';
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

export const decideCreateUser = (
  state: User | null,
  command: { username: string; email?: string; profileRef?: string; groups: readonly string[]; service?: boolean; tags?: Readonly<Record<string, string>> },
): UserEvent[] => {
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

export const decideChangeUser = (
  state: User | null,
  command: { username: string; email?: string; active?: boolean; groups?: readonly string[]; tags?: Readonly<Record<string, string>> },
): UserEvent[] => {
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

export const decideCreateGroup = (state: Group | null, command: Group): GroupEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:group:exists', `Group ${command.code} already exists`);
  return [{ type: 'GroupCreated', data: { ...command, readLabels: [...new Set(command.readLabels)] } }];
};

export const decideIssueApiKey = (state: ApiKey | null, command: Omit<ApiKey, 'revoked' | 'createdAt'>): ApiKeyEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:api-key:exists', `API key ${command.id} already exists`);
  return [{ type: 'ApiKeyIssued', data: command }];
};

export const decideRevokeApiKey = (state: ApiKey | null, id: string): ApiKeyEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:api-key:no-such-key', `API key ${id} does not exist`);
  return state.revoked ? [] : [{ type: 'ApiKeyRevoked', data: { id } }];
};

/**
 * Whether a key's path restriction covers a request path: `=/x` matches `/x` exactly; anything
 * else is a prefix (`/api/v0-` covers every v0 API). Query strings are not part of the match.
 */
export const pathCovered = (restriction: string, path: string): boolean =>
  restriction.startsWith('=') ? path === restriction.slice(1) : path.startsWith(restriction);

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
