/**
 * A real file service for end-to-end tests and the files benchmark: the embedded engines (SQLite
 * event store and read store, disk blob store) in a fresh data directory, the projection runner with
 * every projector plus the files projector, and a koa app with the service's own middleware in the
 * order of `src/http/app.ts`, the admin user routes (to make API keys) and the file routers, on a
 * loopback port. It mounts the file routers the way `src/http/app.ts` is to mount them (the admin
 * JSON body parser skips `/api/admin/files`), so these tests pin that wiring down too.
 */
import Koa from 'koa';
import type Router from '@koa/router';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import * as assert from 'uvu/assert';
import type { CommandDeps } from '../../../src/commands/context.ts';
import { loadConfig, type Config } from '../../../src/config/config.ts';
import { openEngines, type Engines } from '../../../src/app/engines.ts';
import { eventDecoder } from '../../../src/events/decode.ts';
import { domainCodecs } from '../../../src/events/codecs.ts';
import type { BlobStore } from '../../../src/blobs/blob-store.ts';
import { loadFilesConfig, type FilesConfig } from '../../../src/config/files-config.ts';
import { openBlobStore } from '../../../src/app/open-blob-store.ts';
import { DownloadSigner, resolveDownloadSecret } from '../../../src/blobs/signed-urls.ts';
import { adminAuth } from '../../../src/http/middleware/admin-auth.ts';
import { handleErrors } from '../../../src/http/middleware/handle-errors.ts';
import { jsonBody } from '../../../src/http/middleware/json-body.ts';
import { jsonOutput } from '../../../src/http/middleware/json-output.ts';
import { logRequests } from '../../../src/http/middleware/log-requests.ts';
import { requestId } from '../../../src/http/middleware/request-id.ts';
import { unmatched } from '../../../src/http/middleware/unmatched.ts';
import { adminFileRoutes } from '../../../src/http/routes/admin-files.ts';
import { adminUserRoutes } from '../../../src/http/routes/admin-users.ts';
import { fileApiRoutes } from '../../../src/http/routes/file-api.ts';
import type { AppState } from '../../../src/http/state.ts';
import { FailureThrottle } from '../../../src/http/throttle.ts';
import { filesProjector } from '../../../src/projections/files-projector.ts';
import { allProjectors } from '../../../src/projections/all-projectors.ts';
import { ProjectionRunner } from '../../../src/projections/runner.ts';
import { loadSchema } from '../../../src/app/load-schema.ts';
import { tempDir } from '../../support/tmp.ts';

export const BASE_URL = 'https://files.example.org';
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A clock tests move by hand (event timestamps, signed-URL expiry, the failure throttle). */
export class ManualClock {
  constructor(public now: number) {}
  readonly fn = () => this.now;
  advance(ms: number) {
    this.now += ms;
  }
}

export interface FilesService {
  /** Where the server listens, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly config: Config;
  readonly files: FilesConfig;
  readonly engines: Engines;
  readonly runner: ProjectionRunner;
  readonly blobs: BlobStore;
  readonly signer: DownloadSigner;
  readonly adminToken: string;
  /** fetch against the server, with the admin token unless `admin: false`. */
  request(path: string, init?: RequestInit & { admin?: boolean }): Promise<Response>;
  /** The same URL on this server: signed URLs name SVC_BASE_URL, which is not where the test server listens. */
  local(absoluteUrl: string): string;
  stop(): Promise<void>;
}

const isAdminPath = (path: string) => path === '/api/admin' || path.startsWith('/api/admin/');
/** Admin routes that read the raw request body themselves. */
const isRawBodyPath = (path: string) => path === '/api/admin/files';

