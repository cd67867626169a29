/**
 * Helpers for end-to-end tests of store objects, users, groups, API keys and the Object API v0:
 * everything is created through the admin HTTP API of a running test service, never behind its back.
 */
import * as assert from 'uvu/assert';
import type { TestService } from './service.ts';

export interface Reply<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly contentType: string;
  readonly body: T;
}

export interface CallOptions {
  readonly method?: string;
  /** Sent as JSON unless it is a string (sent as it is, still labelled application/json). */
  readonly body?: unknown;
  /** Adds the admin bearer token (default true). */
  readonly admin?: boolean;
  readonly headers?: Record<string, string>;
}

/** One request; the body is parsed as JSON when it is JSON, else kept as text. */
export const call = async <T = any>(svc: TestService, path: string, opts: CallOptions = {}): Promise<Reply<T>> => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] ??= 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const res = await svc.request(path, { method: opts.method ?? 'GET', headers, admin: opts.admin ?? true, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  let parsed: unknown = text;
  if (contentType.includes('json')) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, contentType, body: parsed as T };
};

/** The error envelope of every JSON error response: checks its shape and returns kind and message. */
export const errorOf = (reply: Reply): { kind: string; message: string } => {
  assert.match(reply.contentType, 'application/json', `error responses are JSON (got ${reply.contentType}: ${String(reply.body).slice(0, 80)})`);
  const b = reply.body as { success?: unknown; kind?: unknown; error?: { message?: unknown } };
  assert.is(b.success, false, `expected an error, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
  assert.type(b.kind, 'string');
  assert.type(b.error?.message, 'string');
  return { kind: b.kind as string, message: b.error!.message as string };
};

/** Asserts status, kind and (optionally) that the message matches. */
export const expectError = (reply: Reply, status: number, kind: string, message?: string | RegExp) => {
  const e = errorOf(reply);
  assert.is(reply.status, status, `status (body ${JSON.stringify(reply.body)})`);
  assert.is(e.kind, kind, `kind (message: ${e.message})`);
  if (typeof message === 'string') assert.is(e.message, message);
  else if (message) assert.match(e.message, message);
  return e;
};

/** `Authorization` value for HTTP Basic with user name `svc` (or another) and a key as password. */
export const basic = (key: string, user = 'svc') => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

let counter = 0;
/** A name unique within this process (test files share nothing but it keeps names readable). */
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(counter++).toString(36)}`;

export interface GroupInput {
  readonly code?: string;
  readonly title?: string;
  readonly readLabels?: readonly string[];
  readonly readAll?: boolean;
}

export const createGroup = async (svc: TestService, input: GroupInput = {}) => {
  const code = input.code ?? `test:group:${unique('g').toLowerCase()}`;
  const reply = await call(svc, '/api/admin/groups', {
    method: 'POST',
    body: { code, title: input.title ?? code, ...(input.readLabels ? { readLabels: input.readLabels } : {}), ...(input.readAll !== undefined ? { readAll: input.readAll } : {}) },
  });
  assert.is(reply.status, 201, `create group: ${JSON.stringify(reply.body)}`);
  return code;
};

export interface UserInput {
  readonly username?: string;
  readonly first?: string;
  readonly last?: string;
  readonly email?: string;
  readonly groups?: readonly string[];
}

export const createUser = async (svc: TestService, input: UserInput = {}): Promise<{ username: string; ref: string }> => {
  const username = input.username ?? unique('user').toLowerCase();
  const reply = await call(svc, '/api/admin/users', {
    method: 'POST',
    body: {
      username,
      name: { first: input.first ?? 'Test', last: input.last ?? username },
      ...(input.email ? { email: input.email } : {}),
      ...(input.groups ? { groups: input.groups } : {}),
    },
  });
  assert.is(reply.status, 201, `create user: ${JSON.stringify(reply.body)}`);
  assert.is(reply.body.username, username);
  return reply.body;
};

export const issueKey = async (svc: TestService, username: string, input: { name?: string; path?: string } = {}): Promise<{ id: string; key: string; path: string }> => {
  const reply = await call(svc, `/api/admin/users/${username}/api-keys`, { method: 'POST', body: input });
  assert.is(reply.status, 201, `issue key: ${JSON.stringify(reply.body)}`);
  return reply.body;
};

export const setUser = async (svc: TestService, username: string, change: { active?: boolean; groups?: readonly string[]; email?: string }) => {
  const reply = await call(svc, `/api/admin/users/${username}`, { method: 'PATCH', body: change });
  assert.is(reply.status, 200, `change user: ${JSON.stringify(reply.body)}`);
  return reply.body;
};

/** A read client of the Object API: a group with the given access, a user in it, and a key. */
export interface Reader {
  readonly username: string;
  readonly profileRef: string;
  readonly key: string;
  readonly keyId: string;
  readonly group: string | undefined;
  /** GET with this reader's key. */
  get(path: string, headers?: Record<string, string>): Promise<Reply>;
  /** GET /api/v0-object/ref/<ref>?sources=... */
  object(ref: string, sources?: string | null): Promise<Reply>;
}

export const createReader = async (
  svc: TestService,
  access: { readAll?: boolean; readLabels?: readonly string[] } | null = { readAll: true },
  keyPath?: string,
): Promise<Reader> => {
  const group = access ? await createGroup(svc, access) : undefined;
  const user = await createUser(svc, group ? { groups: [group] } : {});
  const key = await issueKey(svc, user.username, keyPath ? { path: keyPath } : {});
  const get = (path: string, headers: Record<string, string> = {}) => call(svc, path, { admin: false, headers: { Authorization: basic(key.key), ...headers } });
  return {
    username: user.username,
    profileRef: user.ref,
    key: key.key,
    keyId: key.id,
    group,
    get,
    object: (ref, sources = 'NONE') => get(`/api/v0-object/ref/${ref}${sources === null ? '' : `?sources=${encodeURIComponent(sources)}`}`),
  };
};

export type Attrs = Record<string, unknown>;

/** POST /api/admin/objects, expecting 201. */
export const createObject = async (svc: TestService, type: string, attributes: Attrs, labels?: readonly string[]): Promise<{ ref: string; recordVersion: number }> => {
  const reply = await call(svc, '/api/admin/objects', { method: 'POST', body: { type, attributes, ...(labels ? { labels } : {}) } });
  assert.is(reply.status, 201, `create object: ${JSON.stringify(reply.body)}`);
  return reply.body;
};

export const postObject = (svc: TestService, body: unknown) => call(svc, '/api/admin/objects', { method: 'POST', body });

export const patchObject = (svc: TestService, ref: string, body: unknown) => call(svc, `/api/admin/objects/${ref}`, { method: 'PATCH', body });

/** GET the serialised object through a reader, expecting success; returns `object`. */
export const readObject = async (reader: Reader, ref: string, sources = 'NONE'): Promise<any> => {
  const reply = await reader.object(ref, sources);
  assert.is(reply.status, 200, `read ${ref}: ${JSON.stringify(reply.body)}`);
  assert.is(reply.body.success, true);
  assert.is(reply.body.kind, 'svc:api-v0:object:serialised');
  return reply.body.object;
};

/** A clock tests move by hand (for the service's event timestamps and its failure throttle). */
export class ManualClock {
  constructor(public now: number) {}
  readonly fn = () => this.now;
  set(iso: string) {
    this.now = Date.parse(iso);
  }
  advance(ms: number) {
    this.now += ms;
  }
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const REF = /^[0-9a-hjkmnp-tv-z]{12}$/;
