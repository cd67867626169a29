/**
 * File API v0 queries: a file's metadata with a signed download URL, and its tags. A file is named
 * by its digest, and optionally its size; without a size the first file stored with that digest
 * answers (as Haplo's `O.file(digest)`).
 */
import { noSuchFile, type FileProperties, type StoredFile } from '../domain/files/files.ts';
import type { DownloadSigner } from '../blobs/signed-urls.ts';
import { FILES, OBJECTS, type FileDoc, type ObjectDoc } from '../projections/read-models.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';
import type { ReadStore } from '../projections/read-store.ts';

export interface FileQueryDeps {
  readonly reads: ReadStore;
  readonly signer: DownloadSigner;
}

/** The `file` object of the API: the contract's fields only (a thumbnail's own digest stays inside). */
export const presentFile = (file: StoredFile) => {
  const { thumbnail, ...properties } = file.properties;
  const shown: Omit<FileProperties, 'thumbnail'> & { thumbnail?: { width: number; height: number; mimeType: string } } = {
    ...properties,
    ...(thumbnail ? { thumbnail: { width: thumbnail.width, height: thumbnail.height, mimeType: thumbnail.mimeType } } : {}),
  };
  return {
    digest: file.digest,
    fileSize: file.fileSize,
    mimeType: file.mimeType,
    filename: file.filename,
    createdAt: file.createdAt,
    properties: shown,
    tags: file.tags,
  };
};

export const findFile = async (reads: ReadStore, digest: string, fileSize?: number): Promise<FileDoc | null> => {
  if (fileSize !== undefined) return reads.get<FileDoc>(FILES, `${digest}-${fileSize}`);
  const [first] = await reads.find<FileDoc>(FILES, { where: { digest }, sort: [['createdAt', 'asc']], limit: 1 });
  return first ?? null;
};

/**
 * Whether the caller may read a file: a reader of everything reads every file; anyone else only a
 * file that is a value of an object (not deleted) they may read, as Haplo lets a user download a
 * file through an object that permits it.
 */
const mayReadFile = async (reads: ReadStore, access: ReadAccess, file: FileDoc): Promise<boolean> => {
  if (access.all) return true;
  if (access.labels.size === 0) return false;
  // No index of objects by file yet: the objects are scanned (only for label-limited callers).
  const objects = await reads.find<ObjectDoc>(OBJECTS);
  return objects.some(
    (o) =>
      !o.deleted &&
      canRead(access, o.labels) &&
      Object.values(o.attributes).some((values) => values.some((v) => v.type === 'file' && v.digest === file.digest && v.fileSize === file.fileSize)),
  );
};

/** The file, if it exists and the caller may read it; else no-such-file (which hides unreadable files). */
export const requireFile = async (reads: ReadStore, access: ReadAccess, digest: string, fileSize?: number): Promise<FileDoc> => {
  const doc = await findFile(reads, digest, fileSize);
  if (!doc || !(await mayReadFile(reads, access, doc))) throw noSuchFile(digest, fileSize);
  return doc;
};

export const getFileMetadata = async (deps: FileQueryDeps, access: ReadAccess, digest: string, fileSize?: number) => {
  const doc = await requireFile(deps.reads, access, digest, fileSize);
  const { url, validUntil } = deps.signer.sign(doc);
  return { file: presentFile(doc), download: { url, validUntil } };
};

export const getFileTags = async (reads: ReadStore, access: ReadAccess, digest: string, fileSize?: number) => (await requireFile(reads, access, digest, fileSize)).tags;
