/**
 * BlobStore on MongoDB GridFS (`GridFSBucket` of the official driver), used when the read models
 * are on MongoDB. A stored blob is a GridFS file named by its digest, with `length` its size.
 *
 * A put uploads under a temporary name while hashing (GridFS writes the files document only when
 * the upload completes), then either deletes the upload (the bytes were already stored) or renames
 * it to the digest. Two concurrent puts of the same bytes may both rename; each then looks for the
 * oldest copy and the one that is not it deletes itself, so one copy remains. Readers always pick
 * the oldest copy, so they agree with that rule.
 *
 * Every upload is recorded in `<bucket>.uploads` before its first chunk and forgotten once settled,
 * so what a crash leaves (chunks without a files document, an upload never renamed, a duplicate
 * never deleted) is found without scanning the chunks, and removed by sweepOrphans when the store
 * is opened.
 */
import type { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { GridFSBucket, MongoClient, ObjectId, type Collection, type Db, type GridFSBucketWriteStream, type GridFSFile } from 'mongodb';
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
  /**
   * Age past which an upload still recorded as under way is taken for one a crash left behind; as
   * on disk, default a day: longer than any upload, however slow its client.
   */
  readonly orphanAgeMs?: number;
}

interface UploadRecord {
  _id: ObjectId;
  startedAt: Date;
}

const OLDEST_FIRST = { uploadDate: 1, _id: 1 } as const;
const UPLOAD_PREFIX = 'upload-';
const DAY_MS = 24 * 3600 * 1000;

export class GridFsBlobStore implements BlobStore {
  private readonly bucket: GridFSBucket;
  private readonly bucketName: string;
  private readonly uploads: Collection<UploadRecord>;
  private readonly orphanAgeMs: number;

  constructor(
    private readonly db: Db,
    options: GridFsBlobStoreOptions = {},
    /** Closed by close() when the store owns its client (otherwise whoever opened it closes it). */
    private readonly ownedClient?: MongoClient,
  ) {
    this.bucketName = options.bucketName ?? 'blobs';
    this.bucket = new GridFSBucket(db, {
      bucketName: this.bucketName,
      ...(options.chunkSizeBytes ? { chunkSizeBytes: options.chunkSizeBytes } : {}),
    });
    this.uploads = db.collection<UploadRecord>(`${this.bucketName}.uploads`);
    this.orphanAgeMs = options.orphanAgeMs ?? DAY_MS;
  }

  /** Indexes for lookups by digest and for the sweep. */
  async ensureIndexes(): Promise<void> {
    await this.db.collection(`${this.bucketName}.files`).createIndex({ filename: 1, length: 1, uploadDate: 1 });
    await this.uploads.createIndex({ startedAt: 1 });
  }

  /**
   * Removes what uploads older than `orphanAgeMs` left behind: the chunks and files document of one
   * that never completed or was never renamed, and the copy of one that was renamed but lost to an
   * older copy of the same bytes. A renamed upload that is the oldest copy is a stored blob and
   * stays. Answers how many uploads were cleared.
   */
  async sweepOrphans(now: number = Date.now()): Promise<number> {
    const cutoff = new Date(now - this.orphanAgeMs);
    let cleared = 0;
    for await (const upload of this.uploads.find({ startedAt: { $lte: cutoff } })) {
      await this.settle(upload._id);
      await this.uploads.deleteOne({ _id: upload._id });
      cleared++;
    }
    // Completed but never renamed, by a version that did not record its uploads.
    const unnamed = this.bucket.find({ filename: { $regex: `^${UPLOAD_PREFIX}` }, uploadDate: { $lte: cutoff } }, { projection: { _id: 1 } });
    for await (const file of unnamed) {
      await this.removeUpload(file._id);
      cleared++;
    }
    return cleared;
  }

  /** What a crash left of upload `id` goes; a blob it stored stays. */
  private async settle(id: ObjectId): Promise<void> {
    const [file] = await this.bucket.find({ _id: id }).toArray();
    if (file && !file.filename.startsWith(UPLOAD_PREFIX)) {
      const [oldest] = await this.copies({ digest: file.filename, size: file.length });
      if (!oldest || oldest._id.equals(id)) return;
    }
    await this.removeUpload(id);
  }

  /** Its files document (if any) first, so no reader finds a blob whose chunks are going. */
  private async removeUpload(id: ObjectId): Promise<void> {
    await this.db.collection(`${this.bucketName}.files`).deleteOne({ _id: id });
    await this.discardChunks(id);
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
    await this.discardChunks(upload.id);
  }

  async put(source: BlobSource, options: PutOptions = {}): Promise<PutResult> {
    const id = new ObjectId();
    // Recorded before the first chunk: if this process dies mid-way, a later sweep finds the upload.
    await this.uploads.insertOne({ _id: id, startedAt: new Date() });
    const result = await this.store(id, source, options);
    // Only once everything is settled; if this fails, the sweep finds a settled upload and keeps it.
    await this.uploads.deleteOne({ _id: id }).catch(() => undefined);
    return result;
  }

  /** Uploads and names the blob; on failure, removes what it wrote (or leaves the record for the sweep). */
  private async store(id: ObjectId, source: BlobSource, options: PutOptions): Promise<PutResult> {
    const upload = this.bucket.openUploadStreamWithId(id, `${UPLOAD_PREFIX}${id.toHexString()}`);
    const meter = new DigestMeter(options.limit);
    try {
      await pipeline(toReadable(source), meter, upload);
    } catch (e) {
      await this.discardUpload(upload).then(
        () => this.uploads.deleteOne({ _id: id }),
        () => undefined,
      );
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
      await this.removeUpload(id).then(
        () => this.uploads.deleteOne({ _id: id }),
        () => undefined,
      );
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

/**
 * The store on an open database (the service passes its one shared client's): makes its indexes
 * and sweeps what uploads cut short by a crash left behind.
 */
export const gridFsBlobStore = async (db: Db, options: GridFsBlobStoreOptions = {}, ownedClient?: MongoClient): Promise<GridFsBlobStore> => {
  const store = new GridFsBlobStore(db, options, ownedClient);
  await store.ensureIndexes();
  await store.sweepOrphans();
  return store;
};

/** Connects to MongoDB (a client of its own) and opens the store on the URI's database (or `svc` when the URI names none). */
export const openGridFsBlobStore = async (uri: string, options: GridFsBlobStoreOptions & { dbName?: string } = {}): Promise<GridFsBlobStore> => {
  const { client, db } = await connectMongo(uri, options.dbName);
  try {
    return await gridFsBlobStore(db, options, client);
  } catch (e) {
    await client.close().catch(() => undefined);
    throw e;
  }
};
