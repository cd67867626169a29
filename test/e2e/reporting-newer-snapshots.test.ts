/**
 * A cluster upgraded one process at a time can hold snapshots written by a newer version, in a
 * chunk format this one cannot read. An `at` answer that meets one replays the log from its start
 * instead (slower, the same answer), rather than failing.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { SNAPSHOTS } from '../../src/projections/reporting/snapshots.ts';

const test = suite<{ svc: TestService; auth: Record<string, string> }>('Reporting API: snapshots of a newer version', {} as { svc: TestService; auth: Record<string, string> });
const DATA = '/api/reporting/v0/collection-data/phd_projects';

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: '2' });
  const post = (path: string, body: unknown) => ctx.svc.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  await post('/api/admin/groups', { code: 'svc:group:all', title: 'All', readAll: true });
  await post('/api/admin/users', { username: 'analyst', name: { first: 'An', last: 'Alyst' }, groups: ['svc:group:all'] });
  const { key } = (await (await post('/api/admin/users/analyst/api-keys', {})).json()) as { key: string };
  ctx.auth = { Authorization: `Basic ${Buffer.from(`svc:${key}`).toString('base64')}` };
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('an at answer that meets a chunk in an unknown format replays from the start of the log', async ({ svc, auth }) => {
  for (const title of ['One', 'Two', 'Three', 'Four', 'Five']) {
    const res = await svc.request('/api/admin/objects', { method: 'POST', body: JSON.stringify({ type: 'phd:type:project', attributes: { 'dc:attribute:title': title } }), headers: { 'Content-Type': 'application/json' } });
    assert.is(res.status, 201);
  }
  const live = (await (await svc.request(DATA, { admin: false, headers: auth })).json()) as { rows: unknown[][] };
  assert.is(live.rows.length, 5);
  // What a newer version would write: the newest snapshot, its chunk in format 99.
  const recordedAt = new Date().toISOString();
  const id = 'collection:phd_projects@999999';
  await svc.engines.reads.bulkWrite([
    { kind: 'put', collection: SNAPSHOTS, doc: { id: `${id}#0`, f: 99, z: 'bmV3ZXI=' } },
    { kind: 'put', collection: SNAPSHOTS, doc: { id, collection: 'collection:phd_projects', position: 999999, recordedAt, chunks: 1, chain: [id] } },
  ]);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const res = await svc.request(`${DATA}?at=${new Date(Date.parse(recordedAt) + 1).toISOString()}`, { admin: false, headers: auth });
  const text = await res.text();
  assert.is(res.status, 200, text);
  assert.equal((JSON.parse(text) as { rows: unknown[][] }).rows, live.rows);
});

test.run();
