/**
 * The BlobStore port: immutable, content-addressed bytes. A blob is named by its SHA-256 digest
 * and its size; storing the same bytes twice keeps one copy. Engines: files on disk under the data
 * directory (embedded), MongoDB GridFS.
 */
import { createHash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';

export interface BlobRef {
  /** SHA-256, 64 lower-case hexadecimal characters. */
  readonly digest: string;
  /** In bytes. */
  readonly size: number;
}

export interface PutResult extends BlobRef {
  /** False when the same bytes were already stored (the new copy was discarded). */
  readonly created: boolean;
}

/** Byte positions, both inclusive, as in an HTTP Range header: `{start: 0, end: 9}` is the first 10 bytes. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface PutOptions {
  /** Largest accepted size in bytes; a longer source fails with BlobTooLargeError and nothing is kept. */
  readonly limit?: number;
}

export type BlobSource = Readable | AsyncIterable<Uint8Array>;

export interface BlobStore {
  /**
   * Streams `source` to the store while computing its digest; never holds it whole in memory. If the
   * source fails or passes the limit, nothing is kept.
   */
  put(source: BlobSource, options?: PutOptions): Promise<PutResult>;
  /**
   * The blob's bytes (or the given range of them, which must lie inside the blob). Rejects with
   * BlobNotFoundError before any byte is read when no such blob exists.
   */
  get(ref: BlobRef, range?: ByteRange): Promise<Readable>;
  exists(ref: BlobRef): Promise<boolean>;
  close(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  override readonly name = 'BlobNotFoundError';
  constructor(readonly ref: BlobRef) {
    super(`No blob ${ref.digest} of ${ref.size} bytes`);
  }
}

export class BlobTooLargeError extends Error {
  override readonly name = 'BlobTooLargeError';
  constructor(readonly limit: number) {
    super(`The content is larger than the limit of ${limit} bytes`);
  }
}

export class InvalidRangeError extends Error {
  override readonly name = 'InvalidRangeError';
  constructor(ref: BlobRef, range: ByteRange) {
    super(`Range ${range.start}-${range.end} is not inside blob ${ref.digest} of ${ref.size} bytes`);
  }
}

export const checkRange = (ref: BlobRef, range: ByteRange | undefined): void => {
  if (range === undefined) return;
  const ok = Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.start <= range.end && range.end < ref.size;
  if (!ok) throw new InvalidRangeError(ref, range);
};

/**
 * Buffer size of the adapters' streams. Larger than Node's 16/64 KiB defaults: reading the socket
 * goes on while the previous megabyte is written, writes are coalesced, and fewer, larger chunks
 * go through each stage. Bounded, so memory per transfer stays at a few MiB whatever the file size.
 */
export const STREAM_CHUNK_BYTES = 1024 * 1024;

/** Passes bytes through unchanged while hashing and counting them; fails past `limit`. */
export class DigestMeter extends Transform {
  private readonly hash = createHash('sha256');
  private count = 0;
  private result: string | undefined;

  constructor(private readonly limit = Number.POSITIVE_INFINITY) {
    super({ highWaterMark: STREAM_CHUNK_BYTES });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.count += chunk.length;
    if (this.count > this.limit) {
      callback(new BlobTooLargeError(this.limit));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.result = this.hash.digest('hex');
    callback();
  }

  /** Digest and size once the stream has finished. */
  get ref(): BlobRef {
    if (this.result === undefined) throw new Error('DigestMeter: the stream has not finished');
    return { digest: this.result, size: this.count };
  }
}

export const toReadable = (source: BlobSource): Readable => (source instanceof Readable ? source : Readable.from(source, { objectMode: false }));
