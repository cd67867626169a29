/**
 * File API v0 queries: a file's metadata with a signed download URL, and its tags. A file is named
 * by its digest, and optionally its size; without a size the first file stored with that digest
 * answers (as Haplo's `O.file(digest)`).
 */
import { noSuchFile, type FileProperties, type StoredFile } from '../domain/files/files.ts';
import type { DownloadSigner } from '../blobs/signed-urls.ts';
import { FILES, type FileDoc } from '../projections/read-models.ts';
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

export const requireFile = async (reads: ReadStore, digest: string, fileSize?: number): Promise<FileDoc> => {
  const doc = await findFile(reads, digest, fileSize);
  if (!doc) throw noSuchFile(digest, fileSize);
  return doc;
};

export const getFileMetadata = async (deps: FileQueryDeps, digest: string, fileSize?: number) => {
  const doc = await requireFile(deps.reads, digest, fileSize);
  const { url, validUntil } = deps.signer.sign(doc);
  return { file: presentFile(doc), download: { url, validUntil } };
};

export const getFileTags = async (reads: ReadStore, digest: string, fileSize?: number) => (await requireFile(reads, digest, fileSize)).tags;
