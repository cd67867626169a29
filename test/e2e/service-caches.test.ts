/**
 * Caches are made per service at start-up (src/app/caches.ts), never module-level: two services
 * in one process, with the same URLs, refs and snapshot ids, each answer from their own data.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { basic, createUser, issueKey } from '../support/fixtures.ts';
import { EXAMPLE_CONTROL, defineApi, push, PUSH_DATA_USER } from '../support/push-data.ts';
import { startTestService, type TestService } from '../support/service.ts';

interface Ctx {
  a: TestService;
  b: TestService;
  now: number;
}
const test = suite<Ctx>('Two services in one process share no caches', {} as Ctx);
const T0 = Date.UTC(2025, 2, 3, 9, 0, 0);

// Two fresh services for each test: their logs grow alike, so their positions and snapshot ids are the same.
test.before.each(async (ctx) => {
  ctx.now = T0;
  // A snapshot every 3 positions.
  ctx.a = await startTestService({ SVC_SNAPSHOT_INTERVAL: '3' }, () => ctx.now);
  ctx.b = await startTestService({ SVC_SNAPSHOT_INTERVAL: '3' }, () => ctx.now);
});
test.after.each(async (ctx) => {
  await ctx.a?.stop();
  await ctx.b?.stop();
});

test('push-data: each service knows only its own REST APIs, in its own format', async ({ a, b }) => {
  const inA = await defineApi(a, EXAMPLE_CONTROL, { url: 'shared-api' });
  const fromA = await inA.push({ username: 'nobody', title: 'x' });
  assert.match(fromA.contentType, 'application/json');

  await defineApi(b, EXAMPLE_CONTROL, { url: 'only-in-b' });
  const keyB = (await issueKey(b, PUSH_DATA_USER, { path: '/api/push-data/' })).key;
  const undefinedInB = await push(b, 'shared-api', keyB, { username: 'nobody', title: 'x' });
  assert.is(undefinedInB.status, 400, undefinedInB.text);
  assert.equal(undefinedInB.body.errors, ['API not defined: shared-api']);

  await defineApi(b, EXAMPLE_CONTROL, { url: 'shared-api', response: 'XML' });
  assert.match((await push(b, 'shared-api', keyB, { username: 'nobody', title: 'x' })).contentType, 'application/xml');
  assert.match((await inA.push({ username: 'nobody', title: 'x' })).contentType, 'application/json');
});

const reportingAuth = async (svc: TestService) => {
  const json = (path: string, body: unknown) => svc.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  assert.is((await json('/api/admin/groups', { code: 'svc:group:reporting', title: 'Reporting', readLabels: ['svc:label:common'] })).status, 201);
  await createUser(svc, { username: 'reporter', first: 'Re', last: 'Porter', groups: ['svc:group:reporting'] });
  return { Authorization: basic((await issueKey(svc, 'reporter', { path: '/api/reporting/v0/' })).key) };
};

test('reporting "at": each service replays from its own snapshots', async (ctx) => {
  const { a, b } = ctx;
  const authA = await reportingAuth(a);
  const authB = await reportingAuth(b);
  const names = { a: ['Ada', 'Alan', 'Anna', 'Arne', 'Axel', 'Aino', 'Alma'], b: ['Bea', 'Bert', 'Bill', 'Bo', 'Bram', 'Britt', 'Bror'] };
  for (let i = 0; i < names.a.length; i++) {
    ctx.now = T0 + (i + 1) * 60_000;
    await createUser(a, { username: `person-${i}`, first: names.a[i]!, last: 'A' });
    await createUser(b, { username: `person-${i}`, first: names.b[i]!, last: 'B' });
  }
  ctx.now = T0 + 60 * 60_000;
  assert.is(await a.engines.events.headPosition(), await b.engines.events.headPosition(), 'the logs are as long');
  const at = new Date(T0 + 30 * 60_000).toISOString();
  const rows = async (svc: TestService, auth: Record<string, string>) => {
    const res = await svc.request(`/api/reporting/v0/collection-data/people?at=${at}`, { admin: false, headers: auth });
    assert.is(res.status, 200);
    return JSON.stringify(await res.json());
  };
  for (const [svc, auth, own, other] of [
    [a, authA, names.a, names.b],
    [b, authB, names.b, names.a],
    [a, authA, names.a, names.b],
  ] as const) {
    const answer = await rows(svc, auth);
    for (const name of own) assert.ok(answer.includes(`${name} `), `${name} in ${answer}`);
    for (const name of other) assert.not.ok(answer.includes(`${name} `), `${name} not in ${answer}`);
  }
});

test.run();
