import type { EventDecoder } from '../events/decode.ts';
import type { RecordedEvent } from '../events/event-store.ts';
import { API_KEY_EVENT_TYPES, GROUP_EVENT_TYPES, USER_EVENT_TYPES, type ApiKeyEvent, type GroupEvent, type UserEvent } from '../domain/users/events.ts';
import { evolveApiKey, evolveGroup, evolveUser } from '../domain/users/users.ts';
import type { DocAccess, Projector } from './projector.ts';
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from './read-models.ts';

/** Users, groups and API keys: everything authentication and permission checks read. */
export const usersProjector = (decode: EventDecoder): Projector => ({
  name: 'users',
  collections: [
    { name: USERS, indexes: ['profileRef', 'emailKey'] },
    { name: GROUPS, indexes: [] },
    { name: API_KEYS, indexes: ['lookup', 'username'] },
  ],
  handles: [...USER_EVENT_TYPES, ...GROUP_EVENT_TYPES, ...API_KEY_EVENT_TYPES],
  async apply(recorded: RecordedEvent, docs: DocAccess) {
    const event = decode<UserEvent | GroupEvent | ApiKeyEvent>(recorded);
    switch (event.type) {
      case 'UserCreated':
      case 'UserChanged': {
        const user = evolveUser(await docs.get<UserDoc>(USERS, event.data.username), event);
        docs.put(USERS, { ...user, id: user.username, emailKey: user.email?.toLowerCase() ?? null });
        return;
      }
      case 'GroupCreated':
      case 'GroupChanged': {
        const group = evolveGroup(await docs.get<GroupDoc>(GROUPS, event.data.code), event);
        docs.put(GROUPS, { ...group, id: group.code });
        return;
      }
      case 'ApiKeyIssued':
      case 'ApiKeyRevoked':
        docs.put(API_KEYS, evolveApiKey(await docs.get<ApiKeyDoc>(API_KEYS, event.data.id), event, recorded.recordedAt));
    }
  },
});
