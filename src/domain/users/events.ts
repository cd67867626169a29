import * as t from 'io-ts';
import { eventTypes, props, readonlyArrayOf, readonlyOf, type EventOf } from '../decider.ts';

const names = readonlyArrayOf(t.string);
const tags = readonlyOf(t.record(t.string, t.string));

/** Data codecs of the events of users (stream `user-<username>`). */
export const userEventCodecs = {
  UserCreated: props(
    {
      username: t.string,
      groups: names,
      /** Service users exist for machines (e.g. push-data access); they have no profile. */
      service: t.boolean,
    },
    {
      email: t.string,
      /** Ref of the person object that represents the user. */
      profileRef: t.string,
      tags,
    },
  ),
  UserChanged: props({ username: t.string }, { email: t.string, active: t.boolean, groups: names, tags }),
};

/** Data codecs of the events of groups (stream `group-<code>`). */
export const groupEventCodecs = {
  GroupCreated: readonlyOf(t.type({ code: t.string, title: t.string, readAll: t.boolean, readLabels: names })),
  GroupChanged: props({ code: t.string }, { title: t.string, readAll: t.boolean, readLabels: names }),
};

/** Data codecs of the events of API keys (stream `apikey-<id>`). */
export const apiKeyEventCodecs = {
  ApiKeyIssued: readonlyOf(
    t.type({
      id: t.string,
      username: t.string,
      name: t.string,
      /** `/prefix` or `=/exact/path`. */
      path: t.string,
      /** First 16 characters of the key, for lookup. */
      lookup: t.string,
      /** SHA-256 (hex) of the whole key; the key itself is never stored. */
      hash: t.string,
    }),
  ),
  ApiKeyRevoked: readonlyOf(t.type({ id: t.string })),
};

export type UserEvent = EventOf<typeof userEventCodecs>;
export type GroupEvent = EventOf<typeof groupEventCodecs>;
export type ApiKeyEvent = EventOf<typeof apiKeyEventCodecs>;

export const userStream = (username: string) => `user-${username}`;
export const groupStream = (code: string) => `group-${code}`;
export const apiKeyStream = (id: string) => `apikey-${id}`;

export const USER_EVENT_TYPES = eventTypes(userEventCodecs);
export const GROUP_EVENT_TYPES = eventTypes(groupEventCodecs);
export const API_KEY_EVENT_TYPES = eventTypes(apiKeyEventCodecs);
