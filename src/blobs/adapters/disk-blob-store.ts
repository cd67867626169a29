/**
 * BlobStore on the local file system: `<root>/ab/cd/<digest>` (the first two pairs of hex digits
 * fan the files out). A put streams into `<root>/tmp/<uuid>` while hashing, syncs it to disk, then
 * renames it into place (and syncs the directory), so a blob is either absent or complete and on
 * disk; the same bytes stored twice, even concurrently, end as one file.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  BlobNotFoundError,
  DigestMeter,
  STREAM_CHUNK_BYTES,
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
import { ensurePrivateDirectory, PRIVATE_DIRECTORY_MODE, PRIVATE_FILE_MODE } from '../../drivers/private-files.ts';

/**
 * A temporary file untouched for this long belongs to no upload, in this process or any other that
 * shares the directory: an upload lasts at most SVC_REQUEST_TIMEOUT_MS (an hour at most) and writes
 * to its file as bytes arrive. Such files are left by a killed process and removed when the store
 * opens. (Naming temporary files by process id instead would misjudge processes in other pid
 * namespaces, e.g. containers sharing a volume, and pids are reused.)
 */
const STALE_TEMP_MS = 3600 * 1000;

/** While a blob is written, what has been written is flushed to disk in the background every this many bytes. */
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'ENOENT';

/** Makes a rename into `dir` durable. */
const syncDirectory = async (dir: string): Promise<void> => {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

/**
 * Writes a stream to an open file and makes it durable: the data written so far is flushed
 * (fdatasync) in the background every SYNC_EVERY_BYTES while the stream goes on, so the flush that
 * ends the stream only has the last few megabytes left to write out. Owns the handle.
 */
class DurableFileWriter extends Writable {
  private unsynced = 0;
  private syncing: Promise<void> | undefined;

  constructor(private readonly handle: FileHandle) {
    super({ highWaterMark: STREAM_CHUNK_BYTES });
  }

  private async writeAll(buffers: Buffer[]): Promise<void> {
    let pending = buffers;
    while (pending.length > 0) {
      const total = pending.reduce((n, b) => n + b.length, 0);
      let { bytesWritten } = await this.handle.writev(pending);
      if (bytesWritten >= total) break;
      const rest: Buffer[] = [];
      for (const b of pending) {
        if (bytesWritten >= b.length) bytesWritten -= b.length;
        else {
          rest.push(b.subarray(bytesWritten));
          bytesWritten = 0;
        }
      }
      pending = rest;
    }
    this.unsynced += buffers.reduce((n, b) => n + b.length, 0);
    if (this.unsynced >= SYNC_EVERY_BYTES && !this.syncing) {
      this.unsynced = 0;
      const sync = this.handle.datasync().finally(() => {
        if (this.syncing === sync) this.syncing = undefined;
      });
      this.syncing = sync;
      sync.catch(() => undefined); // awaited (and its failure reported) by _final
    }
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeAll([chunk]).then(() => callback(), callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.writeAll(chunks.map((c) => c.chunk)).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    (async () => {
      await this.syncing;
      await this.handle.datasync();
    })().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.handle.close().then(
      () => callback(error),
      (closeError: Error) => callback(error ?? closeError),
    );
  }
}

export class DiskBlobStore implements BlobStore {
  private readonly tmp: string;

  constructor(readonly root: string) {
    this.tmp = join(root, 'tmp');
  }

  /** Where a blob's bytes are (whether or not they are there). */
  pathOf(digest: string): string {
    if (!DIGEST.test(digest)) throw new Error(`Not a SHA-256 digest: ${JSON.stringify(digest)}`);
    return join(this.root, digest.slice(0, 2), digest.slice(2, 4), digest);
  }

  private async sizeOf(path: string): Promise<number | undefined> {
    try {
      return (await stat(path)).size;
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }

  async put(source: BlobSource, options: PutOptions = {}): Promise<PutResult> {
    await mkdir(this.tmp, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    const temp = join(this.tmp, randomUUID());
    const meter = new DigestMeter(options.limit);
    try {
      await pipeline(toReadable(source), meter, new DurableFileWriter(await open(temp, 'wx', PRIVATE_FILE_MODE)));
      const { digest, size } = meter.ref;
      const final = this.pathOf(digest);
      if ((await this.sizeOf(final)) === size) {
        await rm(temp, { force: true });
        return { digest, size, created: false };
      }
      await mkdir(dirname(final), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
      await rename(temp, final);
      await syncDirectory(dirname(final));
      return { digest, size, created: true };
    } catch (e) {
      await rm(temp, { force: true });
      throw e;
    }
  }

  async get(ref: BlobRef, range?: ByteRange): Promise<Readable> {
    if (!DIGEST.test(ref.digest)) throw new BlobNotFoundError(ref);
    checkRange(ref, range);
    let handle;
    try {
      handle = await open(this.pathOf(ref.digest), 'r');
    } catch (e) {
      if (isMissing(e)) throw new BlobNotFoundError(ref);
      throw e;
    }
    try {
      if ((await handle.stat()).size !== ref.size) throw new BlobNotFoundError(ref);
    } catch (e) {
      await handle.close();
      throw e;
    }
    // The stream owns the handle and closes it when it ends or is destroyed.
    return handle.createReadStream({ highWaterMark: STREAM_CHUNK_BYTES, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async exists(ref: BlobRef): Promise<boolean> {
    return DIGEST.test(ref.digest) && (await this.sizeOf(this.pathOf(ref.digest))) === ref.size;
  }

  async close(): Promise<void> {}

  /** Removes temporary files left by a killed process (untouched for STALE_TEMP_MS, so uploads in progress are kept). */
  async sweepTemporaryFiles(now = Date.now()): Promise<number> {
    let removed = 0;
    let names: string[];
    try {
      names = await readdir(this.tmp);
    } catch (e) {
      if (isMissing(e)) return 0;
      throw e;
    }
    for (const name of names) {
      const path = join(this.tmp, name);
      const info = await stat(path).catch(() => undefined);
      if (info && now - info.mtimeMs > STALE_TEMP_MS) {
        await rm(path, { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/** The disk store under `<dataDir>/files`. */
export const openDiskBlobStore = async (root: string): Promise<DiskBlobStore> => {
  ensurePrivateDirectory(root);
  ensurePrivateDirectory(join(root, 'tmp'));
  const store = new DiskBlobStore(root);
  await store.sweepTemporaryFiles();
  return store;
};
