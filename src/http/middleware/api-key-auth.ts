import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { KEY_LOOKUP_LENGTH } from '../../commands/users.ts';
import type { ReadStore } from '../../projections/read-store.ts';
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../../projections/users-projector.ts';
import { pathCovered, readAccessOf, type ReadAccess } from '../../users/users.ts';
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

const BASIC = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i;
const invalidKey = () => new HttpError(403, 'svc:auth:invalid-api-key', 'Invalid API Key');

/**
 * HTTP Basic with user name `svc` and an API key as password. The key must exist, not be revoked,
 * cover the request path, and belong to an active user. Failures are counted per client address.
 */
export const apiKeyAuth = (reads: ReadStore, throttle: FailureThrottle): Middleware<KeyedState> => async (ctx, next) => {
  const client = ctx.ip;
  if (throttle.blocked(client)) {
    throw new HttpError(403, 'svc:auth:throttle', 'Too many failed API authentication attempts, API usage suspended. Pause requests to wait until restriction lifted.');
  }
  const match = BASIC.exec(ctx.get('Authorization'));
  if (!match) throw unauthorised('This API needs HTTP Basic authentication with user name svc and an API key as password', 'Basic realm="svc", charset="UTF-8"', 'svc:auth:credentials-required');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const key = decoded.startsWith('svc:') ? decoded.slice(4) : '';
  const fail = () => {
    throttle.fail(client);
    return invalidKey();
  };
  if (key.length <= KEY_LOOKUP_LENGTH) throw fail();
  const [candidate] = await reads.find<ApiKeyDoc>(API_KEYS, { where: { lookup: key.slice(0, KEY_LOOKUP_LENGTH) }, limit: 1 });
  const hash = createHash('sha256').update(key).digest();
  if (!candidate || !timingSafeEqual(hash, Buffer.from(candidate.hash, 'hex')) || candidate.revoked || !pathCovered(candidate.path, ctx.path)) throw fail();
  const user = await reads.get<UserDoc>(USERS, candidate.username);
  if (!user || !user.active) throw new HttpError(403, 'svc:auth:not-authorised', 'Not authorised');
  const groups = [...(await reads.getMany<GroupDoc>(GROUPS, user.groups)).values()];
  ctx.state.principal = {
    username: user.username,
    keyId: candidate.id,
    ...(user.profileRef ? { profileRef: user.profileRef } : {}),
    groups: user.groups,
    access: readAccessOf(user, groups),
  };
  ctx.state.actor = `apikey:${candidate.id}`;
  await next();
};
