/**
 * The caches of the read APIs, unit by unit: VersionedCache (exact invalidation by read-model
 * version, the version read before loading, no caching for an unknown projection, bounded size)
 * and the API-key middleware over a fake read store that counts its reads.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashKey } from '../../src/commands/users.ts';
import { apiKeyAuth, PrincipalCache, type KeyedState } from '../../src/http/middleware/api-key-auth.ts';
import { HttpError } from '../../src/http/errors.ts';
import { FailureThrottle } from '../../src/http/throttle.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { collectionVersion, VersionedCache } from '../../src/projections/versioned-cache.ts';
import { SizedVersionedCache } from '../../src/projections/sized-cache.ts';

const test = suite('read caches');

test('VersionedCache: a value is served while the version stays, dropped when it moves', () => {
  let version = 1;
  const cache = new VersionedCache<string, string>(() => version, 10);
  assert.is(cache.get('a'), undefined);
  const v = cache.version();
  cache.set('a', 'A', v);
  assert.is(cache.get('a'), 'A');
  version = 2;
  assert.is(cache.get('a'), undefined);
  assert.is(cache.size, 0);
  version = 1;
  assert.is(cache.get('a'), undefined, 'never resurrected, even if a version number came back');
});

test('VersionedCache: a value loaded while the version moved is not stored', () => {
  let version = 5;
  const cache = new VersionedCache<string, string>(() => version, 10);
  const before = cache.version();
  version = 6; // a batch was committed while loading
  cache.set('a', 'maybe stale', before);
  assert.is(cache.get('a'), undefined);
  cache.set('a', 'fresh', cache.version());
  assert.is(cache.get('a'), 'fresh');
});

test('VersionedCache: version -1 (no such projection here) caches nothing', () => {
  const cache = new VersionedCache<string, string>(() => -1, 10);
  cache.set('a', 'A', cache.version());
  assert.is(cache.get('a'), undefined);
  assert.is(cache.size, 0);
  const runner = { projectors: [{ name: 'objects', collections: [{ name: 'objects' }] }], version: (n: string) => (n === 'objects' ? 3 : -1) };
  assert.is(collectionVersion(runner, 'objects')(), 3);
  assert.is(collectionVersion(runner, 'nothing')(), -1);
});

test('VersionedCache: bounded, the oldest entry goes first', () => {
  const cache = new VersionedCache<number, number>(() => 0, 3);
  for (let i = 0; i < 5; i++) cache.set(i, i, 0);
  assert.is(cache.size, 3);
  assert.equal([0, 1, 2, 3, 4].map((i) => cache.get(i)), [undefined, undefined, 2, 3, 4]);
  cache.set(3, 33, 0);
  assert.is(cache.size, 3, 'replacing a key evicts nothing');
  assert.is(cache.get(3), 33);
});

test('SizedVersionedCache: large values push the oldest out, one larger than its share of the bound is not kept', () => {
  const cache = new SizedVersionedCache<number, string>(() => 0, 10_000, (v) => v.length);
  for (let i = 0; i < 50; i++) cache.set(i, `${i}`.padEnd(2500, 'x'), 0);
  assert.ok(cache.size <= 10_000 / 2500, `${cache.size} values of 2,500 bytes kept under 10,000`);
  assert.is(cache.get(49), '49'.padEnd(2500, 'x'));
  assert.is(cache.get(0), undefined);
  cache.set(48, 'small', 0);
  assert.is(cache.get(48), 'small', 'a replaced value counts its new size');
  cache.set(99, 'y'.repeat(20_000), 0);
  assert.is(cache.get(99), undefined, 'larger than the bound: not kept');
  assert.is(cache.get(49), '49'.padEnd(2500, 'x'), 'and it pushed nothing out');
  for (let i = 100; i < 400; i++) cache.set(i, 'tiny', 0);
  assert.ok(cache.size > 100, `${cache.size} small values kept`);
});

test('SizedVersionedCache: a size may count the key (look-ups keyed by pushed data of any length)', () => {
  const cache = new SizedVersionedCache<string, string | null>(() => 0, 10_000, (v, k) => k.length + (v?.length ?? 0));
  for (let i = 0; i < 50; i++) cache.set(`${i}`.padEnd(2500, 'u'), null, 0);
  assert.ok(cache.size <= 10_000 / 2500, `${cache.size} keys of 2,500 characters kept under 10,000`);
});

// ---------------------------------------------------------------------------------------------
// apiKeyAuth over a counting fake read store

const KEY = 'k'.repeat(16) + 'abcdefghijklmnopqrstuvwxyz01';

/** The throttle counts in a store of its own, so the fake below counts only the key look-ups. */
const throttle = (limit = 10) => new FailureThrottle(openSqliteReadStore(':memory:'), { scope: 'api-key', limit });

