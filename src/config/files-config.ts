/**
 * Configuration of file storage and signed downloads, from environment variables: FILES_ENV_SPEC is
 * part of config.ts's ENV_SPEC and `filesConfigOf` makes its Config's `files`. (This module does not
 * import config.ts, so config.ts can import it without a cycle.)
 */
import { byteSize, decodeEnv, integer, optional, text } from './env.ts';

export const DEFAULT_DOWNLOAD_VALID_SECONDS = 14_400;
export const DEFAULT_FILE_LIMIT_BYTES = 1024 ** 3;

export const FILES_ENV_SPEC = {
  /** HMAC key of signed download URLs; unset: generated once into `<SVC_DATA_DIR>/download-secret`. */
  SVC_DOWNLOAD_SECRET: optional(text('at least 32 characters without white space', (s) => s.length >= 32 && !/\s/.test(s))),
  /** How long a signed download URL is valid, in seconds (default 4 hours). */
  SVC_DOWNLOAD_VALID_SECONDS: integer(60, 7 * 24 * 3600, DEFAULT_DOWNLOAD_VALID_SECONDS),
  /** Largest file accepted by `POST /api/admin/files` (default 1gb). */
  SVC_FILE_LIMIT: byteSize(DEFAULT_FILE_LIMIT_BYTES),
  /** PDF uploads read at once (each in a process of its own, 100-300 MB). */
  SVC_PDF_CONCURRENCY: integer(1, 64, 2),
  /** PDF uploads waiting for a reader; any more are stored without their PDF properties. */
  SVC_PDF_QUEUE: integer(0, 10_000, 16),
  /** Longest a PDF upload waits for a reader before it is stored without its PDF properties. */
  SVC_PDF_QUEUE_WAIT_MS: integer(0, 600_000, 30_000),
};

export interface FilesConfig {
  /** Unset: generated on first use and kept in the data directory. */
  readonly downloadSecret: string | undefined;
  readonly downloadValidSeconds: number;
  readonly fileLimitBytes: number;
  /** How many PDF reads run at once, wait, and for how long. */
  readonly pdfReads: { readonly concurrency: number; readonly queue: number; readonly maxWaitMs: number };
}

export const filesConfigOf = (v: {
  SVC_DOWNLOAD_SECRET: string | undefined;
  SVC_DOWNLOAD_VALID_SECONDS: number;
  SVC_FILE_LIMIT: number;
  SVC_PDF_CONCURRENCY: number;
  SVC_PDF_QUEUE: number;
  SVC_PDF_QUEUE_WAIT_MS: number;
}): FilesConfig => ({
  downloadSecret: v.SVC_DOWNLOAD_SECRET,
  downloadValidSeconds: v.SVC_DOWNLOAD_VALID_SECONDS,
  fileLimitBytes: v.SVC_FILE_LIMIT,
  pdfReads: { concurrency: v.SVC_PDF_CONCURRENCY, queue: v.SVC_PDF_QUEUE, maxWaitMs: v.SVC_PDF_QUEUE_WAIT_MS },
});

/** Same shape and message as config.ts's ConfigError. */
export class FilesConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export const loadFilesConfig = (env: Record<string, string | undefined> = process.env): FilesConfig => {
  const decoded = decodeEnv(FILES_ENV_SPEC, env);
  if (!decoded.ok) throw new FilesConfigError(decoded.errors);
  return filesConfigOf(decoded.value);
};
