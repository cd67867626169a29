/**
 * BlobStore on the local file system: `<root>/ab/cd/<digest>` (the first two pairs of hex digits
 * fan the files out). A put streams into `<root>/tmp/<uuid>` while hashing, syncs it to disk, then
 * renames it into place, so a blob is either absent or complete; the same bytes stored twice, even
 * concurrently, end as one file.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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
} from './blob-store.ts';
import { DIGEST } from './files.ts';

/** Temporary files older than this are left-overs of a crash and removed when the store opens. */
const STALE_TEMP_MS = 24 * 3600 * 1000;

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException)?.code === 'ENOENT';

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
    await mkdir(this.tmp, { recursive: true });
    const temp = join(this.tmp, randomUUID());
    const meter = new DigestMeter(options.limit);
    try {
      await pipeline(toReadable(source), meter, createWriteStream(temp, { flags: 'wx', mode: 0o640 }));
      const handle = await open(temp, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const { digest, size } = meter.ref;
      const final = this.pathOf(digest);
      if ((await this.sizeOf(final)) === size) {
        await rm(temp, { force: true });
        return { digest, size, created: false };
      }
      await mkdir(dirname(final), { recursive: true });
      await rename(temp, final);
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
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async exists(ref: BlobRef): Promise<boolean> {
    return DIGEST.test(ref.digest) && (await this.sizeOf(this.pathOf(ref.digest))) === ref.size;
  }

  async close(): Promise<void> {}

  /** Removes temporary files left by a crash (older than a day, so uploads in progress are kept). */
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
  await mkdir(root, { recursive: true });
  const store = new DiskBlobStore(root);
  await store.sweepTemporaryFiles();
  return store;
};
