import Router from '@koa/router';
import * as t from 'io-ts';
import type { CommandDeps } from '../../commands/context.ts';
import { changeRestApi, defineRestApi, issuePushDataKey, parseControlFile, type ControlValidator } from '../../commands/rest-apis.ts';
import { REST_APIS, type RestApiDoc } from '../../projections/read-models.ts';
import { badRequest, notFound } from '../errors.ts';
import type { AppState } from '../state.ts';
import { decodeBody, metadataOf, optionalProps } from '../validate.ts';

const Response = t.keyof({ JSON: null, XML: null });
const Define = optionalProps('DefineRestApi', { url: t.string, description: t.string, controlFile: t.unknown }, { enabled: t.boolean, response: Response });
const Change = optionalProps('ChangeRestApi', {}, { url: t.string, description: t.string, enabled: t.boolean, response: Response, controlFile: t.unknown });

/** The request bodies' codecs, for the OpenAPI document. */
export const adminRestApiBodies = { Define, Change };

/** Push-data API definitions and their keys: `/api/admin/rest-apis`. */
export const adminRestApiRoutes = (deps: CommandDeps, validate: ControlValidator) => {
  const router = new Router<AppState>({ prefix: '/api/admin/rest-apis' });

  router.post('/', async (ctx) => {
    const body = decodeBody(Define, ctx.request.body);
    const control = parseControlFile(body.controlFile, validate);
    ctx.body = await defineRestApi(deps, metadataOf(ctx), {
      url: body.url,
      description: body.description,
      enabled: body.enabled ?? true,
      response: body.response ?? 'JSON',
      control,
    });
    ctx.status = 201;
  });
  router.get('/', async (ctx) => {
    ctx.body = { restApis: await deps.reads.find<RestApiDoc>(REST_APIS, { sort: [['id', 'asc']] }) };
  });
  router.get('/:url', async (ctx) => {
    const api = await deps.reads.get<RestApiDoc>(REST_APIS, ctx.params.url!);
    if (!api) throw notFound(`REST API ${ctx.params.url} does not exist`, 'svc:rest-api:no-such-api');
    ctx.body = api;
  });
  router.put('/:url', async (ctx) => {
    const body = decodeBody(Change, ctx.request.body);
    if (body.url !== undefined && body.url !== ctx.params.url) throw badRequest('url: cannot be changed after creation', 'svc:rest-api:url-immutable');
    ctx.body = await changeRestApi(deps, metadataOf(ctx), ctx.params.url!, {
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      ...(body.response !== undefined ? { response: body.response } : {}),
      ...(body.controlFile !== undefined ? { control: parseControlFile(body.controlFile, validate) } : {}),
    });
  });
  router.post('/:url/api-keys', async (ctx) => {
    ctx.body = await issuePushDataKey(deps, metadataOf(ctx), ctx.params.url!);
    ctx.status = 201;
  });
  return router;
};
