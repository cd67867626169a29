/** Reads of users, groups and API keys for the admin pages. */
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../projections/read-models.ts';
import type { ReadStore } from '../projections/read-store.ts';

const newestFirst = (a: ApiKeyDoc, b: ApiKeyDoc) => b.createdAt.localeCompare(a.createdAt);

/** One user, or null when there is none of that name. */
export const findUser = (reads: ReadStore, username: string): Promise<UserDoc | null> => reads.get<UserDoc>(USERS, username);

/** Every group, by code. */
export const listGroups = (reads: ReadStore): Promise<GroupDoc[]> => reads.find<GroupDoc>(GROUPS, { sort: [['id', 'asc']] });

/** A user's API keys, newest first; only those for exactly `path` when it is given. */
export const apiKeysOf = async (reads: ReadStore, username: string, path?: string): Promise<ApiKeyDoc[]> => {
  const keys = await reads.find<ApiKeyDoc>(API_KEYS, { where: { username } });
  return keys.filter((k) => path === undefined || k.path === path).sort(newestFirst);
};

/** One API key by id, or null. */
export const findApiKey = (reads: ReadStore, id: string): Promise<ApiKeyDoc | null> => reads.get<ApiKeyDoc>(API_KEYS, id);
