/**
 * The embedded engines' files (SQLite databases with their -wal/-shm, stored blobs) and the secrets
 * kept beside them hold every record and credential of the service: they are their owner's only.
 * Files are created that way; ones an older version left readable by others are tightened, but
 * only when this process owns them (a file shared on purpose by another user is not ours to change).
 */
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIRECTORY_MODE = 0o700;

const S_ISVTX = 0o1000;

const ours = (uid: number) => process.getuid === undefined || process.getuid() === uid;

/** Sets `path` to `mode` when it exists, is ours and allows more than `mode`. Returns whether it changed it. */
export const tightenMode = (path: string, mode: number): boolean => {
  let info;
  try {
    info = statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  if ((info.mode & 0o777 & ~mode) === 0 || !ours(info.uid)) return false;
  chmodSync(path, info.mode & 0o777 & mode);
  return true;
};

/**
 * Makes `dir` (with any missing parents) 0700, and tightens an existing one to 0700 when it is ours,
 * except a shared directory (sticky, as /tmp) or the file system's root: pointed at one of those by
 * mistake, the service must not lock every other user out of it.
 */
export const ensurePrivateDirectory = (dir: string): void => {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const info = statSync(dir);
  if (dirname(dir) === dir || (info.mode & S_ISVTX) !== 0) return;
  tightenMode(dir, PRIVATE_DIRECTORY_MODE);
};
