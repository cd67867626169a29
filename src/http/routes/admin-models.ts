import Router from '@koa/router';
import * as t from 'io-ts';
import { generateControlFile, describeModel } from '../../commands/push-data/generate-control.ts';
import type { Models } from '../../domain/model.ts';
import { FILTERS } from '../../commands/push-data/filters.ts';
import { badRequest, notFound } from '../errors.ts';
import type { AppState } from '../state.ts';
import { decodeBody, optionalProps } from '../validate.ts';

const Generate = optionalProps('GenerateControlFile', { model: t.string, include: t.array(optionalProps('Include', { destination: t.string, name: t.string }, { multivalue: t.boolean })) }, {});

/** The request bodies' codecs, for the OpenAPI document. */
export const adminModelBodies = { Generate };

/** Model explorer, filter list and the control-file generator: `/api/admin/models`, `/api/admin/control-files/generate`. */
export const adminModelRoutes = (models: Models) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });
  router.get('/models', (ctx) => {
    ctx.body = { models: models.list().map((m) => ({ name: m.name, title: m.title, description: m.description })) };
  });
  router.get('/models/:model', (ctx) => {
    const model = models.get(ctx.params.model!);
    if (!model) throw notFound(`Model ${ctx.params.model} does not exist`, 'svc:import:no-such-model');
    ctx.body = describeModel(model);
  });
  router.get('/filters', (ctx) => {
    ctx.body = { filters: Object.entries(FILTERS).map(([name, f]) => ({ name, description: f.description })) };
  });
  router.post('/control-files/generate', (ctx) => {
    const body = decodeBody(Generate, ctx.request.body);
    const model = models.get(body.model);
    if (!model) throw notFound(`Model ${body.model} does not exist`, 'svc:import:no-such-model');
    const generated = generateControlFile(model, body.include);
    if ('errors' in generated) throw badRequest(generated.errors.join('; '), 'svc:import:bad-selection');
    ctx.body = generated;
  });
  return router;
};
