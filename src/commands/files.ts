import { Readable } from 'node:stream';
import type { BlobSource, BlobStore } from '../blobs/blob-store.ts';
import {
  DEFAULT_MIME_TYPE,
  fileDecider,
  filenameProblem,
  fileId,
  fileStream,
  type FileProperties,
  type StoredFile,
  type TagChanges,
} from '../domain/files/files.ts';
import { extractProperties, type ExtractedProperties } from '../blobs/properties.ts';
import type { PdfReadLimiter } from '../blobs/pdf-read-limiter.ts';
import { API_KEYS, FILES, type ApiKeyDoc, type FileDoc } from '../projections/read-models.ts';
import { mayWriteFileTags } from '../domain/users/users.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { loadState, runCommand } from './appending/run-command.ts';

export interface StoreFileInput {
  readonly source: BlobSource;
  readonly filename: string;
  readonly mimeType?: string;
  /** Largest accepted size in bytes. */
  readonly limit?: number;
  /** The service's bound on PDF reads at once. */
  readonly pdfReads: PdfReadLimiter;
}

export interface StoreFileResult {
  readonly file: StoredFile;
  /** False when the same bytes were already stored: the first upload's metadata is answered. */
  readonly created: boolean;
}

/** The file as the read models show it once the command's effects are visible (else as decided). */
const visibleFile = async (deps: CommandDeps, file: StoredFile): Promise<StoredFile> => {
  const doc = await deps.reads.get<FileDoc>(FILES, fileId(file.digest, file.fileSize));
  if (!doc) return file;
  const { id: _, ...visible } = doc;
  return visible;
};

const storeThumbnail = async (blobs: BlobStore, extracted: ExtractedProperties): Promise<FileProperties> => {
  const { thumbnail, ...rest } = extracted;
  if (!thumbnail) return rest;
  const stored = await blobs.put(Readable.from([thumbnail.bytes]));
  return { ...rest, thumbnail: { width: thumbnail.width, height: thumbnail.height, mimeType: thumbnail.mimeType, digest: stored.digest, fileSize: stored.size } };
};

/**
 * Streams the bytes into the blob store, takes the properties from them, and records FileStored
 * unless a file with that digest and size is already stored; answers once the file is readable.
 */
export const storeFile = async (deps: CommandDeps, blobs: BlobStore, metadata: EventMetadata, input: StoreFileInput): Promise<StoreFileResult> => {
  const problem = filenameProblem(input.filename);
  if (problem) throw new DomainError('invalid', 'svc:file:bad-filename', problem);
  const mimeType = input.mimeType ?? DEFAULT_MIME_TYPE;
  const blob = await blobs.put(input.source, input.limit === undefined ? {} : { limit: input.limit });
  const stream = fileStream(blob.digest, blob.size);

  const existing = await loadState(deps, stream, fileDecider);
  if (existing.state) return { file: await visibleFile(deps, existing.state), created: false };

  const extracted = await extractProperties(() => blobs.get(blob), mimeType, blob.size, {
    pdfReads: input.pdfReads,
    onUnreadable: (reason) => deps.logger.info({ digest: blob.digest, mimeType, reason }, 'file stored without some of its properties (reason says why: unreadable content, or no turn to read it)'),
  });
  const properties = await storeThumbnail(blobs, extracted);
  const command = { type: 'StoreFile', digest: blob.digest, fileSize: blob.size, mimeType, filename: input.filename, properties } as const;
  const result = await runCommand(deps, stream, fileDecider, command, metadata);
  await waitUntilVisible(deps, result.position);
  return { file: await visibleFile(deps, result.state!), created: result.appended > 0 };
};

/** Applies tag changes (a null value deletes the tag) atomically; answers the resulting tags. */
export const changeFileTags = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { readonly digest: string; readonly fileSize: number; readonly changes: TagChanges },
): Promise<StoredFile> => {
  const result = await runCommand(deps, fileStream(command.digest, command.fileSize), fileDecider, { ...command, type: 'ChangeFileTags' }, metadata);
  await waitUntilVisible(deps, result.position);
  return visibleFile(deps, result.state!);
};

/** Whether the key (by id) was issued for writing file tags and is still valid. */
export const keyMayWriteFileTags = async (reads: CommandDeps['reads'], keyId: string): Promise<boolean> => {
  const key = await reads.get<ApiKeyDoc>(API_KEYS, keyId);
  return !!key && !key.revoked && mayWriteFileTags(key.path);
};
