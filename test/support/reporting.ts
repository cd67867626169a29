/** What the reporting e2e tests share: admin writes, a reporting key reading common objects, collection-data answers. */
import * as assert from 'uvu/assert';
import type { TestService } from './service.ts';

export const PHD_DATA = '/api/reporting/v0/collection-data/phd_projects';
export const TITLE = 'dc:attribute:title';

export type Answer = { columns: string[]; rows: unknown[][]; objects: Record<string, { title: string }> };

export const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

/** Creates an object through the admin API; its ref. */
export const created = async (svc: TestService, body: unknown): Promise<string> => {
  const res = await json(svc, '/api/admin/objects', body);
  assert.is(res.status, 201, await res.clone().text());
  return ((await res.json()) as { ref: string }).ref;
};

export const patch = async (svc: TestService, ref: string, body: unknown): Promise<void> => {
  const res = await json(svc, `/api/admin/objects/${ref}`, body, 'PATCH');
  assert.is(res.status, 200, await res.clone().text());
};

/** Headers of a reporting key whose user may read `svc:label:common`. */
export const commonReporterKey = async (svc: TestService): Promise<Record<string, string>> => {
  await json(svc, '/api/admin/groups', { code: 'svc:group:reporting', title: 'Reporting', readLabels: ['svc:label:common'] });
  await json(svc, '/api/admin/users', { username: 'reporter', name: { first: 'Re', last: 'Porter' }, groups: ['svc:group:reporting'] });
  const key = (await (await json(svc, '/api/admin/users/reporter/api-keys', { path: '/api/reporting/v0/' })).json()) as { key: string };
  return { Authorization: `Basic ${Buffer.from(`svc:${key.key}`).toString('base64')}` };
};

/** `phd_projects` now, as the key's user sees it (200 expected). */
export const phdAnswer = async (svc: TestService, headers: Record<string, string>): Promise<Answer> => {
  const res = await svc.request(PHD_DATA, { admin: false, headers });
  assert.is(res.status, 200);
  return (await res.json()) as Answer;
};
