/**
 * Attribute groups in data import (haplo-behaviour.md §3.4 pseudo-destinations
 * `<destination>:attribute-group:<group>`, §3.6 `set-attribute-group`, §5.4 `extension`), end to end:
 * control files through the REST API definitions, pushes, and the stored objects read back through
 * the admin object API.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OVERWRITE_IN_FOR_EACH } from '../../../src/commands/push-data/validate-control.ts';
import { call, createObject, createUser, expectError } from '../../support/fixtures.ts';
import { adminObject, attr, control, defineApi, expectSuccess, type PushBody } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const PERSON = 'svc:person';
const PROJECT = 'phd:project';
const FUNDING = 'phd:attribute:funding';
const FUNDER = 'phd:attribute:funder';
const AMOUNT = 'phd:attribute:funding-amount';
const START = 'phd:attribute:funding-start';
const TITLE = 'dc:attribute:title';
/** The pseudo-destination collecting one funding of the project. */
const GROUP = 'phd:project:attribute-group:phd:attribute:funding';

const loadProfile = [
  { source: 'username', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
  { action: 'load', destination: 'profile', using: 'load:by-ref' },
];
/** Fields of one funding (keys `funder<suffix>`, `amount<suffix>`, `start<suffix>`) into the pseudo-destination. */
const fundingFields = (suffix = '', extra: Record<string, unknown> = {}) => [
  { source: `funder${suffix}`, destination: GROUP, name: FUNDER, filters: ['svc:string-to-ref'], ...extra },
  { source: `amount${suffix}`, destination: GROUP, name: AMOUNT, ...extra },
  { source: `start${suffix}`, destination: GROUP, name: START, dateFormat: 'yyyy-MM-dd', ...extra },
];
const setGroup = (extra: Record<string, unknown> = {}) => ({ action: 'set-attribute-group', source: GROUP, destination: PROJECT, name: FUNDING, ...extra });

interface Ctx {
  svc: TestService;
  wellcome: string;
  epsrc: string;
}
const test = suite<Ctx>('Push data: attribute groups', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.wellcome = (await createObject(ctx.svc, 'svc:type:organisation', { [TITLE]: ['Wellcome Trust'] })).ref;
  ctx.epsrc = (await createObject(ctx.svc, 'svc:type:organisation', { [TITLE]: ['EPSRC'] })).ref;
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/** The project saved by a push (the `phd:project` action of the first record). */
const project = async (ctx: Ctx, reply: PushBody) => {
  const ref = reply.actions[0]?.changed.find((c) => c.destination === PROJECT)?.ref;
  assert.ok(ref, `a saved project in ${JSON.stringify(reply.actions)}`);
  const object = await adminObject(ctx.svc, ref!);
  assert.ok(object, 'the project reads back');
  return object;
};

/** [groupId, plain value] of each value of an attribute, checking every one is marked as a funding. */
const grouped = (object: any, code: string): [number, unknown][] =>
  attr(object, code).map((v: any) => {
    assert.is(v.extension?.desc, FUNDING, `${code}: ${JSON.stringify(v)}`);
    return [v.extension.groupId, v.type === 'link' ? v.ref : v.type === 'datetime' ? v.start.slice(0, 10) : v.value];
  });

test('two set-attribute-group in one record make two groups; the values carry extension {desc, groupId}', async (ctx) => {
  const user = await createUser(ctx.svc, { first: 'Grace', last: 'Hopper' });
  const api = await defineApi(
    ctx.svc,
    control(PERSON, [
      ...loadProfile,
      { source: 'title', destination: PROJECT, name: TITLE },
      ...fundingFields('1'),
      setGroup(),
      ...fundingFields('2'),
      setGroup(),
    ]),
  );
  const body = { username: user.username, title: 'Compilers', funder1: ctx.wellcome, amount1: 1000, start1: '2024-01-15', funder2: ctx.epsrc, amount2: '2500.5', start2: '2025-10-01' };
  const reply = expectSuccess(await api.push(body));
  assert.equal(reply.errors, []);
  const object = await project(ctx, reply);
  assert.equal(grouped(object, FUNDER), [[1, ctx.wellcome], [2, ctx.epsrc]]);
  assert.equal(grouped(object, AMOUNT), [[1, '1000'], [2, '2500.5']]);
  assert.equal(grouped(object, START), [[1, '2024-01-15'], [2, '2025-10-01']]);
  // The serialised form (§5.4): `extension` follows `type` (and `qualifier`); the rest is as for any value.
  const funder = attr(object, FUNDER)[0];
  assert.equal(Object.keys(funder).slice(0, 2), ['type', 'extension']);
  assert.equal(funder, { type: 'link', extension: { desc: FUNDING, groupId: 1 }, ref: ctx.wellcome, title: 'Wellcome Trust' });
  assert.is(attr(object, START)[1].precision, 'd');
  // The group attribute itself holds no values: instances live under the member attributes.
  assert.equal(attr(object, FUNDING), []);

  // A later push loads the project and appends a third group with the next free groupId.
  const again = expectSuccess(await api.push({ username: user.username, title: 'Compilers', funder1: ctx.epsrc, amount1: 7 }));
  const after = await project(ctx, again);
  assert.is(after.ref, object.ref);
  assert.equal(grouped(after, FUNDER), [[1, ctx.wellcome], [2, ctx.epsrc], [3, ctx.epsrc]]);
  assert.equal(grouped(after, AMOUNT), [[1, '1000'], [2, '2500.5'], [3, '7']]);
  assert.equal(grouped(after, START), [[1, '2024-01-15'], [2, '2025-10-01']]);

  // Pushing nothing for the group appends nothing, and the unchanged project is not saved.
  const none = expectSuccess(await api.push({ username: user.username, title: 'Compilers' }));
  assert.equal(none.actions[0]?.changed.filter((c) => c.destination === PROJECT), []);
  assert.equal(grouped(await adminObject(ctx.svc, object.ref), FUNDER).length, 3);
});

test('values are converted by the pseudo-destination Names; unusable ones are reported and left out', async (ctx) => {
  const user = await createUser(ctx.svc);
  const api = await defineApi(ctx.svc, control(PERSON, [...loadProfile, { source: 'title', destination: PROJECT, name: TITLE }, ...fundingFields(), setGroup()]));
  const reply = expectSuccess(await api.push({ username: user.username, title: 'Converted', funder: 'not a ref', amount: 'lots', start: '2024-03-04' }));
  assert.equal(reply.errors, ['Invalid number for input field amount: lots (record 0)']);
  const object = await project(ctx, reply);
  assert.equal(grouped(object, START), [[1, '2024-03-04']]);
  assert.equal(attr(object, FUNDER), []);
  assert.equal(attr(object, AMOUNT), []);
});

test('set-attribute-group clears the pseudo-destination, even when the group is empty', async (ctx) => {
  const user = await createUser(ctx.svc);
  const api = await defineApi(
    ctx.svc,
    control(PERSON, [
      ...loadProfile,
      { source: 'title', destination: PROJECT, name: TITLE },
      setGroup(), // nothing collected: nothing appended
      { source: 'amount', destination: GROUP, name: AMOUNT },
      setGroup(),
      setGroup(), // cleared by the one before: nothing appended
      { source: 'amount', destination: GROUP, name: AMOUNT, multivalue: true },
      { source: 'amount', destination: GROUP, name: AMOUNT, multivalue: true },
      setGroup(), // two values of one member in one group
    ]),
  );
  const object = await project(ctx, expectSuccess(await api.push({ username: user.username, title: 'Cleared', amount: 3 })));
  assert.equal(grouped(object, AMOUNT), [[1, '3'], [2, '3'], [2, '3']]);
});

test('for-each over a list of fundings, replacing the groups with remove-values', async (ctx) => {
  const user = await createUser(ctx.svc);
  const api = await defineApi(
    ctx.svc,
    control(PERSON, [
      ...loadProfile,
      { source: 'title', destination: PROJECT, name: TITLE },
      { action: 'remove-values', destination: PROJECT, name: FUNDING },
      {
        action: 'for-each',
        source: 'fundings',
        // Fields into the pseudo-destination need no multivalue: set-attribute-group clears it each time.
        instructions: [...fundingFields(), setGroup({ multivalue: true })],
      },
      {
        action: 'if-has-value',
        destination: PROJECT,
        name: FUNDING,
        then: [{ action: 'set-value', destination: PROJECT, name: 'phd:attribute:notes', value: 'Funded' }],
        else: [{ action: 'set-value', destination: PROJECT, name: 'phd:attribute:notes', value: 'Unfunded' }],
      },
    ]),
  );
  const fundings = [
    { funder: ctx.wellcome, amount: 10, start: '2023-09-01' },
    { funder: ctx.epsrc, amount: 20 },
    { amount: 30, start: '2024-09-01' },
    {},
  ];
  const first = await project(ctx, expectSuccess(await api.push({ username: user.username, title: 'Looped', fundings })));
  assert.equal(grouped(first, FUNDER), [[1, ctx.wellcome], [2, ctx.epsrc]]);
  assert.equal(grouped(first, AMOUNT), [[1, '10'], [2, '20'], [3, '30']]);
  assert.equal(grouped(first, START), [[1, '2023-09-01'], [3, '2024-09-01']]);
  assert.equal(attr(first, 'phd:attribute:notes').map((v: any) => v.value), ['Funded']);

  // Pushing again replaces the fundings: groupIds start again once the old groups are removed.
  const second = await project(ctx, expectSuccess(await api.push({ username: user.username, title: 'Looped', fundings: [{ funder: ctx.epsrc, amount: 99 }] })));
  assert.is(second.ref, first.ref);
  assert.equal(grouped(second, FUNDER), [[1, ctx.epsrc]]);
  assert.equal(grouped(second, AMOUNT), [[1, '99']]);
  assert.equal(attr(second, START), []);

  const third = await project(ctx, expectSuccess(await api.push({ username: user.username, title: 'Looped', fundings: [] })));
  assert.equal(attr(third, FUNDER), []);
  assert.equal(attr(third, 'phd:attribute:notes').map((v: any) => v.value), ['Unfunded']);
});

test('the auto model has the pseudo-destination of its object destination too', async (ctx) => {
  const auto = 'object:attribute-group:phd:attribute:funding';
  const api = await defineApi(
    ctx.svc,
    control('TYPE:phd:type:project', [
      { action: 'new', destination: 'object' },
      { source: 'title', destination: 'object', name: TITLE },
      { source: 'amount', destination: auto, name: AMOUNT },
      { action: 'set-attribute-group', source: auto, destination: 'object', name: FUNDING },
    ]),
  );
  const reply = expectSuccess(await api.push({ title: 'Auto', amount: 5 }));
  const ref = reply.actions[0]?.changed[0]?.ref;
  assert.equal(grouped(await adminObject(ctx.svc, ref!), AMOUNT), [[1, '5']]);
});

/** A refused control file: 400 with exactly these messages. */
const expectInvalid = async (ctx: Ctx, instructions: unknown[], errors: string[]) => {
  const reply = await call(ctx.svc, '/api/admin/rest-apis', {
    method: 'POST',
    body: { url: `bad-${Math.random().toString(36).slice(2, 10)}`, description: 'x', controlFile: control(PERSON, [...loadProfile, ...instructions]) },
  });
  expectError(reply, 400, 'svc:rest-api:invalid-control-file');
  assert.equal(reply.body.errors, errors);
};

test('validation: required properties, destination, name and source of set-attribute-group', async (ctx) => {
  await expectInvalid(ctx, [{ action: 'set-attribute-group', source: GROUP, destination: PROJECT }], [
    'Expected property not found in set-attribute-group instruction: name',
  ]);
  await expectInvalid(ctx, [{ action: 'set-attribute-group' }], ['Expected property not found in set-attribute-group instruction: source, destination, name']);
  await expectInvalid(ctx, [setGroup({ destination: 'nope' })], ['Unknown destination in set-attribute-group: nope']);
  await expectInvalid(ctx, [setGroup({ name: 'phd:attribute:notes' })], [`Unknown name in set-attribute-group phd:attribute:notes for destination ${PROJECT}`]);
  await expectInvalid(ctx, [setGroup({ name: 'phd:attribute:nope' })], [`Unknown name in set-attribute-group phd:attribute:nope for destination ${PROJECT}`]);
  for (const source of ['value:person-name', 'load:by-ref', 'nope', 'profile']) {
    await expectInvalid(ctx, [setGroup({ source })], [`Unknown attribute group source in set-attribute-group: ${source}`]);
  }
  // The group's values are set only through set-attribute-group; its members only through the pseudo-destination.
  await expectInvalid(ctx, [{ source: 'x', destination: PROJECT, name: FUNDING }], [`Couldn't create value transformer for field ${PROJECT}/${FUNDING}`]);
  await expectInvalid(ctx, [{ source: 'x', destination: GROUP, name: TITLE }], [`Unknown name in field ${TITLE} for destination ${GROUP}`]);
  // Inside for-each, set-attribute-group is an assignment like field and set-value.
  await expectInvalid(ctx, [{ action: 'for-each', source: 'fundings', instructions: [...fundingFields(), setGroup()] }], [OVERWRITE_IN_FOR_EACH]);
});

test('the model explorer lists the pseudo-destination with the group members as Names', async (ctx) => {
  const reply = await call(ctx.svc, '/api/admin/models/svc:person');
  assert.is(reply.status, 200);
  const destinations = reply.body.destinations as any[];
  const projectDest = destinations.find((d) => d.name === PROJECT);
  const funding = projectDest.names.find((n: any) => n.name === FUNDING);
  assert.equal({ type: funding.type, description: funding.description }, { type: 'attribute-group', description: 'Funding' });
  // Members are Names of the pseudo-destination, not necessarily of the type.
  assert.is(projectDest.names.find((n: any) => n.name === FUNDER), undefined);

  const group = destinations.find((d) => d.name === GROUP);
  assert.ok(group, `destinations: ${destinations.map((d) => d.name).join(', ')}`);
  assert.is(group.kind, 'dictionary');
  assert.is(group.pseudo, true);
  assert.is(group.optional, true);
  assert.equal(group.names.map((n: any) => [n.name, n.type, n.multivalue]), [
    [FUNDER, 'ref', true],
    [AMOUNT, 'number', true],
    [START, 'datetime', true],
  ]);
  assert.equal(group.names[0].refTypes, ['svc:type:organisation']);
  // Profiles (svc:type:person) have no attribute groups.
  assert.equal(destinations.filter((d) => d.name.includes(':attribute-group:')).map((d) => d.name), [GROUP]);

  const auto = await call(ctx.svc, `/api/admin/models/${encodeURIComponent('TYPE:phd:type:project')}`);
  assert.ok((auto.body.destinations as any[]).some((d) => d.name === 'object:attribute-group:phd:attribute:funding' && d.pseudo));
});

test('the generator sets a group through its pseudo-destination and set-attribute-group', async (ctx) => {
  const reply = await call(ctx.svc, '/api/admin/control-files/generate', {
    method: 'POST',
    body: { model: PERSON, include: [{ destination: PROJECT, name: TITLE }, { destination: PROJECT, name: FUNDING, multivalue: true }] },
  });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const instructions = (reply.body.control ?? reply.body).instructions as any[];
  const groupPart = instructions.slice(instructions.findIndex((i) => i.destination === GROUP));
  assert.equal(groupPart, [
    { source: 'TODO-FUNDING-FUNDER', destination: GROUP, name: FUNDER, refMapping: 'TODO-DEFINE-MAPPING' },
    { source: 'TODO-FUNDING-FUNDING-AMOUNT', destination: GROUP, name: AMOUNT },
    { source: 'TODO-FUNDING-FUNDING-START', destination: GROUP, name: START, dateFormat: 'yyyy-MM-dd' },
    { action: 'remove-values', destination: PROJECT, name: FUNDING },
    { action: 'set-attribute-group', source: GROUP, destination: PROJECT, name: FUNDING, multivalue: true },
  ]);
  // Including the pseudo-destination itself is refused, like any pseudo-destination.
  const refused = await call(ctx.svc, '/api/admin/control-files/generate', { method: 'POST', body: { model: PERSON, include: [{ destination: GROUP, name: AMOUNT }] } });
  assert.is(refused.status, 400, JSON.stringify(refused.body));
});

test.run();
