import { suite } from 'uvu';
import { apiKeyStream, groupStream, userStream, type ApiKeyEvent, type GroupEvent, type UserEvent } from '../../src/domain/users/events.ts';
import { usersProjector } from '../../src/projections/users-projector.ts';
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../../src/projections/read-models.ts';
import { decode, givenAt, projectionSpec, type GivenEvent } from '../support/projection-spec.ts';

const test = suite('projections: users, groups and API keys');
const users = projectionSpec(usersProjector(decode));

const user = (event: UserEvent): GivenEvent => ({ ...event, stream: userStream(event.data.username) });
const group = (event: GroupEvent): GivenEvent => ({ ...event, stream: groupStream(event.data.code) });
const apiKey = (event: ApiKeyEvent): GivenEvent => ({ ...event, stream: apiKeyStream(event.data.id) });

const ada = user({ type: 'UserCreated', data: { username: 'ada', email: 'Ada@Example.org', profileRef: 'ada000000001', groups: ['svc:group:staff'], service: false } });
const adaDoc: UserDoc = {
  id: 'ada',
  username: 'ada',
  email: 'Ada@Example.org',
  emailKey: 'ada@example.org',
  profileRef: 'ada000000001',
  groups: ['svc:group:staff'],
  service: false,
  active: true,
};

test('a created user is one active document, found by its email in lower case', async () => {
  await users.given([ada]).thenDocs(USERS, [adaDoc]);
});

test('a service user has no email: its email key is null', async () => {
  await users
    .given([user({ type: 'UserCreated', data: { username: 'importer', groups: [], service: true } })])
    .thenDoc(USERS, 'importer', { id: 'importer', username: 'importer', groups: [], service: true, active: true, emailKey: null });
});

test('a changed user: only the given fields change, the email key follows the email', async () => {
  await users
    .given([ada, user({ type: 'UserChanged', data: { username: 'ada', email: 'LOVELACE@example.org', active: false, tags: { team: 'engines' } } })])
    .thenDoc(USERS, 'ada', { ...adaDoc, email: 'LOVELACE@example.org', emailKey: 'lovelace@example.org', active: false, tags: { team: 'engines' } });
});

test('a user created before groups existed (schema version 1) reads back with no groups, not a service user', async () => {
  await users
    .given([{ type: 'UserCreated', data: { username: 'old', email: 'old@example.org' }, stream: userStream('old'), metadata: {} }])
    .thenDoc(USERS, 'old', { id: 'old', username: 'old', email: 'old@example.org', emailKey: 'old@example.org', groups: [], service: false, active: true });
});

test('groups: created, then changed field by field', async () => {
  const created = group({ type: 'GroupCreated', data: { code: 'svc:group:staff', title: 'Staff', readAll: false, readLabels: ['svc:label:common'] } });
  const staff: GroupDoc = { id: 'svc:group:staff', code: 'svc:group:staff', title: 'Staff', readAll: false, readLabels: ['svc:label:common'] };
  await users.given([created]).thenDocs(GROUPS, [staff]);
  await users
    .given([created, group({ type: 'GroupChanged', data: { code: 'svc:group:staff', readLabels: ['svc:label:common', 'svc:label:confidential'] } })])
    .thenDocs(GROUPS, [{ ...staff, readLabels: ['svc:label:common', 'svc:label:confidential'] }]);
});

test('API keys: issued at the time recorded, then revoked; users and groups are left alone', async () => {
  const issued = apiKey({ type: 'ApiKeyIssued', data: { id: 'key1', username: 'ada', name: 'Import', path: '/api/push', lookup: 'abcdefghijklmnop', hash: 'f'.repeat(64) } });
  const key: ApiKeyDoc = { id: 'key1', username: 'ada', name: 'Import', path: '/api/push', lookup: 'abcdefghijklmnop', hash: 'f'.repeat(64), revoked: false, createdAt: givenAt(1) };
  await users.given([ada, issued]).thenDocs(API_KEYS, [key]);
  const revoked = users.given([ada, issued, apiKey({ type: 'ApiKeyRevoked', data: { id: 'key1' } })]);
  await revoked.thenDocs(API_KEYS, [{ ...key, revoked: true }]);
  await revoked.thenDocs(USERS, [adaDoc]);
  await revoked.thenDocs(GROUPS, []);
});

test.run();
