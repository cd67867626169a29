import type { EventDecoder } from '../events/decode.ts';
import type { RecordedEvent } from '../events/event-store.ts';
import { FILE_EVENT_TYPES, evolveFile, fileId, type FileEvent } from '../domain/files/files.ts';
import type { DocAccess, Projector } from './projector.ts';
import { FILES, type FileDoc } from './read-models.ts';

/** One document per stored file (id `<digest>-<size>`), found by digest for lookups without a size. */
export const filesProjector = (decode: EventDecoder): Projector => ({
  name: 'files',
  collections: [{ name: FILES, indexes: ['digest', 'createdAt', 'filename'] }],
  handles: FILE_EVENT_TYPES,
  async apply(recorded: RecordedEvent, docs: DocAccess) {
    const event = decode<FileEvent>(recorded);
    const id = fileId(event.data.digest, event.data.fileSize);
    const current = await docs.get<FileDoc>(FILES, id);
    docs.put(FILES, { ...evolveFile(current, event, recorded.recordedAt), id });
  },
});
