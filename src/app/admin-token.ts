import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE, tightenMode } from '../drivers/private-files.ts';

export interface AdminToken {
  readonly token: string;
  /** True when this call generated the token (so the caller logs where it is, once). */
  readonly generated: boolean;
  readonly file?: string;
}

/** The configured token, else the one kept in the data directory, else a new one stored there (mode 0600). */
export const resolveAdminToken = (configured: string | undefined, dataDir: string): AdminToken => {
  if (configured) return { token: configured, generated: false };
  const file = join(dataDir, 'admin-token');
  try {
    const token = readFileSync(file, 'utf8').trim();
    tightenMode(file, PRIVATE_FILE_MODE);
    if (token.length >= 16) return { token, generated: false, file };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  ensurePrivateDirectory(dataDir);
  const token = randomBytes(32).toString('base64url');
  writeFileSync(file, `${token}\n`, { mode: PRIVATE_FILE_MODE });
  chmodSync(file, PRIVATE_FILE_MODE);
  return { token, generated: true, file };
};
