/**
 * The file tests' service: the real one (`startTestService`, i.e. `src/app/service.ts` on the
 * embedded engines in a fresh data directory) with SVC_BASE_URL set, so signed download URLs name a
 * known base; plus helpers to upload files and to make File API clients through the admin API.
 */
import { createHash } from 'node:crypto';
import * as assert from 'uvu/assert';
import { basic, createGroup, createUser, issueKey, type Reply } from '../../support/fixtures.ts';
import { startTestService, type TestService } from '../../support/service.ts';

export const BASE_URL = 'https://files.example.org';

export interface FilesService extends TestService {
  /** The same URL on this server: signed URLs name SVC_BASE_URL, which is not where the test server listens. */
  local(absoluteUrl: string): string;
}

/** `env` adds to or overrides the test service's configuration (e.g. SVC_FILE_LIMIT, SVC_DOWNLOAD_SECRET). */
export const startFilesService = async (options: { env?: Record<string, string>; clock?: () => number } = {}): Promise<FilesService> => {
  const svc = await startTestService({ SVC_BASE_URL: BASE_URL, ...options.env }, options.clock);
  const { baseUrl } = svc.config;
  return {
    ...svc,
    local: (absoluteUrl) => {
      assert.ok(absoluteUrl.startsWith(`${baseUrl}/`), `${absoluteUrl} is under the base URL ${baseUrl}`);
      return `${svc.url}${absoluteUrl.slice(baseUrl.length)}`;
    },
  };
};

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

const reply = async (res: Response): Promise<Reply> => {
  const contentType = res.headers.get('content-type') ?? '';
  const text = await res.text();
  return { status: res.status, headers: res.headers, contentType, body: contentType.includes('json') ? JSON.parse(text) : text };
};

/** POST /api/admin/files with the bytes as they are. */
export const upload = async (svc: FilesService, bytes: Uint8Array | string, filename: string | null, contentType?: string | null, init: { admin?: boolean } = {}): Promise<Reply> => {
  const query = filename === null ? '' : `?filename=${encodeURIComponent(filename)}`;
  const headers: Record<string, string> = contentType ? { 'Content-Type': contentType } : {};
  const body = typeof bytes === 'string' ? bytes : Buffer.from(bytes);
  return reply(await svc.request(`/api/admin/files${query}`, { method: 'POST', body, headers, ...init }));
};

/** Upload expecting success (201, or 200 when `existing`); returns the file metadata. */
export const stored = async (svc: FilesService, bytes: Uint8Array | string, filename: string, contentType?: string, existing = false) => {
  const r = await upload(svc, bytes, filename, contentType);
  assert.is(r.status, existing ? 200 : 201, `upload ${filename}: ${JSON.stringify(r.body)}`);
  return r.body as FileMetadata;
};

export interface FileMetadata {
  digest: string;
  fileSize: number;
  mimeType: string;
  filename: string;
  createdAt: string;
  properties: Record<string, any>;
  tags: Record<string, string>;
}

export interface FileClient {
  readonly authorization: string;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
}

/** A user with an API key (restricted to `path` when given), made through the admin API. */
export const createFileClient = async (svc: FilesService, path?: string): Promise<FileClient> => {
  const group = await createGroup(svc, { readAll: true });
  const { username } = await createUser(svc, { first: 'File', last: 'Reader', groups: [group] });
  const { key } = await issueKey(svc, username, path ? { path } : {});
  const authorization = basic(key);
  return {
    authorization,
    get: async (p, headers = {}) => reply(await svc.request(p, { admin: false, headers: { Authorization: authorization, ...headers } })),
    post: async (p, body, headers = {}) =>
      reply(
        await svc.request(p, {
          method: 'POST',
          admin: false,
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { Authorization: authorization, 'Content-Type': 'application/json', ...headers },
        }),
      ),
  };
};

/** Checks the JSON error envelope, status and kind; returns the message. */
export const expectError = (r: Reply, status: number, kind: string): string => {
  assert.match(r.contentType, 'application/json', `error responses are JSON (got ${r.contentType}: ${String(r.body).slice(0, 100)})`);
  assert.is(r.status, status, `status (body ${JSON.stringify(r.body)})`);
  assert.is(r.body.success, false);
  assert.is(r.body.kind, kind, `kind (message: ${r.body.error?.message})`);
  assert.type(r.body.error?.message, 'string');
  return r.body.error.message as string;
};
