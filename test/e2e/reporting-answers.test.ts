/**
 * Collection-data answers kept serialised per projection version and per caller's access, long
 * answers that give the event loop back, and `at` replays under a bound (503 beyond it).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { collectionNames } from '../../src/projections/reporting/collection-fold.ts';
import { OBJECTS } from '../../src/projections/read-models.ts';

interface Ctx {
  svc: TestService;
  common: Record<string, string>;
  everything: Record<string, string>;
}

const test = suite<Ctx>('Reporting API: kept answers, long answers, bounded replays', {} as Ctx);
const DATA = '/api/reporting/v0/collection-data/phd_projects';

const json = (svc: TestService, path: string, body: unknown, method = 'POST') =>
  svc.request(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
const keyFor = async (svc: TestService, user: string, group: string, readLabels: string[]) => {
  await json(svc, '/api/admin/groups', { code: group, title: group, readLabels });
  await json(svc, '/api/admin/users', { username: user, name: { first: 'Re', last: 'Porter' }, groups: [group] });
  const key = (await (await json(svc, `/api/admin/users/${user}/api-keys`, { path: '/api/reporting/v0/' })).json()) as { key: string };
  return { Authorization: `Basic ${Buffer.from(`svc:${key.key}`).toString('base64')}` };
};
const create = async (svc: TestService, title: string, labels?: string[]) => {
  const res = await json(svc, '/api/admin/objects', { type: 'phd:type:project', attributes: { 'dc:attribute:title': title }, ...(labels ? { labels } : {}) });
  assert.is(res.status, 201, await res.clone().text());
  return ((await res.json()) as { ref: string }).ref;
};
const rowsOf = async (svc: TestService, auth: Record<string, string>, query = '') => {
  const res = await svc.request(`${DATA}${query}`, { admin: false, headers: auth });
  assert.is(res.status, 200);
  return ((await res.json()) as { rows: unknown[][] }).rows;
};
const titles = (rows: unknown[][]) => rows.map((r) => r[1]).sort();

test.before(async (ctx) => {
  ctx.svc = await startTestService({ SVC_SNAPSHOT_INTERVAL: '3', SVC_AT_CONCURRENCY: '1', SVC_AT_QUEUE: '2' });
  ctx.common = await keyFor(ctx.svc, 'reporter', 'svc:group:reporting', ['svc:label:common']);
  ctx.everything = await keyFor(ctx.svc, 'auditor', 'svc:group:audit', ['svc:label:common', 'svc:label:confidential']);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('a kept answer is never served after a change: every read after a write sees it', async (ctx) => {
  await create(ctx.svc, 'First');
  assert.equal(titles(await rowsOf(ctx.svc, ctx.common)), ['First']);
  assert.equal(titles(await rowsOf(ctx.svc, ctx.common)), ['First']);
  const second = await create(ctx.svc, 'Second');
  assert.equal(titles(await rowsOf(ctx.svc, ctx.common)), ['First', 'Second']);
  await json(ctx.svc, `/api/admin/objects/${second}`, { attributes: { 'dc:attribute:title': 'Second, renamed' } }, 'PATCH');
  assert.equal(titles(await rowsOf(ctx.svc, ctx.common)), ['First', 'Second, renamed']);
  // Relabelled out of the key's reach: gone from the next answer.
  await json(ctx.svc, `/api/admin/objects/${second}`, { labels: { add: ['svc:label:confidential'], remove: ['svc:label:common'] } }, 'PATCH');
  assert.equal(titles(await rowsOf(ctx.svc, ctx.common)), ['First']);
});

test("one caller's answer never reaches a caller who may read less, in either order", async (ctx) => {
  await create(ctx.svc, 'Secret', ['svc:label:confidential']);
  const wide = titles(await rowsOf(ctx.svc, ctx.everything));
  assert.ok(wide.includes('Secret'));
  assert.not.ok(titles(await rowsOf(ctx.svc, ctx.common)).includes('Secret'));
  assert.ok(titles(await rowsOf(ctx.svc, ctx.everything)).includes('Secret'));
  const past = `?at=${new Date(Date.now() + 1).toISOString()}`;
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.not.ok(titles(await rowsOf(ctx.svc, ctx.common, past)).includes('Secret'));
  assert.ok(titles(await rowsOf(ctx.svc, ctx.everything, past)).includes('Secret'));
  assert.not.ok(titles(await rowsOf(ctx.svc, ctx.common, past)).includes('Secret'));
});

test('instants between the same two events answer alike, each with its own at; an instant past the next event answers its state', async (ctx) => {
  const wait = () => new Promise((resolve) => setTimeout(resolve, 5));
  const answerAt = async (instant: string, auth: Record<string, string>) => {
    const res = await ctx.svc.request(`${DATA}?at=${instant}`, { admin: false, headers: auth });
    assert.is(res.status, 200);
    return (await res.json()) as { at: string; rows: unknown[][] };
  };
  // Several events apart from one another (the snapshot interval is 3): answers must follow each one.
  const seen: unknown[][] = [];
  for (const title of ['Near one', 'Near two', 'Near three', 'Near four']) {
    await create(ctx.svc, title);
    await wait();
    const a = new Date().toISOString();
    await wait();
    const b = new Date().toISOString();
    await wait();
    const [first, second] = [await answerAt(a, ctx.common), await answerAt(b, ctx.common)];
    assert.is(first.at, a);
    assert.is(second.at, b);
    assert.equal(titles(second.rows), titles(first.rows));
    assert.ok(titles(first.rows).includes(title), `${title} at ${a}`);
    seen.push(titles(first.rows));
    // The same state for a caller who may read more is that caller's own answer.
    assert.ok(titles((await answerAt(b, ctx.everything)).rows).length >= first.rows.length);
  }
  // Each instant answered the state after its own event, not an earlier one kept for a nearby instant.
  for (let i = 1; i < seen.length; i++) assert.is(seen[i]!.length, seen[i - 1]!.length + 1, JSON.stringify(seen));
});

test('at replays beyond the bound are refused with 503 and Retry-After, the others answered alike', async (ctx) => {
  const at = new Date(Date.now() - 1).toISOString();
  const replies = await Promise.all(
    Array.from({ length: 24 }, (_, i) => ctx.svc.request(`${DATA}?at=${at}&n=${i}`, { admin: false, headers: ctx.everything }).then(async (r) => ({ status: r.status, retry: r.headers.get('retry-after'), text: await r.text() }))),
  );
  const ok = replies.filter((r) => r.status === 200);
  const busy = replies.filter((r) => r.status === 503);
  assert.is(ok.length + busy.length, replies.length, JSON.stringify(replies.map((r) => r.status)));
  assert.ok(ok.length >= 1);
  const same = (text: string) => {
    const { columns, rows, objects, at: when } = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify([columns, rows, objects, when]);
  };
  assert.is(new Set(ok.map((r) => same(r.text))).size, 1);
  for (const r of busy) {
    assert.is(r.retry, '1');
    assert.is((JSON.parse(r.text) as { kind: string }).kind, 'svc:api:busy');
  }
});

test.run();

// A service of its own: the rows below are written straight into the read model, bypassing the
// projection, so no answer or row kept from an earlier request may be about this collection.
const long = suite<Ctx>('Reporting API: long answers', {} as Ctx);
long.before(async (ctx) => {
  ctx.svc = await startTestService();
});
long.after(async (ctx) => {
  await ctx.svc?.stop();
});

long('a long answer gives the event loop back while it is made (other requests need not wait for all of it)', async (ctx) => {
  // 30,000 rows written straight into the collection's read model: a long answer without folding them.
  const names = collectionNames('phd_projects');
  const reads = ctx.svc.engines.reads;
  const n = 30_000;
  for (let i = 0; i < n; i += 2000) {
    await reads.bulkWrite(
      Array.from({ length: 2000 }, (_, k) => {
        const id = `zz${String(i + k).padStart(10, '0')}`;
        return [
          { kind: 'put' as const, collection: names.rows, doc: { id, values: [id, null, `Bulk ${i + k}`], labels: ['svc:label:common'], linkedTo: [] } },
          { kind: 'put' as const, collection: names.objects, doc: { id, objectType: 'phd:type:project', title: `Bulk ${i + k}`, parent: null, behaviour: null, deleted: false, labels: ['svc:label:common'], attributes: {} } },
          // As the objects read model would hold them too (labels are all a collection answer reads there).
          { kind: 'put' as const, collection: OBJECTS, doc: { id, labels: ['svc:label:common'], deleted: false } },
        ];
      }).flat(),
    );
  }
  // Turns of the event loop while the answer is made: before, one answer held it throughout, so
  // only the request's own I/O turns were seen (a handful); now it yields every few milliseconds.
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns++;
    if (counting) setImmediate(tick);
  };
  const auth = await keyFor(ctx.svc, 'bulk-reader', 'svc:group:bulk', ['svc:label:common', 'svc:label:archived']);
  setImmediate(tick);
  const rows = await rowsOf(ctx.svc, auth);
  counting = false;
  assert.ok(rows.length >= n, `${rows.length} rows`);
  assert.ok(turns >= 10, `${turns} turns of the event loop while ${rows.length} rows were answered`);
  // Kept as slices and sent one write each: the length is still declared, the type still JSON.
  const res = await ctx.svc.request(DATA, { admin: false, headers: auth });
  const body = Buffer.from(await res.arrayBuffer());
  assert.is(res.headers.get('content-length'), String(body.length));
  assert.is(res.headers.get('content-type'), 'application/json; charset=utf-8');
  assert.is((JSON.parse(body.toString()) as { rows: unknown[] }).rows.length, rows.length);
});

long.run();
