import type { EventDecoder } from '../events/decode.ts';
import type { RecordedEvent } from '../events/event-store.ts';
import { WORK_UNIT_EVENT_TYPES, evolveWorkUnit, type WorkUnitEvent } from '../domain/work-units.ts';
import type { DocAccess, Projector } from './projector.ts';
import { WORK_UNITS, type WorkUnitDoc } from './read-models.ts';

export const workUnitsProjector = (decode: EventDecoder): Projector => ({
  name: 'work_units',
  collections: [{ name: WORK_UNITS, indexes: ['ref', 'createdAt'] }],
  handles: WORK_UNIT_EVENT_TYPES,
  async apply(recorded: RecordedEvent, docs: DocAccess) {
    const event = decode<WorkUnitEvent>(recorded);
    docs.put(WORK_UNITS, evolveWorkUnit(await docs.get<WorkUnitDoc>(WORK_UNITS, event.data.id), event, recorded.recordedAt));
  },
});
