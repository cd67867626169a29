import * as t from 'io-ts';
import type { EventCodec } from '../events/decode.ts';

const str = t.string;
const size = t.number;

const Dimensions = t.type({ width: t.number, height: t.number, units: str });
const Thumbnail = t.type({ width: t.number, height: t.number, mimeType: str, digest: str, fileSize: size });
const Properties = t.partial({ dimensions: Dimensions, numberOfPages: t.number, thumbnail: Thumbnail });

const v1 = (codec: t.Mixed): EventCodec => ({ codec, version: 1 });

/** Codecs of the file events; spread into `domainCodecs`. */
export const fileCodecs: Record<string, EventCodec> = {
  FileStored: v1(t.type({ digest: str, fileSize: size, mimeType: str, filename: str, properties: Properties })),
  FileTagsChanged: v1(t.type({ digest: str, fileSize: size, tags: t.record(str, t.union([str, t.null])) })),
};
