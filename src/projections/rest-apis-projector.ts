import type { EventDecoder } from '../events/decode.ts';
import type { RecordedEvent } from '../events/event-store.ts';
import { REST_API_EVENT_TYPES, evolveRestApi, type RestApiEvent } from '../domain/rest-apis.ts';
import type { DocAccess, Projector } from './projector.ts';
import { REST_APIS, type RestApiDoc } from './read-models.ts';

export const restApisProjector = (decode: EventDecoder): Projector => ({
  name: 'rest_apis',
  collections: [{ name: REST_APIS, indexes: [] }],
  handles: REST_API_EVENT_TYPES,
  async apply(recorded: RecordedEvent, docs: DocAccess) {
    const event = decode<RestApiEvent>(recorded);
    const api = evolveRestApi(await docs.get<RestApiDoc>(REST_APIS, event.data.url), event, recorded.recordedAt);
    docs.put(REST_APIS, { ...api, id: api.url });
  },
});