const fakeReads = () => {
  const docs: Record<string, Map<string, any>> = {
    api_keys: new Map([['key1', { id: 'key1', username: 'ann', name: 'n', path: '/api/', lookup: KEY.slice(0, 16), hash: hashKey(KEY), revoked: false, createdAt: 'x' }]]),
    users: new Map([['ann', { id: 'ann', username: 'ann', groups: ['g:readers'], active: true, service: false, emailKey: null }]]),
    groups: new Map([['g:readers', { id: 'g:readers', code: 'g:readers', title: 'R', readAll: false, readLabels: ['svc:label:common'] }]]),
  };
  const calls = { find: 0, get: 0, getMany: 0 };
  let onFind: (() => void) | undefined;
  const reads = {
    async find(collection: string, q: { where: { lookup: string } }) {
      calls.find++;
      const found = [...docs[collection]!.values()].filter((d) => d.lookup === q.where.lookup).map((d) => structuredClone(d));
      onFind?.(); // a change committed right after the read, before the request is done
      return found;
    },
    async get(collection: string, id: string) {
      calls.get++;
      const d = docs[collection]!.get(id);
      return d ? structuredClone(d) : null;
    },
    async getMany(collection: string, ids: readonly string[]) {
      calls.getMany++;
      return new Map(ids.flatMap((id) => (docs[collection]!.has(id) ? [[id, structuredClone(docs[collection]!.get(id))]] : [])));
    },
  } as unknown as ReadStore;
  return { reads, docs, calls, duringFind: (fn: (() => void) | undefined) => (onFind = fn) };
};

const request = async (auth: ReturnType<typeof apiKeyAuth>, key: string, path = '/api/v0-object/ref/x') => {
  const ctx = {
    ip: '127.0.0.1',
    path,
    state: {} as KeyedState,
    get: (h: string) => (h === 'Authorization' ? `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` : ''),
  };
  try {
    await auth(ctx as any, async () => undefined);
    return { status: 200, principal: ctx.state.principal, actor: ctx.state.actor };
  } catch (e) {
    if (e instanceof HttpError) return { status: e.status, kind: e.kind };
    throw e;
  }
};

test('apiKeyAuth: a cached key costs no read; a version move makes it read again', async () => {
  const { reads, calls, docs } = fakeReads();
  let version = 1;
  const auth = apiKeyAuth(reads, throttle(), new PrincipalCache(() => version));
  const first = await request(auth, KEY);
  assert.is(first.status, 200);
  assert.is(first.actor, 'apikey:key1');
  assert.equal([...first.principal!.access.labels], ['svc:label:common']);
  assert.equal(calls, { find: 1, get: 1, getMany: 1 });
  for (let i = 0; i < 3; i++) assert.is((await request(auth, KEY)).status, 200);
  assert.equal(calls, { find: 1, get: 1, getMany: 1 }, 'served from the cache');

  docs.users!.get('ann')!.active = false;
  assert.is((await request(auth, KEY)).status, 200, 'until the read model announces a change, the cache answers');
  version = 2;
  assert.equal(await request(auth, KEY), { status: 403, kind: 'svc:auth:not-authorised' });
  assert.equal(await request(auth, KEY), { status: 403, kind: 'svc:auth:not-authorised' });
  assert.is(calls.find, 2, 'an inactive user is cached as such');

  docs.users!.get('ann')!.active = true;
  docs.api_keys!.get('key1')!.revoked = true;
  version = 3;
  assert.equal(await request(auth, KEY), { status: 403, kind: 'svc:auth:invalid-api-key' });
  assert.equal(await request(auth, KEY), { status: 403, kind: 'svc:auth:invalid-api-key' });
  assert.is(calls.find, 4, 'a revoked (invalid) key is never cached');
});

