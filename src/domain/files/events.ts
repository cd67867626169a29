import * as t from 'io-ts';

const str = t.string;
const size = t.number;

const Dimensions = t.type({ width: t.number, height: t.number, units: str });
const Thumbnail = t.type({ width: t.number, height: t.number, mimeType: str, digest: str, fileSize: size });
const Properties = t.partial({ dimensions: Dimensions, numberOfPages: t.number, thumbnail: Thumbnail });

/** Codecs of the file events (their data). */
export const fileEventCodecs = {
  FileStored: t.type({ digest: str, fileSize: size, mimeType: str, filename: str, properties: Properties }),
  FileTagsChanged: t.type({ digest: str, fileSize: size, tags: t.record(str, t.union([str, t.null])) }),
};
