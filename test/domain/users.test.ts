import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ApiKeyEvent, GroupEvent, UserEvent } from '../../src/domain/users/events.ts';
import { apiKeyDecider, groupDecider, userDecider, type GroupCommand, type UserCommand } from '../../src/domain/users/users.ts';
import { deciderSpec, GIVEN_AT } from '../support/decider-spec.ts';

const users = deciderSpec(userDecider);
const groups = deciderSpec(groupDecider);
const apiKeys = deciderSpec(apiKeyDecider);

// Users

const userTest = suite('users: decider');

const ada: UserEvent = { type: 'UserCreated', data: { username: 'ada', email: 'ada@example.org', profileRef: 'p1', groups: ['g:a'], service: false, tags: { team: 'x' } } };
const changeAda = (fields: Omit<UserCommand & { type: 'ChangeUser' }, 'type' | 'username'>): UserCommand => ({ type: 'ChangeUser', username: 'ada', ...fields });

userTest('CreateUser: records the user; groups without repeats; email, profile and tags only when given', () => {
  users
    .given([])
    .when({ type: 'CreateUser', username: 'ada', email: 'ada@example.org', profileRef: 'p1', groups: ['g:a', 'g:a'], tags: { team: 'x' } })
    .then([ada]);
  users.given([]).when({ type: 'CreateUser', username: 'bob', email: '', groups: [], tags: {} }).then([{ type: 'UserCreated', data: { username: 'bob', groups: [], service: false } }]);
  users.given([]).when({ type: 'CreateUser', username: 'svc-x', groups: [], service: true }).then([{ type: 'UserCreated', data: { username: 'svc-x', groups: [], service: true } }]);
});

userTest('CreateUser: refused when the user exists', () => {
  users
    .given([ada])
    .when({ type: 'CreateUser', username: 'ada', groups: [] })
    .thenThrows('svc:user:exists', { reason: 'conflict', message: 'User ada already exists' });
});

userTest('EnsureServiceUser: creates a service user without groups; an existing user stays as it is', () => {
  users.given([]).when({ type: 'EnsureServiceUser', username: 'svc-data' }).then([{ type: 'UserCreated', data: { username: 'svc-data', groups: [], service: true } }]);
  users.given([ada]).when({ type: 'EnsureServiceUser', username: 'ada' }).thenNothing();
});

userTest('ChangeUser: records only what differs', () => {
  users
    .given([ada])
    .when(changeAda({ email: 'ada@example.com', active: true, groups: ['g:a'], tags: { team: 'x' } }))
    .then([{ type: 'UserChanged', data: { username: 'ada', email: 'ada@example.com' } }]);
  users
    .given([ada])
    .when(changeAda({ active: false, groups: ['g:b', 'g:a', 'g:b'], tags: {} }))
    .then([{ type: 'UserChanged', data: { username: 'ada', tags: {}, active: false, groups: ['g:b', 'g:a'] } }]);
});

userTest('ChangeUser: the same values (groups in any order, repeated) record nothing', () => {
  const both: UserEvent = { type: 'UserChanged', data: { username: 'ada', groups: ['g:a', 'g:b'] } };
  users.given([ada, both]).when(changeAda({ email: 'ada@example.org', active: true, groups: ['g:b', 'g:a', 'g:a'], tags: { team: 'x' } })).thenNothing();
  users.given([ada]).when(changeAda({})).thenNothing();
  // A user created without tags has none: empty tags change nothing.
  users.given([{ type: 'UserCreated', data: { username: 'ada', groups: [], service: false } }]).when(changeAda({ tags: {} })).thenNothing();
});

userTest('ChangeUser: refused for a missing user', () => {
  users.given([]).when(changeAda({ active: false })).thenThrows('svc:user:no-such-user', { reason: 'not-found', message: 'User ada does not exist' });
});