export const startFilesService = async (options: { env?: Record<string, string>; clock?: () => number; logger?: Logger } = {}): Promise<FilesService> => {
  const tmp = tempDir('svc-files');
  const env = { PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: ADMIN_TOKEN, SVC_BASE_URL: BASE_URL, ...options.env };
  const config = loadConfig(env);
  const files = loadFilesConfig(env);
  const logger = options.logger ?? pino({ level: 'silent' });
  const clock = options.clock;

  const schema = loadSchema(config.schemaFile);
  const decode = eventDecoder(domainCodecs);
  const engines = await openEngines(config, clock ? { clock } : {});
  // Once src/projections/index.ts lists the files projector, it is not added twice.
  const projectors = allProjectors(decode);
  if (!projectors.some((p) => p.name === 'files')) projectors.push(filesProjector(decode));
  const runner = new ProjectionRunner({ events: engines.events, reads: engines.reads, projectors, logger });
  await runner.start();
  const throttle = new FailureThrottle(10, 60_000, clock);
  const blobs = await openBlobStore(config);
  const signer = new DownloadSigner({
    secret: resolveDownloadSecret(files.downloadSecret, config.dataDir).secret,
    baseUrl: config.baseUrl,
    validSeconds: files.downloadValidSeconds,
    ...(clock ? { clock } : {}),
  });
  const commands: CommandDeps = { events: engines.events, reads: engines.reads, decode, schema, runner, waitTimeoutMs: config.waitTimeoutMs, logger };

  const app = new Koa<AppState>();
  app.proxy = false;
  app.silent = true;
  const admin = adminAuth(ADMIN_TOKEN);
  const adminBody = jsonBody(config.bodyLimitBytes);
  const routers = [
    adminUserRoutes(commands),
    adminFileRoutes(commands, { blobs, fileLimitBytes: files.fileLimitBytes }),
    fileApiRoutes({ commands, reads: engines.reads, throttle, blobs, signer, bodyLimitBytes: config.bodyLimitBytes }),
  ] as unknown as Router<AppState>[];
  app.use(requestId(logger));
  app.use(logRequests());
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(unmatched());
  app.use((ctx, next) => (isAdminPath(ctx.path) ? admin(ctx, () => (isRawBodyPath(ctx.path) ? next() : adminBody(ctx, next))) : next()));
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());

  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let stopping: Promise<void> | undefined;
  return {
    url,
    config,
    files,
    engines,
    runner,
    blobs,
    signer,
    adminToken: ADMIN_TOKEN,
    request: (path, { admin = true, headers, ...init } = {}) =>
      fetch(`${url}${path}`, { ...init, headers: { ...(admin ? { Authorization: `Bearer ${ADMIN_TOKEN}` } : {}), ...(headers as Record<string, string>) } }),
    local: (absoluteUrl) => {
      assert.ok(absoluteUrl.startsWith(`${config.baseUrl}/`), `${absoluteUrl} is under the base URL ${config.baseUrl}`);
      return `${url}${absoluteUrl.slice(config.baseUrl.length)}`;
    },
    stop: () =>
      (stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await runner.stop();
        await blobs.close();
        await engines.close();
        tmp.remove();
      })()),
  };
};

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export interface Reply<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly contentType: string;
  readonly body: T;
}

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

const adminJson = async (svc: FilesService, path: string, body: unknown): Promise<any> => {
  const r = await reply(await svc.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }));
  assert.ok(r.status === 201 || r.status === 200, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};

let counter = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

export interface FileClient {
  readonly key: string;
  readonly authorization: string;
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export const basic = (key: string, user = 'svc') => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

/** A user with an API key (restricted to `path` when given), made through the admin API. */
export const createFileClient = async (svc: FilesService, path?: string): Promise<FileClient> => {
  const group = `test:group:${unique('g').toLowerCase()}`;
  await adminJson(svc, '/api/admin/groups', { code: group, title: group, readAll: true });
  const username = unique('user').toLowerCase();
  await adminJson(svc, '/api/admin/users', { username, name: { first: 'File', last: 'Reader' }, groups: [group] });
  const { key } = await adminJson(svc, `/api/admin/users/${username}/api-keys`, path ? { path } : {});
  const authorization = basic(key);
  return {
    key,
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

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
