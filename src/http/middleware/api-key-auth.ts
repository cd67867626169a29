import { hash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { KEY_LOOKUP_LENGTH } from '../../commands/users.ts';
import type { ReadStore } from '../../projections/read-store.ts';
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../../projections/read-models.ts';
import { VersionedCache, type VersionedProjections } from '../../projections/versioned-cache.ts';
import { pathCovered, readAccessOf, type ReadAccess } from '../../domain/users/users.ts';
import { HttpError, unauthorised } from '../errors.ts';
import type { FailureThrottle } from '../throttle.ts';
import type { AppState } from '../state.ts';

export interface Principal {
  readonly username: string;
  readonly keyId: string;
  readonly profileRef?: string;
  readonly groups: readonly string[];
  readonly access: ReadAccess;
}

export type KeyedState = AppState & { principal: Principal };

/** What a valid (existing, unrevoked) key resolves to; `principal` is absent when its user is inactive or gone. */
interface ResolvedKey {
  readonly keyId: string;
  /** The key's path restriction, checked against every request. */
  readonly path: string;
  readonly principal?: Principal;
}

/**
 * Resolved keys by the SHA-256 of the whole key (what the read model stores, so no plaintext key is
 * kept), valid while the read model of users, groups and API keys stays at the version they were
 * loaded at. Only valid keys are cached: unknown and revoked keys always go to the read store (and
 * count towards the failure throttle).
 */
export class PrincipalCache extends VersionedCache<string, ResolvedKey> {
  /** `version`: the version of the projection holding users, groups and API keys (-1: do not cache). */
  constructor(version: () => number, maxEntries = 1000) {
    super(version, maxEntries);
  }

  /** Over a runner's projections; caches nothing unless one projection holds users, groups and API keys. */
  static forProjections(runner: VersionedProjections, maxEntries?: number): PrincipalCache {
    const holders = new Set([API_KEYS, USERS, GROUPS].map((c) => runner.projectors.find((p) => p.collections.some((s) => s.name === c))?.name));
    const [name] = [...holders];
    return new PrincipalCache(holders.size === 1 && name !== undefined ? () => runner.version(name) : () => -1, maxEntries);
  }
}

const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;
const invalidKey = () => new HttpError(403, 'svc:auth:invalid-api-key', 'Invalid API Key');
const throttled = (blockedMs: number) =>
  new HttpError(403, 'svc:auth:throttle', 'Too many failed API authentication attempts, API usage suspended. Pause requests to wait until restriction lifted.', {
    'Retry-After': String(Math.ceil(blockedMs / 1000)),
  });

/** Loads what a key resolves to from the read store; undefined when no unrevoked key has this hash. */
const resolveKey = async (reads: ReadStore, key: string, digest: Buffer): Promise<ResolvedKey | undefined> => {
  const [candidate] = await reads.find<ApiKeyDoc>(API_KEYS, { where: { lookup: key.slice(0, KEY_LOOKUP_LENGTH) }, limit: 1 });
  if (!candidate || !timingSafeEqual(digest, Buffer.from(candidate.hash, 'hex')) || candidate.revoked) return undefined;
  const user = await reads.get<UserDoc>(USERS, candidate.username);
  if (!user || !user.active) return { keyId: candidate.id, path: candidate.path };
  const groups = [...(await reads.getMany<GroupDoc>(GROUPS, user.groups)).values()];
  const principal: Principal = Object.freeze({
    username: user.username,
    keyId: candidate.id,
    ...(user.profileRef ? { profileRef: user.profileRef } : {}),
    groups: Object.freeze([...user.groups]),
    access: readAccessOf(user, groups),
  });
  return { keyId: candidate.id, path: candidate.path, principal };
};

/**
 * HTTP Basic with user name `svc` and an API key as password. The key must exist, not be revoked,
 * cover the request path, and belong to an active user. Failures are counted per client address.
 *
 * With a `principals` cache, a key seen before is checked by its hash alone while the users read
 * model is unchanged; any change to it (a revoked key, a deactivated user, changed groups) drops
 * the cache before the command that made it answers.
 */
export const apiKeyAuth = (reads: ReadStore, throttle: FailureThrottle, principals?: PrincipalCache): Middleware<KeyedState> => {
  const failed = async (client: string) => {
    const { blockedMs, blockedBefore } = await throttle.fail(client);
    return blockedBefore ? throttled(blockedMs) : invalidKey();
  };
  return async (ctx, next) => {
    const client = ctx.ip;
    const blockedMs = throttle.blockedFor(client);
    if (blockedMs > 0) throw throttled(blockedMs);
    const match = BASIC.exec(ctx.get('Authorization'));
    if (!match) throw unauthorised('This API needs HTTP Basic authentication with user name svc and an API key as password', 'Basic realm="svc", charset="UTF-8"', 'svc:auth:credentials-required');
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const key = decoded.startsWith('svc:') ? decoded.slice(4) : '';
    if (key.length <= KEY_LOOKUP_LENGTH) throw await failed(client);
    // SHA-256 of the whole key: the cache's key, and what the stored hash is compared with.
    const digest = hash('sha256', key, 'base64');
    let resolved = principals?.get(digest);
    if (!resolved) {
      // The version is read before loading, so that a change committed meanwhile leaves the entry stale.
      const version = principals ? principals.version() : -1;
      resolved = await resolveKey(reads, key, Buffer.from(digest, 'base64'));
      if (resolved && principals) principals.set(digest, resolved, version);
    }
    if (!resolved || !pathCovered(resolved.path, ctx.path)) throw await failed(client);
    if (!resolved.principal) throw new HttpError(403, 'svc:auth:not-authorised', 'Not authorised');
    ctx.state.principal = resolved.principal;
    ctx.state.actor = `apikey:${resolved.keyId}`;
    await next();
  };
};
