import { createHash, randomBytes } from 'node:crypto';
import { objectStream } from '../domain/objects/events.ts';
import { objectDecider } from '../domain/objects/object.ts';
import { newRef } from './new-ref.ts';
import type { PersonName } from '../domain/objects/values.ts';
import { GROUPS, USERS, type GroupDoc } from '../projections/read-models.ts';
import { TITLE } from '../domain/schema.ts';
import { apiKeyStream, groupStream, userStream } from '../domain/users/events.ts';
import { GROUP_CODE, USERNAME, apiKeyDecider, groupDecider, userDecider } from '../domain/users/users.ts';
import { readablePersonName } from '../projections/readable.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { defaultLabels } from './objects.ts';
import { loadState, runCommand, toNewEvents } from './appending/run-command.ts';
import { typeValue } from './object-input.ts';

const PERSON_TYPE = 'svc:type:person';
const NAME_ATTRIBUTE = 'svc:attribute:name';
const EMAIL_ATTRIBUTE = 'svc:attribute:email';

const invalid = (message: string, kind = 'svc:user:invalid') => new DomainError('invalid', kind, message);

const checkGroups = async (deps: CommandDeps, groups: readonly string[]) => {
  const found = await deps.reads.getMany<GroupDoc>(GROUPS, groups);
  const missing = groups.filter((g) => !found.has(g));
  if (missing.length) throw invalid(`groups: unknown group ${missing.join(', ')}`, 'svc:group:no-such-group');
};

/**
 * Creates a user and the person object that is its profile, atomically where the engine allows
 * (both streams must not exist yet).
 */
export const createUser = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { username: string; name: PersonName; email?: string; groups?: readonly string[] },
): Promise<{ username: string; ref: string }> => {
  const username = command.username;
  if (!USERNAME.test(username)) throw invalid('username: 1-64 characters of a-z, 0-9, . _ @ - (lower case, starting with a letter or digit)');
  const groups = command.groups ?? [];
  await checkGroups(deps, groups);
  const existing = await loadState(deps, userStream(username), userDecider);
  const ref = newRef();
  const userEvents = userDecider.decide({ type: 'CreateUser', username, ...(command.email ? { email: command.email } : {}), profileRef: ref, groups }, existing.state);
  const attributes = {
    [TITLE]: [{ type: 'text' as const, value: readablePersonName(command.name) }],
    ...withType(deps),
    ...(deps.schema.attributes.has(NAME_ATTRIBUTE) ? { [NAME_ATTRIBUTE]: [{ type: 'person-name' as const, value: command.name }] } : {}),
    ...(command.email && deps.schema.attributes.has(EMAIL_ATTRIBUTE) ? { [EMAIL_ATTRIBUTE]: [{ type: 'email-address' as const, value: command.email }] } : {}),
  };
  const profileEvents = objectDecider(deps.schema).decide({ type: 'CreateObject', ref, attributes, labels: defaultLabels(deps, undefined) }, null);
  const [, user] = await deps.events.appendMany([
    { stream: objectStream(ref), events: toNewEvents(profileEvents, metadata), expectedRevision: 'no_stream' },
    { stream: userStream(username), events: toNewEvents(userEvents, metadata), expectedRevision: 'no_stream' },
  ]);
  await waitUntilVisible(deps, user!.position);
  return { username, ref };
};

const withType = (deps: CommandDeps) => ({ 'dc:attribute:type': [typeValue(deps, PERSON_TYPE)] });

/** A user for machines (no profile object), created on first use; returns its username. */
export const ensureServiceUser = async (deps: CommandDeps, metadata: EventMetadata, username: string): Promise<string> => {
  const result = await runCommand(deps, userStream(username), userDecider, { type: 'EnsureServiceUser', username }, metadata);
  await waitUntilVisible(deps, result.position);
  return username;
};

export const changeUser = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  username: string,
  command: { email?: string; active?: boolean; groups?: readonly string[] },
) => {
  if (command.groups) await checkGroups(deps, command.groups);
  const result = await runCommand(deps, userStream(username), userDecider, { ...command, type: 'ChangeUser', username }, metadata);
  await waitUntilVisible(deps, result.position);
  return result.state!;
};

export const createGroup = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { code: string; title: string; readAll?: boolean; readLabels?: readonly string[] },
) => {
  if (!GROUP_CODE.test(command.code)) throw invalid('code: a namespaced code such as svc:group:readers', 'svc:group:invalid');
  const unknown = (command.readLabels ?? []).filter((l) => !deps.schema.labels.has(l));
  if (unknown.length) throw invalid(`readLabels: unknown label ${unknown.join(', ')}`, 'svc:group:invalid');
  const group = { code: command.code, title: command.title, readAll: command.readAll ?? false, readLabels: command.readLabels ?? [] };
  const result = await runCommand(deps, groupStream(group.code), groupDecider, { ...group, type: 'CreateGroup' }, metadata);
  await waitUntilVisible(deps, result.position);
  return result.state!;
};

const API_KEY_PATH = /^=?\/[\x21-\x7e]{0,511}$/;

/** 33 random bytes in base64url: 44 characters, no padding, URL-safe. */
const newKey = () => randomBytes(33).toString('base64url');
export const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');
export const KEY_LOOKUP_LENGTH = 16;

/** Issues a key for a user, shown once: only its first 16 characters and a hash are stored. */
export const issueApiKey = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  username: string,
  command: { name?: string; path?: string },
): Promise<{ id: string; key: string; path: string }> => {
  const path = command.path ?? '/api/';
  if (!API_KEY_PATH.test(path)) throw invalid('path: a request path prefix such as /api/v0-object/, or =/exact/path', 'svc:api-key:invalid');
  const user = await deps.reads.get(USERS, username);
  if (!user) throw new DomainError('not-found', 'svc:user:no-such-user', `User ${username} does not exist`);
  const id = newRef();
  const key = newKey();
  const issue = { type: 'IssueApiKey', id, username, name: command.name ?? `Key for ${username}`, path, lookup: key.slice(0, KEY_LOOKUP_LENGTH), hash: hashKey(key) } as const;
  const result = await runCommand(deps, apiKeyStream(id), apiKeyDecider, issue, metadata);
  await waitUntilVisible(deps, result.position);
  return { id, key, path };
};

export const revokeApiKey = async (deps: CommandDeps, metadata: EventMetadata, id: string): Promise<void> => {
  const result = await runCommand(deps, apiKeyStream(id), apiKeyDecider, { type: 'RevokeApiKey', id }, metadata);
  await waitUntilVisible(deps, result.position);
};
