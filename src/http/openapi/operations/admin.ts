import * as t from 'io-ts';
import { adminModelBodies } from '../../routes/admin-models.ts';
import { adminObjectBodies } from '../../routes/admin-objects.ts';
import { adminRestApiBodies } from '../../routes/admin-rest-apis.ts';
import { adminUserBodies } from '../../routes/admin-users.ts';
import { ADMIN_REFUSALS, BUSY, JSON_BODY_REFUSALS, error } from '../answers.ts';
import type { Answer, Operation } from '../operation.ts';
import {
  ApiKeyBody,
  CreatedUserBody,
  FileBody,
  GroupBody,
  IssuedKeyBody,
  ObjectChangedBody,
  ProjectionStatusBody,
  RebuildProgressBody,
  RestApiBody,
  SerialisedObject,
  UserBody,
  UserStateBody,
  WorkUnitBody,
} from '../shapes.ts';

const tag = 'admin';
const ok = (description: string, codec: t.Mixed): Answer => ({ description, codec });
const admin = (op: Omit<Operation, 'tag' | 'access'>): Operation => ({
  ...op,
  tag,
  access: 'admin',
  responses: { ...ADMIN_REFUSALS, ...(op.body && 'codec' in op.body ? JSON_BODY_REFUSALS : {}), ...op.responses },
});
const list = <K extends string>(key: K, item: t.Mixed) => t.type({ [key]: t.readonlyArray(item) } as unknown as Record<K, t.ReadonlyArrayC<t.Mixed>>);

const REF = { ref: 'An object ref, e.g. 80000' };
const badRef = error('Not a ref');
const noObject = error('No such object');

