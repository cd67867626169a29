/**
 * Helpers for end-to-end tests of push-data APIs: define an API (and issue its key) through the
 * admin API, push raw bodies with HTTP Basic `svc:<key>`, read objects back through the admin API.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { configFile } from '../../src/config/paths.ts';
import { basic, call, unique } from './fixtures.ts';
import type { TestService } from './service.ts';
import { tempDir } from './tmp.ts';

/** The contract's example control file (spec/interface.md, "update-title"), verbatim apart from `svc:`. */
export const EXAMPLE_CONTROL = {
  dataImportControlFileVersion: 0,
  model: 'svc:person',
  files: { DEFAULT: { read: 'json', singleRecord: true } },
  instructions: [
  { source: 'username', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
  { action: 'load', destination: 'profile', using: 'load:by-ref' },
  { source: 'title', destination: 'phd:project', name: 'dc:attribute:title' },
  ],
};

/** The push-data group (haplo's `haplo:group:data-import-api:service`). */
export const PUSH_DATA_GROUP = 'svc:group:data-import-api';
/** The service user that keys issued for an API belong to. */
export const PUSH_DATA_USER = 'svc-data-import-api';

export interface SaveAction {
  readonly kind: 'object:save';
  readonly destination: string;
  readonly ref: string;
  readonly new: boolean;
}

/** The JSON push-data response body (haplo-behaviour.md §2.2). */
export interface PushBody {
  readonly result: 'success' | 'failure' | 'error' | 'not authorised';
  readonly applied: number;
  readonly failures: number;
  readonly errorCount: number;
  readonly errors: string[];
  readonly actions: { changed: SaveAction[]; record: string }[];
}

export interface PushReply<T = PushBody> {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
  /** Parsed JSON when the response is JSON; otherwise undefined. */
  readonly body: T;
}

/** A control file: the JSON object a REST API definition holds. */
export type Control = Record<string, unknown>;

export const control = (model: string, instructions: unknown[], extra: Record<string, unknown> = {}, read: Record<string, unknown> = { read: 'json', singleRecord: true }): Control => ({
  dataImportControlFileVersion: 0,
  model,
  files: { DEFAULT: read },
  instructions,
  ...extra,
});

/** POST /api/push-data/<url> with a raw body (a JSON value is stringified). */
export const push = async (svc: TestService, url: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<PushReply> => {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await svc.request(`/api/push-data/${url}`, { admin: false, method: 'POST', body: raw, headers: { Authorization: basic(key), ...headers } });
  const text = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  return { status: res.status, contentType, text, body: contentType.includes('json') ? JSON.parse(text) : (undefined as never) };
};

export interface Api {
  readonly url: string;
  readonly key: string;
  push(body: unknown, headers?: Record<string, string>): Promise<PushReply>;
}

/** Defines a REST API (201 expected) and issues its key. */
export const defineApi = async (
  svc: TestService,
  controlFile: unknown,
  options: { url?: string; description?: string; response?: 'JSON' | 'XML'; enabled?: boolean } = {},
): Promise<Api> => {
  const url = options.url ?? unique('api-').toLowerCase();
  const created = await call(svc, '/api/admin/rest-apis', {
    method: 'POST',
    body: {
      url,
      description: options.description ?? `API ${url}`,
      controlFile,
      ...(options.response ? { response: options.response } : {}),
      ...(options.enabled !== undefined ? { enabled: options.enabled } : {}),
    },
  });
  assert.is(created.status, 201, `define ${url}: ${JSON.stringify(created.body)}`);
  const issued = await call(svc, `/api/admin/rest-apis/${url}/api-keys`, { method: 'POST', body: {} });
  assert.is(issued.status, 201, `key for ${url}: ${JSON.stringify(issued.body)}`);
  const key = issued.body.key as string;
  return { url, key, push: (body, headers) => push(svc, url, key, body, headers) };
};

/** A store object as the admin API serialises it (all sources), or null when it does not exist. */
export const adminObject = async (svc: TestService, ref: string): Promise<any | null> => {
  const reply = await call(svc, `/api/admin/objects/${ref}`);
  if (reply.status !== 200) return null;
  return reply.body.object;
};

/** The values of one attribute of a serialised object (empty when absent). */
export const attr = (object: any, code: string): any[] => object?.attributes?.[code] ?? [];

/** Plain values (`value`, or `ref` for links) of one attribute. */
export const plain = (object: any, code: string): unknown[] => attr(object, code).map((v: any) => (v.type === 'link' ? v.ref : v.value));

/** Asserts a push succeeded (200) and returns its body. */
export const expectSuccess = (reply: PushReply, message = ''): PushBody => {
  assert.is(reply.status, 200, `${message} expected success, got ${reply.status}: ${reply.text}`);
  assert.is(reply.body.result, 'success', reply.text);
  return reply.body;
};

/** Asserts a push failed (400, result failure) and returns its body. */
export const expectFailure = (reply: PushReply, message = ''): PushBody => {
  assert.is(reply.status, 400, `${message} expected failure, got ${reply.status}: ${reply.text}`);
  assert.is(reply.body.result, 'failure', reply.text);
  return reply.body;
};

/** The refs saved by one record of a push, in order. */
export const savedRefs = (body: PushBody, record = 0): string[] => body.actions[record]?.changed.map((c) => c.ref) ?? [];

/** The default models plus extra ones, written to a fresh file (for SVC_MODELS); returns its path and a remover. */
export const modelsWith = (extraModels: unknown[]): { file: string; remove(): void } => {
  const base = JSON.parse(readFileSync(configFile('models.json'), 'utf8')) as { models: unknown[]; autoModels: string[] };
  const tmp = tempDir('svc-models');
  const file = join(tmp.dir, 'models.json');
  writeFileSync(file, JSON.stringify({ ...base, models: [...base.models, ...extraModels] }));
  return { file, remove: tmp.remove };
};

/** The event log's head position: unchanged means nothing was written. */
export const head = (svc: TestService): Promise<number> => svc.engines.events.headPosition();