userTest('evolve: created users are active; changes overwrite only the fields they carry', () => {
  const deactivated: UserEvent = { type: 'UserChanged', data: { username: 'ada', active: false, groups: [] } };
  const state = [ada, deactivated].reduce((s, e) => userDecider.evolve(s, e, GIVEN_AT), userDecider.initialState);
  assert.equal(state, { username: 'ada', email: 'ada@example.org', profileRef: 'p1', groups: [], service: false, tags: { team: 'x' }, active: false });
  assert.throws(() => userDecider.evolve(null, deactivated, GIVEN_AT), /UserChanged for ada before UserCreated/);
});

userTest.run();

// Groups

const groupTest = suite('groups: decider');

const readers = { code: 'g:readers', title: 'Readers', readAll: false, readLabels: ['l:a', 'l:b', 'l:a'] };
const readersCreated: GroupEvent = { type: 'GroupCreated', data: { code: 'g:readers', title: 'Readers', readAll: false, readLabels: ['l:a', 'l:b'] } };
const createReaders: GroupCommand = { type: 'CreateGroup', ...readers };

groupTest('CreateGroup: records the group, read labels without repeats', () => {
  groups.given([]).when(createReaders).then([readersCreated]);
});

groupTest('CreateGroup: refused when the group exists', () => {
  groups.given([readersCreated]).when(createReaders).thenThrows('svc:group:exists', { reason: 'conflict', message: 'Group g:readers already exists' });
});

groupTest('EnsureGroup: creates a missing group; an existing one stays as it is, whatever its definition', () => {
  groups.given([]).when({ type: 'EnsureGroup', ...readers }).then([readersCreated]);
  groups.given([readersCreated]).when({ type: 'EnsureGroup', ...readers, title: 'Other', readAll: true }).thenNothing();
});

groupTest('evolve: GroupChanged overwrites the fields it carries', () => {
  const state = [readersCreated, { type: 'GroupChanged', data: { code: 'g:readers', readAll: true } } as GroupEvent].reduce(
    (s, e) => groupDecider.evolve(s, e, GIVEN_AT),
    groupDecider.initialState,
  );
  assert.equal(state, { code: 'g:readers', title: 'Readers', readAll: true, readLabels: ['l:a', 'l:b'] });
});

groupTest.run();

// API keys

const keyTest = suite('API keys: decider');

const key = { id: 'k1', username: 'ada', name: 'Key for ada', path: '/api/', lookup: 'abcdefghijklmnop', hash: 'f'.repeat(64) };
const issued: ApiKeyEvent = { type: 'ApiKeyIssued', data: key };
const revoked: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { id: 'k1' } };

keyTest('IssueApiKey: records the key (its lookup prefix and hash, never the key)', () => {
  apiKeys.given([]).when({ type: 'IssueApiKey', ...key }).then([issued]);
});

keyTest('IssueApiKey: refused when a key with the id exists', () => {
  apiKeys.given([issued]).when({ type: 'IssueApiKey', ...key }).thenThrows('svc:api-key:exists', { reason: 'conflict', message: 'API key k1 already exists' });
});

keyTest('RevokeApiKey: revokes a live key; a revoked key stays revoked; a missing key is not found', () => {
  apiKeys.given([issued]).when({ type: 'RevokeApiKey', id: 'k1' }).then([revoked]);
  apiKeys.given([issued, revoked]).when({ type: 'RevokeApiKey', id: 'k1' }).thenNothing();
  apiKeys.given([]).when({ type: 'RevokeApiKey', id: 'k1' }).thenThrows('svc:api-key:no-such-key', { reason: 'not-found', message: 'API key k1 does not exist' });
});

keyTest('evolve: a key is created at its recorded time and revoked by ApiKeyRevoked', () => {
  const state = [issued, revoked].reduce((s, e) => apiKeyDecider.evolve(s, e, GIVEN_AT), apiKeyDecider.initialState);
  assert.equal(state, { ...key, revoked: true, createdAt: GIVEN_AT.toISOString() });
});

keyTest.run();
