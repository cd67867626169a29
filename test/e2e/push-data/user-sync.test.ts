/**
 * The `svc:user-sync` model through a push-data API (haplo-behaviour.md §3.4): users with their
 * profiles, groups and tags, and the filters that then find them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { call, createGroup } from '../../support/fixtures.ts';
import { adminObject, attr, control, defineApi, expectFailure, expectSuccess, head, plain, type Api } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';

const SYNC = control('svc:user-sync', [
  { source: 'username', destination: 'user', name: 'username' },
  { source: 'title', destination: 'user', name: 'title' },
  { source: 'first', destination: 'user', name: 'nameFirst' },
  { source: 'last', destination: 'user', name: 'nameLast' },
  { source: 'email', destination: 'user', name: 'email' },
  { action: 'for-each', source: 'groups', wrapValues: true, instructions: [{ source: 'value', destination: 'user', name: 'groups', multivalue: true }] },
  { source: 'orcid', destination: 'user:tags', name: 'orcid' },
  { source: 'staff', destination: 'user:tags', name: 'staffNumber' },
  { source: 'job', destination: 'profile', name: 'svc:attribute:job-title' },
]);

const STAFF = 'test:group:staff';
const NAVY = 'test:group:navy';

interface Ctx {
  svc: TestService;
  sync: Api;
}
const test = suite<Ctx>('Push data: user sync', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  await createGroup(ctx.svc, { code: STAFF, title: 'Staff' });
  await createGroup(ctx.svc, { code: NAVY, title: 'Navy' });
  ctx.sync = await defineApi(ctx.svc, SYNC);
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const user = async (ctx: Ctx, username: string) => {
  const reply = await call(ctx.svc, `/api/admin/users/${username}`);
  return reply.status === 200 ? reply.body : null;
};

const GRACE = { username: 'Grace', title: 'Dr', first: 'Grace', last: 'Hopper', email: 'grace@example.com', groups: [STAFF], orcid: '0000-0002-1825-0097', job: 'Rear Admiral' };

test('a first push creates the user (lower-cased username) and its profile: type, title from the names, svc:attribute:name', async (ctx) => {
  const reply = expectSuccess(await ctx.sync.push(GRACE));
  assert.is(reply.applied, 1);
  assert.equal(reply.actions[0]!.changed.map((c) => [c.kind, c.destination, c.new]), [['object:save', 'profile', true]]);
  const profileRef = reply.actions[0]!.changed[0]!.ref;

  const grace = await user(ctx, 'grace');
  assert.ok(grace, 'the user exists');
  assert.is(grace.username, 'grace');
  assert.is(grace.email, 'grace@example.com');
  assert.equal(grace.groups, [STAFF]);
  assert.equal(grace.tags, { orcid: '0000-0002-1825-0097' });
  assert.is(grace.profileRef, profileRef);
  assert.is(grace.active, true);
  assert.is(await user(ctx, 'Grace'), null, 'usernames are lower case');

  const profile = await adminObject(ctx.svc, profileRef);
  assert.is(profile.type.code, 'svc:type:person');
  assert.is(profile.title, 'Grace Hopper');
  assert.equal(attr(profile, 'svc:attribute:name').map((v) => v.value), [{ title: 'Dr', first: 'Grace', last: 'Hopper', culture: 'western' }]);
  assert.equal(plain(profile, 'svc:attribute:job-title'), ['Rear Admiral']);
  assert.is(profile.username, 'grace', 'the profile is the user’s');
});

test('a second push updates email, groups and tags of the same user, without a second profile', async (ctx) => {
  const before = await user(ctx, 'grace');
  const reply = expectSuccess(await ctx.sync.push({ ...GRACE, username: 'grace', email: 'g.hopper@example.com', groups: [STAFF, NAVY], staff: 'S-1' }));
  assert.equal(reply.actions[0]!.changed, [], 'the profile did not change, so it was not saved');
  const after = await user(ctx, 'grace');
  assert.is(after.email, 'g.hopper@example.com');
  assert.equal([...after.groups].sort(), [NAVY, STAFF]);
  assert.equal(after.tags, { orcid: '0000-0002-1825-0097', staffNumber: 'S-1' });
  assert.is(after.profileRef, before.profileRef);

  const fewer = expectSuccess(await ctx.sync.push({ ...GRACE, username: 'grace', email: 'g.hopper@example.com', groups: [NAVY], staff: 'S-1' }));
  assert.equal(fewer.actions[0]!.changed, []);
  assert.equal((await user(ctx, 'grace')).groups, [NAVY], 'the groups are replaced by the pushed list');

  const unchanged = await head(ctx.svc);
  expectSuccess(await ctx.sync.push({ ...GRACE, username: 'grace', email: 'g.hopper@example.com', groups: [NAVY], staff: 'S-1' }));
  assert.is(await head(ctx.svc), unchanged, 'the same push again writes nothing');
});

test('a changed name updates the profile name and its title', async (ctx) => {
  const grace = await user(ctx, 'grace');
  const reply = expectSuccess(await ctx.sync.push({ ...GRACE, username: 'grace', last: 'Hopper-Murray', email: 'g.hopper@example.com', groups: [NAVY], staff: 'S-1' }));
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[grace.profileRef, false]]);
  const profile = await adminObject(ctx.svc, grace.profileRef);
  assert.equal(attr(profile, 'svc:attribute:name').map((v) => v.value), [{ title: 'Dr', first: 'Grace', last: 'Hopper-Murray', culture: 'western' }]);
  assert.is(profile.title, 'Grace Hopper-Murray');
});

test('a profile with nothing pushed to it is still created for a new user', async (ctx) => {
  const reply = expectSuccess(await ctx.sync.push({ username: 'plain', first: 'Plain', last: 'User', email: 'plain@example.com' }));
  const created = await user(ctx, 'plain');
  assert.ok(created?.profileRef, 'the user has a profile');
  assert.equal(reply.actions[0]!.changed.map((c) => [c.ref, c.new]), [[created.profileRef, true]]);
  assert.equal(created.groups, []);
  assert.is(created.tags, undefined);
  assert.is((await adminObject(ctx.svc, created.profileRef)).title, 'Plain User');
});

test('a title the record sets itself is kept', async (ctx) => {
  // The profile's title is a person-name (as Haplo's model), set through value:person-name.
  const api = await defineApi(ctx.svc, control('svc:user-sync', [
    ...(SYNC.instructions as unknown[]),
    { source: 'display', destination: 'value:person-name', name: 'last' },
    { action: 'field-structured', structured: 'value:person-name', destination: 'profile', name: 'dc:attribute:title' },
  ]));
  const reply = expectSuccess(await api.push({ username: 'plain', first: 'Plain', last: 'Renamed', email: 'plain@example.com', display: 'Plain, the user' }));
  const plainUser = await user(ctx, 'plain');
  assert.equal(reply.actions[0]!.changed.map((c) => c.ref), [plainUser.profileRef]);
  const profile = await adminObject(ctx.svc, plainUser.profileRef);
  assert.is(profile.title, 'Plain, the user');
  assert.equal(attr(profile, 'svc:attribute:name').map((v) => v.value.last), ['Renamed']);
});

test('unknown groups are refused: the record fails and nothing is created', async (ctx) => {
  const before = await head(ctx.svc);
  const reply = expectFailure(await ctx.sync.push({ username: 'ghost', first: 'Ghost', last: 'Writer', email: 'ghost@example.com', groups: [STAFF, 'test:group:nope'] }));
  assert.equal(reply.errors, ['Unknown group test:group:nope for user ghost (record 0)']);
  assert.equal(reply.actions, [{ changed: [], record: 'record 0' }]);
  assert.is(await user(ctx, 'ghost'), null);
  assert.is(await head(ctx.svc), before, 'no profile either');
});

test('required user names and a valid email address are needed; usernames must be valid', async (ctx) => {
  const before = await head(ctx.svc);
  assert.equal(expectFailure(await ctx.sync.push({ username: 'partial' })).errors, ['Missing values in user: email, nameFirst, nameLast (record 0)']);
  assert.equal(expectFailure(await ctx.sync.push({ username: 'bademail', first: 'Bad', last: 'Email', email: 'not-an-email' })).errors, [
    'Invalid email address for input field email: not-an-email (record 0)',
    'Missing values in user: email (record 0)',
  ]);
  const invalid = expectFailure(await ctx.sync.push({ username: 'not a/valid name', first: 'Bad', last: 'Name', email: 'bad@example.com' }));
  assert.is(invalid.errors.length, 1);
  assert.match(invalid.errors[0]!, /^Invalid username: not a\/valid name .*\(record 0\)$/);
  assert.is(await head(ctx.svc), before);
});

test('dictionary Names: without multivalue a multi-value Name is replaced, with it appended; single-value Names always replace; qualifiers are ignored', async (ctx) => {
  const api = await defineApi(ctx.svc, control('svc:user-sync', [
    { action: 'set-value', destination: 'user', name: 'username', value: 'dict' },
    { action: 'set-value', destination: 'user', name: 'nameFirst', value: 'First' },
    { action: 'set-value', destination: 'user', name: 'nameFirst', value: 'Second', multivalue: true },
    { action: 'set-value', destination: 'user', name: 'nameLast', value: 'Names', qualifier: 'svc:qualifier:work' },
    { action: 'set-value', destination: 'user', name: 'email', value: 'dict@example.com' },
    { action: 'set-value', destination: 'user', name: 'groups', value: 'test:group:nope' },
    { action: 'set-value', destination: 'user', name: 'groups', value: STAFF },
    { action: 'set-value', destination: 'user', name: 'groups', value: NAVY, multivalue: true },
  ]));
  expectSuccess(await api.push({}));
  const dict = await user(ctx, 'dict');
  assert.equal(dict.groups, [STAFF, NAVY]);
  assert.is((await adminObject(ctx.svc, dict.profileRef)).title, 'Second Names');
});

test('svc:username-to-ref and svc:email-to-ref then find the synchronised user’s profile', async (ctx) => {
  const grace = await user(ctx, 'grace');
  const byUsername = await defineApi(ctx.svc, control('svc:person', [
    { source: 'who', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
    { action: 'load', destination: 'profile', using: 'load:by-ref' },
    { source: 'job', destination: 'profile', name: 'svc:attribute:job-title' },
  ]));
  const found = expectSuccess(await byUsername.push({ who: 'GRACE', job: 'Found by username' }));
  assert.equal(found.actions[0]!.changed.map((c) => [c.destination, c.ref, c.new]), [['profile', grace.profileRef, false]]);

  const byEmail = await defineApi(ctx.svc, control('svc:person', [
    { source: 'who', destination: 'load:by-ref', name: 'ref', filters: ['svc:email-to-ref'] },
    { action: 'load', destination: 'profile', using: 'load:by-ref' },
    { source: 'job', destination: 'profile', name: 'svc:attribute:job-title' },
  ]));
  const viaEmail = expectSuccess(await byEmail.push({ who: 'g.hopper@example.com', job: 'Found by email' }));
  assert.equal(viaEmail.actions[0]!.changed.map((c) => c.ref), [grace.profileRef]);
  assert.equal(plain(await adminObject(ctx.svc, grace.profileRef), 'svc:attribute:job-title'), ['Found by email']);
  assert.equal(
    expectFailure(await byEmail.push({ who: 'grace@example.com', job: 'x' })).errors,
    ["Couldn't load destination: profile (record 0)", 'Destination "profile" needs be made ready with a "new" or "load" instruction (record 0)'],
    'the old address no longer finds her',
  );
});

test.run();
