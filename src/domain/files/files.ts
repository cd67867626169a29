/**
 * Files: content-addressed bytes (SHA-256 digest + size) with metadata recorded as events on the
 * stream `file-<digest>-<size>`. The bytes themselves live in a BlobStore; the events say what the
 * file is (name, type, extracted properties) and carry its tags.
 */
import { DomainError } from '../errors.ts';
import type { Decider } from '../decider.ts';
import type { FileEvent, FileProperties, TagChanges } from './events.ts';

export { FILE_EVENT_TYPES, type Dimensions, type FileEvent, type FileProperties, type TagChanges, type Thumbnail } from './events.ts';

/** A SHA-256 digest as the API shows it: 64 lower-case hexadecimal characters. */
export const DIGEST = /^[0-9a-f]{64}$/;
/** A file size as a path or query parameter: a non-negative integer without sign or leading zeros. */
export const FILE_SIZE = /^(0|[1-9][0-9]{0,15})$/;

export const MAX_FILENAME_LENGTH = 255;
export const MAX_TAG_NAME_LENGTH = 256;

export interface StoredFile {
  readonly digest: string;
  readonly fileSize: number;
  readonly mimeType: string;
  readonly filename: string;
  /** When FileStored was recorded: ISO 8601 UTC with milliseconds. */
  readonly createdAt: string;
  readonly properties: FileProperties;
  readonly tags: Readonly<Record<string, string>>;
}

export const fileStream = (digest: string, fileSize: number) => `file-${digest}-${fileSize}`;
/** Read-model id of a file: digest and size together identify it. */
export const fileId = (digest: string, fileSize: number) => `${digest}-${fileSize}`;

export const noSuchFile = (digest: string, fileSize?: number) =>
  new DomainError(
    'not-found',
    'svc:api-v0:file:no-such-file',
    fileSize === undefined ? `File ${digest} does not exist` : `File ${digest} with size ${fileSize} does not exist`,
  );

export const applyTagChanges = (tags: Readonly<Record<string, string>>, changes: TagChanges): Record<string, string> => {
  const next: Record<string, string> = { ...tags };
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
};

export const evolveFile = (state: StoredFile | null, event: FileEvent, recordedAt: Date): StoredFile => {
  if (event.type === 'FileStored') {
    // A second FileStored never happens (decide refuses it); if it did, the first one stands.
    if (state) return state;
    return { ...event.data, createdAt: recordedAt.toISOString(), tags: {} };
  }
  if (!state) throw new Error(`FileTagsChanged for ${event.data.digest}/${event.data.fileSize} before FileStored`);
  return { ...state, tags: applyTagChanges(state.tags, event.data.tags) };
};

export const validTagName = (name: string) => name.length > 0 && name.length <= MAX_TAG_NAME_LENGTH && !/[\u0000-\u001f\u007f]/.test(name);

export type FileCommand =
  /** Storing bytes that are already stored records nothing: the first name and type stand. */
  | {
      readonly type: 'StoreFile';
      readonly digest: string;
      readonly fileSize: number;
      readonly mimeType: string;
      readonly filename: string;
      readonly properties: FileProperties;
    }
  /** Only the changes that change something are recorded; no change, no event. */
  | { readonly type: 'ChangeFileTags'; readonly digest: string; readonly fileSize: number; readonly changes: TagChanges };

export const fileDecider: Decider<FileCommand, StoredFile | null, FileEvent> = {
  initialState: null,
  evolve: evolveFile,
  decide(command, state) {
    switch (command.type) {
      case 'StoreFile': {
        const { type: _, ...data } = command;
        return state ? [] : [{ type: 'FileStored', data }];
      }
      case 'ChangeFileTags': {
        if (!state) throw noSuchFile(command.digest, command.fileSize);
        const bad = Object.keys(command.changes).filter((name) => !validTagName(name));
        if (bad.length > 0) {
          throw new DomainError('invalid', 'svc:api-v0:file:bad-tags', `Tag names must be 1 to ${MAX_TAG_NAME_LENGTH} characters without control characters`);
        }
        const effective = Object.fromEntries(
          Object.entries(command.changes).filter(([name, value]) => (value === null ? name in state.tags : state.tags[name] !== value)),
        );
        if (Object.keys(effective).length === 0) return [];
        return [{ type: 'FileTagsChanged', data: { digest: command.digest, fileSize: command.fileSize, tags: effective } }];
      }
    }
  },
};

/** Why a filename is refused, or undefined when it is acceptable. */
export const filenameProblem = (filename: string | undefined): string | undefined => {
  if (filename === undefined || filename === '') return 'The filename query parameter is required';
  if ([...filename].length > MAX_FILENAME_LENGTH) return `The filename must be at most ${MAX_FILENAME_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f/\\]/.test(filename)) return 'The filename must not contain control characters, / or \\';
  if (filename === '.' || filename === '..') return 'The filename must not be . or ..';
  return undefined;
};

const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MEDIA_TYPE = new RegExp(`^\\s*(${TOKEN})/(${TOKEN})\\s*(?:;.*)?$`);
export const DEFAULT_MIME_TYPE = 'application/octet-stream';

/**
 * The media type recorded for an upload: `type/subtype` of its Content-Type, lower-cased, without
 * parameters; `application/octet-stream` when none is given; undefined when the header is malformed.
 */
export const mediaTypeOf = (contentType: string | undefined): string | undefined => {
  if (contentType === undefined || contentType.trim() === '') return DEFAULT_MIME_TYPE;
  const match = MEDIA_TYPE.exec(contentType);
  return match ? `${match[1]!.toLowerCase()}/${match[2]!.toLowerCase()}` : undefined;
};