/** The admin API (`/api/admin`): Bearer admin token, or the admin interface's session cookie with X-CSRF-Token. */
export const adminOperations: readonly Operation[] = [
  admin({ method: 'get', path: '/api/admin/projections', summary: 'Projections with checkpoint, head, lag, lease and last rebuild', responses: { 200: ok('Every projection', list('projections', ProjectionStatusBody)) } }),
  admin({
    method: 'post',
    path: '/api/admin/projections/:name/rebuild',
    summary: 'Rebuild a projection (blue/green, by the holder of its lease); progress shows in GET /api/admin/projections',
    pathParams: { name: 'A projection name' },
    responses: {
      202: ok('Accepted', t.type({ projection: t.string, rebuild: RebuildProgressBody, status: t.string })),
      404: error('No such projection'),
      409: error('A rebuild of this projection is already running'),
    },
  }),

  admin({
    method: 'post',
    path: '/api/admin/users',
    summary: 'Create a user (with a profile object)',
    body: { codec: adminUserBodies.CreateUser },
    responses: { 201: ok('Created', CreatedUserBody), 409: error('The user exists'), ...BUSY },
  }),
  admin({ method: 'get', path: '/api/admin/users', summary: 'Every user', responses: { 200: ok('Users', list('users', UserBody)) } }),
  admin({
    method: 'get',
    path: '/api/admin/users/:username',
    summary: 'One user with their API keys (never the keys themselves)',
    pathParams: { username: 'A user name' },
    responses: { 200: ok('The user', t.intersection([UserBody, list('apiKeys', ApiKeyBody)])), 404: error('No such user') },
  }),
  admin({
    method: 'patch',
    path: '/api/admin/users/:username',
    summary: 'Change a user\'s email, active flag or groups',
    pathParams: { username: 'A user name' },
    body: { codec: adminUserBodies.ChangeUser },
    responses: { 200: ok('The user as changed', UserStateBody), 404: error('No such user'), ...BUSY },
  }),
  admin({
    method: 'post',
    path: '/api/admin/users/:username/api-keys',
    summary: 'Issue an API key for a user (the key is shown in this answer only)',
    pathParams: { username: 'A user name' },
    body: { codec: adminUserBodies.IssueKey, required: false },
    responses: { 201: ok('Issued', IssuedKeyBody), 404: error('No such user'), ...BUSY },
  }),
  admin({ method: 'get', path: '/api/admin/api-keys', summary: 'Every API key (never the keys themselves)', responses: { 200: ok('API keys', list('apiKeys', ApiKeyBody)) } }),
  admin({
    method: 'delete',
    path: '/api/admin/api-keys/:id',
    summary: 'Revoke an API key',
    pathParams: { id: 'An API key id' },
    responses: { 200: ok('Revoked', t.type({ id: t.string, revoked: t.literal(true) })), 404: error('No such key'), ...BUSY },
  }),
  admin({ method: 'post', path: '/api/admin/groups', summary: 'Create a group', body: { codec: adminUserBodies.CreateGroup }, responses: { 201: ok('Created', GroupBody), 409: error('The group exists'), ...BUSY } }),
  admin({ method: 'get', path: '/api/admin/groups', summary: 'Every group', responses: { 200: ok('Groups', list('groups', t.intersection([GroupBody, t.type({ id: t.string })]))) } }),

  admin({
    method: 'post',
    path: '/api/admin/objects',
    summary: 'Create a store object',
    body: { codec: adminObjectBodies.CreateObject },
    responses: { 201: ok('Created', t.type({ ref: t.string, recordVersion: t.number })), ...BUSY },
  }),
  admin({
    method: 'get',
    path: '/api/admin/objects/:ref',
    summary: 'One object with every source, whatever its labels',
    pathParams: REF,
    responses: { 200: ok('The object', t.type({ success: t.literal(true), kind: t.literal('svc:api-v0:object:serialised'), object: SerialisedObject })), 400: badRef, 404: noObject },
  }),
  admin({
    method: 'patch',
    path: '/api/admin/objects/:ref',
    summary: 'Change an object\'s attributes and labels',
    pathParams: REF,
    body: { codec: adminObjectBodies.PatchObject },
    responses: { 200: ok('Changed (or not: changed false)', ObjectChangedBody), 404: noObject, ...BUSY },
  }),
  admin({
    method: 'delete',
    path: '/api/admin/objects/:ref',
    summary: 'Delete an object (it can be undeleted)',
    pathParams: REF,
    responses: { 200: ok('Deleted', t.intersection([ObjectChangedBody, t.type({ deleted: t.literal(true) })])), 400: badRef, 404: noObject, ...BUSY },
  }),
  admin({
    method: 'post',
    path: '/api/admin/objects/:ref/undelete',
    summary: 'Undelete an object',
    pathParams: REF,
    responses: { 200: ok('Undeleted', t.intersection([ObjectChangedBody, t.type({ deleted: t.literal(false) })])), 400: badRef, 404: noObject, ...BUSY },
  }),
  admin({
    method: 'post',
    path: '/api/admin/objects/:ref/workflows',
    summary: 'Start a workflow (work unit) on an object',
    pathParams: REF,
    body: { codec: adminObjectBodies.CreateWorkflow },
    responses: { 201: ok('Created', t.type({ id: t.string })), 404: noObject, ...BUSY },
  }),
  admin({
    method: 'get',
    path: '/api/admin/workflows/:id',
    summary: 'One workflow',
    pathParams: { id: 'A workflow id' },
    responses: { 200: ok('The workflow', WorkUnitBody), 404: error('No such workflow') },
  }),
  admin({
    method: 'post',
    path: '/api/admin/workflows/:id/transition',
    summary: 'Move a workflow to another state (and close it)',
    pathParams: { id: 'A workflow id' },
    body: { codec: adminObjectBodies.Transition },
    responses: { 200: ok('The workflow as changed', WorkUnitBody), 404: error('No such workflow'), ...BUSY },
  }),

  admin({
    method: 'post',
    path: '/api/admin/rest-apis',
    summary: 'Define a push-data API with its control file',
    body: { codec: adminRestApiBodies.Define },
    responses: { 201: ok('Defined', RestApiBody), 409: error('An API with this url exists'), ...BUSY },
  }),
  admin({ method: 'get', path: '/api/admin/rest-apis', summary: 'Every push-data API', responses: { 200: ok('APIs', list('restApis', RestApiBody)) } }),
  admin({
    method: 'get',
    path: '/api/admin/rest-apis/:url',
    summary: 'One push-data API',
    pathParams: { url: 'The API\'s url (its name under /api/push-data/)' },
    responses: { 200: ok('The API', RestApiBody), 404: error('No such API') },
  }),
  admin({
    method: 'put',
    path: '/api/admin/rest-apis/:url',
    summary: 'Change a push-data API (description, enabled, response format, control file; never its url)',
    pathParams: { url: 'The API\'s url' },
    body: { codec: adminRestApiBodies.Change },
    responses: { 200: ok('The API as changed', RestApiBody), 404: error('No such API'), ...BUSY },
  }),
  admin({
    method: 'post',
    path: '/api/admin/rest-apis/:url/api-keys',
    summary: 'Issue a key restricted to one push-data API (shown in this answer only)',
    pathParams: { url: 'The API\'s url' },
    responses: { 201: ok('Issued', IssuedKeyBody), 404: error('No such API'), ...BUSY },
  }),

  admin({
    method: 'get',
    path: '/api/admin/models',
    summary: 'The data-import models',
    responses: { 200: ok('Models', list('models', t.type({ name: t.string, title: t.string, description: t.string }))) },
  }),
  admin({
    method: 'get',
    path: '/api/admin/models/:model',
    summary: 'One model: its destinations and their fields',
    pathParams: { model: 'A model name' },
    responses: {
      // describeModel's nested destinations are for reading, not a contract: only the model's own fields are promised.
      200: ok('The model', t.type({ name: t.string, title: t.string, description: t.string, destinations: t.UnknownArray })),
      404: error('No such model'),
    },
  }),
  admin({
    method: 'get',
    path: '/api/admin/filters',
    summary: 'The control files\' filters',
    responses: { 200: ok('Filters', list('filters', t.type({ name: t.string, description: t.string }))) },
  }),
  admin({
    method: 'post',
    path: '/api/admin/control-files/generate',
    summary: 'Generate a control file for a model and a selection of fields',
    body: { codec: adminModelBodies.Generate },
    responses: { 200: ok('The control file', t.type({ control: t.UnknownRecord })), 404: error('No such model') },
  }),

  admin({
    method: 'post',
    path: '/api/admin/files',
    summary: 'Store a file: the raw body is the file, its Content-Type the recorded media type',
    parameters: [{ name: 'filename', in: 'query', required: true, description: 'The file\'s name' }],
    body: { contentType: '*/*', schema: { type: 'string', format: 'binary' }, description: 'The file\'s bytes (not JSON: this route never parses its body)' },
    responses: {
      200: ok('The same bytes were stored before: the first upload\'s metadata', FileBody),
      201: ok('Stored', FileBody),
      400: error('Bad filename or Content-Type, or an upload cut short'),
      413: error('The file is larger than SVC_FILE_LIMIT'),
    },
  }),
];
