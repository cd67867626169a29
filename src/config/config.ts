import { resolve } from 'node:path';
import { REPORTING_ENV_SPEC, reportingConfigOf, type ReportingConfig } from './reporting-config.ts';
import { configFile } from './paths.ts';
import { FILES_ENV_SPEC, filesConfigOf, type FilesConfig } from './files-config.ts';
import { byteSize, decodeEnv, httpUrl, integer, oneOf, optional, text } from './env.ts';
import { parseTrustProxy, TRUST_PROXY_EXPECTED, type TrustProxy } from './trust-proxy.ts';
import { OBSERVABILITY_ENV_SPEC, observabilityConfigOf, type ObservabilityConfig } from './observability-config.ts';

const ENGINE_URL = (schemes: readonly string[]) => (s: string) => schemes.some((p) => s.startsWith(p)) && URL.canParse(s);

export const ENV_SPEC = {
  PORT: integer(0, 65535, 8080),
  SVC_HOST: text('a host name or IP address to listen on', (s) => /^[A-Za-z0-9.:\[\]-]+$/.test(s), () => '0.0.0.0'),
  SVC_BASE_URL: optional(httpUrl()),
  SVC_DATA_DIR: text('a directory path', (s) => s.length > 0, () => './data'),
  SVC_ADMIN_TOKEN: optional(text('at least 16 characters with no white space', (s) => s.length >= 16 && !/\s/.test(s))),
  SVC_EVENT_STORE: optional(
    text('an EventStoreDB connection string (esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover://); unset for embedded SQLite',
      ENGINE_URL(['esdb://', 'esdb+discover://', 'kurrentdb://', 'kurrentdb+discover://'])),
  ),
  SVC_READ_STORE: optional(
    text('a MongoDB connection string (mongodb:// or mongodb+srv://); unset for embedded SQLite', ENGINE_URL(['mongodb://', 'mongodb+srv://'])),
  ),
  SVC_BODY_LIMIT: byteSize(1024 * 1024),
  SVC_WAIT_TIMEOUT_MS: integer(0, 600_000, 5000),
  SVC_SHUTDOWN_TIMEOUT_MS: integer(0, 600_000, 10_000),
  SVC_HEADERS_TIMEOUT_MS: integer(1000, 300_000, 20_000),
  // At most an hour: the blob store's start-up sweep relies on no upload lasting longer.
  SVC_REQUEST_TIMEOUT_MS: integer(1000, 3_600_000, 300_000),
  SVC_KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000, 5_000),
  SVC_SCHEMA: optional(text('a path to a schema JSON file', (s) => s.length > 0)),
  SVC_MODELS: optional(text('a path to a data-import models JSON file', (s) => s.length > 0)),
  SVC_COLLECTIONS: optional(text('a path to a reporting collections JSON file', (s) => s.length > 0)),
  SVC_SNAPSHOT_INTERVAL: integer(1, 100_000_000, 2_000),
  SVC_REBUILD_CACHE: byteSize(48 * 1024 * 1024),
  SVC_REBUILD_WORKERS: integer(1, 16, 2),
  SVC_PROJECTION_CACHE: byteSize(32 * 1024 * 1024),
  SVC_READ_STORE_CACHE: byteSize(64 * 1024 * 1024),
  SVC_SNAPSHOT_CACHE: byteSize(64 * 1024 * 1024),
  SVC_OBJECT_CACHE: byteSize(16 * 1024 * 1024),
  SVC_COMMAND_CACHE: byteSize(16 * 1024 * 1024),
  ...REPORTING_ENV_SPEC,
  SVC_ROLE: oneOf(['all', 'api', 'projector'] as const, 'all'),
  SVC_LEASE_TTL_MS: integer(1_000, 600_000, 10_000),
  SVC_LEASE_RENEW_MS: optional(integer(100, 300_000)),
  SVC_CHECKPOINT_POLL_MS: integer(10, 60_000, 500),
  SVC_IDEMPOTENCY_LEASE_MS: integer(500, 3_600_000, 30_000),
  SVC_TRUST_PROXY: optional(text(TRUST_PROXY_EXPECTED, (s) => parseTrustProxy(s) !== undefined)),
  SVC_LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
  ...FILES_ENV_SPEC,
  ...OBSERVABILITY_ENV_SPEC,
};

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly baseUrl: string;
  readonly dataDir: string;
  /** Unset: generated on first start and kept in the data directory. */
  readonly adminToken: string | undefined;
  readonly eventStore: { readonly engine: 'sqlite' } | { readonly engine: 'esdb'; readonly url: string };
  readonly readStore: { readonly engine: 'sqlite' } | { readonly engine: 'mongodb'; readonly url: string };
  readonly bodyLimitBytes: number;
  /** Longest a command waits for its effects to become readable before answering. */
  readonly waitTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  /** Limits on slow clients: time to send the headers, the whole request, and idle time between keep-alive requests. */
  readonly http: { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number; readonly keepAliveTimeoutMs: number };
  /** Schema file; default config/schema.json of the project. */
  readonly schemaFile: string;
  /** Data-import models; default config/models.json of the project. */
  readonly modelsFile: string;
  /** Reporting collections; default config/collections.json of the project. */
  readonly collectionsFile: string;
  /** A collection snapshot is taken whenever its projection has advanced this far in the log. */
  readonly snapshotInterval: number;
  /** Bytes of folded documents (as JSON) a rebuild keeps in memory; the rest is written and read back. */
  readonly rebuildCacheBytes: number;
  /** Worker threads one rebuild spreads its projections over (each reads the log itself; the cache is shared out). */
  readonly rebuildWorkers: number;
  /** Bytes of documents (as JSON) the live projections keep in memory across commits, all together. */
  readonly projectionCacheBytes: number;
  /** SQLite page cache of the service's read store connection (embedded read store only). */
  readonly readStoreCacheBytes: number;
  /** Bytes of fold states parsed from snapshots (as JSON) kept for `at` answers. */
  readonly snapshotCacheBytes: number;
  /** Bytes of objects (with their kept answers) and link targets the Object API keeps (estimated). */
  readonly objectCacheBytes: number;
  /** Bytes of stream states push-data and object commands keep between commands (estimated as JSON). */
  readonly commandCacheBytes: number;
  /** The answer cache and the bound on `at` replays. */
  readonly reporting: ReportingConfig;
  /** File storage and signed downloads. */
  readonly files: FilesConfig;
  /** all: HTTP and projections in one process; api: HTTP only; projector: projections (and a status endpoint) only. */
  readonly role: 'all' | 'api' | 'projector';
  /** Projection leases: a holder renews every `renewMs`; one not renewed for `ttlMs` is taken over. */
  readonly leases: { readonly ttlMs: number; readonly renewMs: number };
  /** How often a process reads the checkpoints stored by other processes while nobody waits for one. */
  readonly checkpointPollMs: number;
  /** How long a request holds its Idempotency-Key without renewing it; a retry takes a lapsed key over. */
  readonly idempotencyLeaseMs: number;
  /** Whether (and how far) the client address is taken from X-Forwarded-For. */
  readonly trustProxy: TrustProxy;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** /metrics protection and what /readyz accepts. */
  readonly observability: ObservabilityConfig;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export const loadConfig = (env: Record<string, string | undefined> = process.env): Config => {
  const decoded = decodeEnv(ENV_SPEC, env);
  if (!decoded.ok) throw new ConfigError(decoded.errors);
  const v = decoded.value;
  const renewMs = v.SVC_LEASE_RENEW_MS ?? Math.floor(v.SVC_LEASE_TTL_MS / 3);
  if (renewMs >= v.SVC_LEASE_TTL_MS) throw new ConfigError(['SVC_LEASE_RENEW_MS must be less than SVC_LEASE_TTL_MS (a third of it is usual)']);
  if (v.SVC_REQUEST_TIMEOUT_MS < v.SVC_HEADERS_TIMEOUT_MS) {
    throw new ConfigError(['SVC_REQUEST_TIMEOUT_MS must be at least SVC_HEADERS_TIMEOUT_MS (the whole request includes its headers)']);
  }
  return {
    port: v.PORT,
    host: v.SVC_HOST,
    baseUrl: v.SVC_BASE_URL ?? `http://localhost:${v.PORT}`,
    dataDir: resolve(v.SVC_DATA_DIR),
    adminToken: v.SVC_ADMIN_TOKEN,
    eventStore: v.SVC_EVENT_STORE ? { engine: 'esdb', url: v.SVC_EVENT_STORE } : { engine: 'sqlite' },
    readStore: v.SVC_READ_STORE ? { engine: 'mongodb', url: v.SVC_READ_STORE } : { engine: 'sqlite' },
    bodyLimitBytes: v.SVC_BODY_LIMIT,
    waitTimeoutMs: v.SVC_WAIT_TIMEOUT_MS,
    shutdownTimeoutMs: v.SVC_SHUTDOWN_TIMEOUT_MS,
    http: { headersTimeoutMs: v.SVC_HEADERS_TIMEOUT_MS, requestTimeoutMs: v.SVC_REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: v.SVC_KEEP_ALIVE_TIMEOUT_MS },
    schemaFile: v.SVC_SCHEMA ? resolve(v.SVC_SCHEMA) : configFile('schema.json'),
    modelsFile: v.SVC_MODELS ? resolve(v.SVC_MODELS) : configFile('models.json'),
    collectionsFile: v.SVC_COLLECTIONS ? resolve(v.SVC_COLLECTIONS) : configFile('collections.json'),
    snapshotInterval: v.SVC_SNAPSHOT_INTERVAL,
    rebuildCacheBytes: v.SVC_REBUILD_CACHE,
    rebuildWorkers: v.SVC_REBUILD_WORKERS,
    projectionCacheBytes: v.SVC_PROJECTION_CACHE,
    readStoreCacheBytes: v.SVC_READ_STORE_CACHE,
    snapshotCacheBytes: v.SVC_SNAPSHOT_CACHE,
    objectCacheBytes: v.SVC_OBJECT_CACHE,
    commandCacheBytes: v.SVC_COMMAND_CACHE,
    reporting: reportingConfigOf(v),
    role: v.SVC_ROLE,
    leases: { ttlMs: v.SVC_LEASE_TTL_MS, renewMs },
    checkpointPollMs: v.SVC_CHECKPOINT_POLL_MS,
    idempotencyLeaseMs: v.SVC_IDEMPOTENCY_LEASE_MS,
    trustProxy: parseTrustProxy(v.SVC_TRUST_PROXY) ?? { kind: 'off' },
    logLevel: v.SVC_LOG_LEVEL,
    files: filesConfigOf(v),
    observability: observabilityConfigOf(v, v.SVC_EVENT_STORE ? 'esdb' : 'sqlite'),
  };
};
