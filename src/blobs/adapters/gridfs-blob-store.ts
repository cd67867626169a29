/**
 * BlobStore on MongoDB GridFS (`GridFSBucket` of the official driver), used when the read models
 * are on MongoDB. A stored blob is a GridFS file named by its digest, with `length` its size.
 *
 * A put uploads under a temporary name while hashing (GridFS writes the files document only when
 * the upload completes), then either deletes the upload (the bytes were already stored) or renames
 * it to the digest. Two concurrent puts of the same bytes may both rename; each then looks for the
 * oldest copy and the one that is not it deletes itself, so one copy remains. Readers always pick
 * the oldest copy, so they agree with that rule.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { GridFSBucket, MongoClient, type Db, type GridFSBucketWriteStream, type GridFSFile, type ObjectId } from 'mongodb';
import {
  BlobNotFoundError,
  DigestMeter,
  checkRange,
  toReadable,
  type BlobRef,
  type BlobSource,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type PutResult,
} from '../blob-store.ts';
import { DIGEST } from '../../domain/files/files.ts';
import { connectMongo } from '../../drivers/mongodb.ts';

export interface GridFsBlobStoreOptions {
  /** GridFS bucket name: collections `<bucket>.files` and `<bucket>.chunks`. Default `blobs`. */
  readonly bucketName?: string;
  /** Chunk size in bytes; the driver's default is 255 KiB. */
  readonly chunkSizeBytes?: number;
}

const OLDEST_FIRST = { uploadDate: 1, _id: 1 } as const;

export class GridFsBlobStore implements BlobStore {
  private readonly bucket: GridFSBucket;
  private readonly bucketName: string;

  constructor(
    private readonly db: Db,
    options: GridFsBlobStoreOptions = {},
    /** Closed by close() when the store owns its client. */
    private readonly ownedClient?: MongoClient,
  ) {
    this.bucketName = options.bucketName ?? 'blobs';
    this.bucket = new GridFSBucket(db, {
      bucketName: this.bucketName,
      ...(options.chunkSizeBytes ? { chunkSizeBytes: options.chunkSizeBytes } : {}),
    });
  }

  private async copies(ref: BlobRef): Promise<GridFSFile[]> {
    if (!DIGEST.test(ref.digest)) return [];
    return this.bucket.find({ filename: ref.digest, length: ref.size }, { sort: OLDEST_FIRST }).toArray();
  }

  /** Chunks of an upload that never completed have no files document; remove them directly. */
  private async discardChunks(id: ObjectId): Promise<void> {
    await this.db.collection(`${this.bucketName}.chunks`).deleteMany({ files_id: id });
  }

  /** An upload that failed: once its stream has closed (no chunk write still under way), its chunks go. */
  private async discardUpload(upload: GridFSBucketWriteStream): Promise<void> {
    if (!upload.destroyed) upload.destroy();
    await finished(upload).catch(() => undefined);
    await this.discardChunks(upload.id).catch(() => undefined);
  }

  async put(source: BlobSource, options: PutOptions = {}): Promise<PutResult> {
    const upload = this.bucket.openUploadStream(`upload-${randomUUID()}`, { metadata: { uploading: true } });
    const id = upload.id;
    const meter = new DigestMeter(options.limit);
    try {
      await pipeline(toReadable(source), meter, upload);
    } catch (e) {
      await this.discardUpload(upload);
      throw e;
    }
    const { digest, size } = meter.ref;
    try {
      if ((await this.copies({ digest, size })).length > 0) {
        await this.bucket.delete(id);
        return { digest, size, created: false };
      }
      await this.bucket.rename(id, digest);
      const [oldest] = await this.copies({ digest, size });
      if (oldest && !oldest._id.equals(id)) {
        await this.bucket.delete(id);
        return { digest, size, created: false };
      }
      return { digest, size, created: true };
    } catch (e) {
      await this.bucket.delete(id).catch(() => this.discardChunks(id).catch(() => undefined));
      throw e;
    }
  }

  async get(ref: BlobRef, range?: ByteRange): Promise<Readable> {
    checkRange(ref, range);
    const [file] = await this.copies(ref);
    if (!file) throw new BlobNotFoundError(ref);
    // GridFS ranges are [start, end): one past the last byte.
    return this.bucket.openDownloadStream(file._id, range ? { start: range.start, end: range.end + 1 } : {});
  }

  async exists(ref: BlobRef): Promise<boolean> {
    return (await this.copies(ref)).length > 0;
  }

  async close(): Promise<void> {
    await this.ownedClient?.close();
  }
}

/** Connects to MongoDB and opens the store on the URI's database (or `svc` when the URI names none). */
export const openGridFsBlobStore = async (uri: string, options: GridFsBlobStoreOptions & { dbName?: string } = {}): Promise<GridFsBlobStore> => {
  const { client, db } = await connectMongo(uri, options.dbName);
  // Lookups are by filename (digest) and length, oldest first.
  await db.collection(`${options.bucketName ?? 'blobs'}.files`).createIndex({ filename: 1, length: 1, uploadDate: 1 });
  return new GridFsBlobStore(db, options, client);
};
