/**
 * Signed, time-limited download URLs (after Haplo's `KFileUrls`): the URL is
 * `<base URL>/api/v0-file/download/<digest>/<size>/<url-encoded filename>?e=<expiry>&s=<signature>`,
 * where `e` is the expiry in Unix seconds and `s` the hex HMAC-SHA256 of
 * `svc-download-v1\n<path>\n<e>`. The path in the signed string is rebuilt from the decoded
 * parts, so equivalent encodings of the same URL verify alike. Clients treat the URL as opaque.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIGEST, FILE_SIZE } from '../domain/files/files.ts';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE, tightenMode } from '../drivers/private-files.ts';

export const DOWNLOAD_PATH = '/api/v0-file/download';
/** `validUntil` is reported this much before the real expiry, so a client that trusts it never holds a dead URL. */
export const REPORTED_EARLY_SECONDS = 16;
const DOMAIN = 'svc-download-v1';
const SIGNATURE = /^[0-9a-f]{64}$/;
const EXPIRY = /^[1-9][0-9]{0,11}$/;

export interface DownloadTarget {
  readonly digest: string;
  readonly fileSize: number;
  readonly filename: string;
}

export interface SignedDownload {
  /** Absolute URL under the base URL. */
  readonly url: string;
  /** ISO 8601 UTC with milliseconds; a little before `expires`. */
  readonly validUntil: string;
  /** Unix seconds after which the URL is refused. */
  readonly expires: number;
}

export type DownloadVerdict = { readonly ok: true } | { readonly ok: false; readonly reason: 'invalid' | 'expired' };

export interface DownloadSignerOptions {
  readonly secret: Buffer;
  /** Absolute base URL without a trailing slash, e.g. `https://svc.example.org`. */
  readonly baseUrl: string;
  readonly validSeconds: number;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly clock?: () => number;
}

export const downloadPath = (target: DownloadTarget): string =>
  `${DOWNLOAD_PATH}/${target.digest}/${target.fileSize}/${encodeURIComponent(target.filename)}`;

export class DownloadSigner {
  private readonly secret: Buffer;
  private readonly clock: () => number;

  constructor(private readonly options: DownloadSignerOptions) {
    if (options.secret.length < 32) throw new Error('The download secret must be at least 32 bytes');
    if (!(options.validSeconds > REPORTED_EARLY_SECONDS)) throw new Error(`Downloads must be valid for more than ${REPORTED_EARLY_SECONDS} seconds`);
    this.secret = options.secret;
    this.clock = options.clock ?? Date.now;
  }

  private mac(path: string, expires: string): Buffer {
    return createHmac('sha256', this.secret).update(`${DOMAIN}\n${path}\n${expires}`).digest();
  }

  sign(target: DownloadTarget): SignedDownload {
    const expires = Math.floor(this.clock() / 1000) + this.options.validSeconds;
    const path = downloadPath(target);
    const signature = this.mac(path, String(expires)).toString('hex');
    return {
      url: `${this.options.baseUrl}${path}?e=${expires}&s=${signature}`,
      validUntil: new Date((expires - REPORTED_EARLY_SECONDS) * 1000).toISOString(),
      expires,
    };
  }

  /**
   * Checks the parts of a download URL as received (digest and size as path text, the decoded
   * filename, and the raw `e` and `s` query values). Anything malformed or not signed by us is
   * `invalid`; a genuine URL past its expiry is `expired`. The signature is compared in constant time.
   */
  verify(parts: { digest: string; fileSize: string; filename: string }, expires: string | undefined, signature: string | undefined): DownloadVerdict {
    const invalid = { ok: false, reason: 'invalid' } as const;
    if (!DIGEST.test(parts.digest) || !FILE_SIZE.test(parts.fileSize) || expires === undefined || signature === undefined) return invalid;
    if (!EXPIRY.test(expires) || !SIGNATURE.test(signature)) return invalid;
    const expected = this.mac(downloadPath({ digest: parts.digest, fileSize: Number(parts.fileSize), filename: parts.filename }), expires);
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return invalid;
    if (Math.floor(this.clock() / 1000) >= Number(expires)) return { ok: false, reason: 'expired' };
    return { ok: true };
  }
}

export interface DownloadSecret {
  readonly secret: Buffer;
  /** Where it is kept when it was not configured. */
  readonly file?: string;
  readonly generated: boolean;
}

/**
 * The configured secret, else the one kept in `<dataDir>/download-secret`, else 64 random bytes
 * stored there (base64, mode 0600). Several processes starting at once agree on one secret: the
 * file appears atomically and a loser reads the winner's.
 */
export const resolveDownloadSecret = (configured: string | undefined, dataDir: string): DownloadSecret => {
  if (configured) return { secret: Buffer.from(configured, 'utf8'), generated: false };
  const file = join(dataDir, 'download-secret');
  const read = (): Buffer | undefined => {
    try {
      const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
      tightenMode(file, PRIVATE_FILE_MODE);
      if (secret.length < 32) throw new Error(`${file} does not hold a usable secret (at least 32 bytes, base64); remove it to have a new one made`);
      return secret;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  };
  const existing = read();
  if (existing) return { secret: existing, file, generated: false };
  ensurePrivateDirectory(dataDir);
  const secret = randomBytes(64);
  // Written whole to a private temporary file, then linked into place: the link fails if another
  // process got there first, and nobody ever reads a half-written secret.
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, `${secret.toString('base64')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  try {
    chmodSync(temp, PRIVATE_FILE_MODE);
    linkSync(temp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    const winner = read();
    if (winner) return { secret: winner, file, generated: false };
    throw e;
  } finally {
    rmSync(temp, { force: true });
  }
  return { secret, file, generated: true };
};
