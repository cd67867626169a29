import * as t from 'io-ts';
import { eventTypes, readonlyOf, type EventOf } from '../decider.ts';

const DimensionsCodec = readonlyOf(
  t.type({
    width: t.number,
    height: t.number,
    /** `px` for images, `pt` for PDF pages. */
    units: t.string,
  }),
);
export type Dimensions = t.TypeOf<typeof DimensionsCodec>;

/** The thumbnail is a blob of its own; its digest and size are kept but not shown by the API. */
const ThumbnailCodec = readonlyOf(t.type({ width: t.number, height: t.number, mimeType: t.string, digest: t.string, fileSize: t.number }));
export type Thumbnail = t.TypeOf<typeof ThumbnailCodec>;

const FilePropertiesCodec = readonlyOf(t.partial({ dimensions: DimensionsCodec, numberOfPages: t.number, thumbnail: ThumbnailCodec }));
export type FileProperties = t.TypeOf<typeof FilePropertiesCodec>;

/** A change of tags: a string sets the tag, null deletes it. */
const TagChangesCodec = readonlyOf(t.record(t.string, t.union([t.string, t.null])));
export type TagChanges = t.TypeOf<typeof TagChangesCodec>;

/** Data codecs of the file events (stream `file-<digest>-<size>`). */
export const fileEventCodecs = {
  FileStored: readonlyOf(t.type({ digest: t.string, fileSize: t.number, mimeType: t.string, filename: t.string, properties: FilePropertiesCodec })),
  FileTagsChanged: readonlyOf(t.type({ digest: t.string, fileSize: t.number, tags: TagChangesCodec })),
};

export type FileEvent = EventOf<typeof fileEventCodecs>;
export const FILE_EVENT_TYPES = eventTypes(fileEventCodecs);