test('apiKeyAuth: a change committed during a load is never left cached', async () => {
  const { reads, calls, docs, duringFind } = fakeReads();
  let version = 1;
  const auth = apiKeyAuth(reads, throttle(), new PrincipalCache(() => version));
  // The revocation is committed while the first request loads the key: that request still sees
  // the key valid (it read before the commit), but what it loaded must not outlive it.
  duringFind(() => {
    docs.api_keys!.get('key1')!.revoked = true;
    version = 2;
    duringFind(undefined);
  });
  assert.is((await request(auth, KEY)).status, 200);
  assert.equal(await request(auth, KEY), { status: 403, kind: 'svc:auth:invalid-api-key' });
  docs.api_keys!.get('key1')!.revoked = false;
  version = 3;
  duringFind(() => {
    docs.users!.get('ann')!.groups = [];
    version = 4;
    duringFind(undefined);
  });
  assert.is((await request(auth, KEY)).status, 200);
  const after = await request(auth, KEY);
  assert.is(after.status, 200);
  assert.equal([...after.principal!.access.labels], [], 'reloaded after the change, not served from a stale entry');
  assert.is(calls.find, 4);
});

test('apiKeyAuth: wrong keys, path restrictions and the unknown-projection case', async () => {
  const { reads, calls, docs } = fakeReads();
  const auth = apiKeyAuth(reads, throttle(100), new PrincipalCache(() => -1));
  assert.is((await request(auth, KEY)).status, 200);
  assert.is((await request(auth, KEY)).status, 200);
  assert.is(calls.find, 2, 'version -1: nothing cached');

  const cached = apiKeyAuth(reads, throttle(100), new PrincipalCache(() => 7));
  assert.is((await request(cached, KEY)).status, 200);
  assert.equal(await request(cached, KEY.slice(0, -1) + 'X'), { status: 403, kind: 'svc:auth:invalid-api-key' });
  assert.equal(await request(cached, `${KEY}x`), { status: 403, kind: 'svc:auth:invalid-api-key' });
  docs.api_keys!.get('key1')!.path = '=/api/v0-object/ref/x';
  const exact = apiKeyAuth(reads, throttle(100), new PrincipalCache(() => 7));
  assert.is((await request(exact, KEY, '/api/v0-object/ref/x')).status, 200);
  assert.equal(await request(exact, KEY, '/api/v0-object/ref/y'), { status: 403, kind: 'svc:auth:invalid-api-key' }, 'the path is checked on a cache hit too');
});

test('PrincipalCache.forProjections: only when one projection holds users, groups and API keys', () => {
  const one = { projectors: [{ name: 'users', collections: [{ name: 'users' }, { name: 'groups' }, { name: 'api_keys' }] }], version: () => 4 };
  const split = { projectors: [{ name: 'a', collections: [{ name: 'users' }, { name: 'groups' }] }, { name: 'b', collections: [{ name: 'api_keys' }] }], version: () => 4 };
  assert.is(PrincipalCache.forProjections(one).version(), 4);
  assert.is(PrincipalCache.forProjections(split).version(), -1);
  assert.is(PrincipalCache.forProjections({ projectors: [], version: () => 4 }).version(), -1);
});

test.run();
