import Router from '@koa/router';
import * as t from 'io-ts';
import type { CommandDeps } from '../../commands/context.ts';
import { changeUser, createGroup, createUser, issueApiKey, revokeApiKey } from '../../commands/users.ts';
import { API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../../projections/read-models.ts';
import { notFound } from '../errors.ts';
import type { AppState } from '../state.ts';
import { decodeBody, metadataOf, optionalProps } from '../validate.ts';

const NameInput = optionalProps('PersonName', {}, {
  title: t.string,
  first: t.string,
  middle: t.string,
  last: t.string,
  suffix: t.string,
  culture: t.keyof({ western: null, western_list: null, eastern: null }),
});
const CreateUser = optionalProps('CreateUser', { username: t.string, name: NameInput }, { email: t.string, groups: t.array(t.string) });
const ChangeUser = optionalProps('ChangeUser', {}, { email: t.string, active: t.boolean, groups: t.array(t.string) });
const IssueKey = optionalProps('IssueApiKey', {}, { name: t.string, path: t.string });
const CreateGroup = optionalProps('CreateGroup', { code: t.string, title: t.string }, { readLabels: t.array(t.string), readAll: t.boolean });

/** The request bodies' codecs, for the OpenAPI document. */
export const adminUserBodies = { CreateUser, ChangeUser, IssueKey, CreateGroup };

const publicKey = ({ hash: _hash, lookup: _lookup, ...rest }: ApiKeyDoc) => rest;

/** Users, groups and API keys for read clients: `/api/admin/users`, `/groups`, `/api-keys`. */
export const adminUserRoutes = (deps: CommandDeps) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });

  router.post('/users', async (ctx) => {
    const body = decodeBody(CreateUser, ctx.request.body);
    ctx.body = await createUser(deps, metadataOf(ctx), { ...body, name: { ...body.name, culture: body.name.culture ?? 'western' } });
    ctx.status = 201;
  });
  router.get('/users', async (ctx) => {
    ctx.body = { users: await deps.reads.find<UserDoc>(USERS, { sort: [['id', 'asc']] }) };
  });
  router.get('/users/:username', async (ctx) => {
    const user = await deps.reads.get<UserDoc>(USERS, ctx.params.username!);
    if (!user) throw notFound(`User ${ctx.params.username} does not exist`, 'svc:user:no-such-user');
    const keys = await deps.reads.find<ApiKeyDoc>(API_KEYS, { where: { username: user.username } });
    ctx.body = { ...user, apiKeys: keys.map(publicKey) };
  });
  router.patch('/users/:username', async (ctx) => {
    ctx.body = await changeUser(deps, metadataOf(ctx), ctx.params.username!, decodeBody(ChangeUser, ctx.request.body));
  });
  router.post('/users/:username/api-keys', async (ctx) => {
    ctx.body = await issueApiKey(deps, metadataOf(ctx), ctx.params.username!, decodeBody(IssueKey, ctx.request.body ?? {}));
    ctx.status = 201;
  });

  router.get('/api-keys', async (ctx) => {
    ctx.body = { apiKeys: (await deps.reads.find<ApiKeyDoc>(API_KEYS, { sort: [['username', 'asc']] })).map(publicKey) };
  });
  router.delete('/api-keys/:id', async (ctx) => {
    await revokeApiKey(deps, metadataOf(ctx), ctx.params.id!);
    ctx.body = { id: ctx.params.id, revoked: true };
  });

  router.post('/groups', async (ctx) => {
    ctx.body = await createGroup(deps, metadataOf(ctx), decodeBody(CreateGroup, ctx.request.body));
    ctx.status = 201;
  });
  router.get('/groups', async (ctx) => {
    ctx.body = { groups: await deps.reads.find<GroupDoc>(GROUPS, { sort: [['id', 'asc']] }) };
  });
  return router;
};
