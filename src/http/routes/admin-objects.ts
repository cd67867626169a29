import Router from '@koa/router';
import * as t from 'io-ts';
import type { CommandDeps } from '../../commands/context.ts';
import { parseAttributes, typeValue, withType } from '../../commands/object-input.ts';
import { changeObject, createObject, deleteObject, undeleteObject } from '../../commands/objects.ts';
import { createWorkUnit, transitionWorkUnit } from '../../commands/work-units.ts';
import type { AttributeChange } from '../../domain/objects/object.ts';
import { refParam } from '../params.ts';
import { WORK_UNITS, type WorkUnitDoc } from '../../projections/read-models.ts';
import { getObject, type ObjectQueryDeps } from '../../queries/object-api.ts';
import { badRequest, notFound } from '../errors.ts';
import type { AppState } from '../state.ts';
import { decodeBody, metadataOf, optionalProps } from '../validate.ts';

const CreateObject = optionalProps('CreateObject', { type: t.string, attributes: t.UnknownRecord }, { labels: t.array(t.string) });
const Change = optionalProps(
  'AttributeChange',
  { op: t.keyof({ replace: null, append: null, remove: null }), attribute: t.string },
  { qualifier: t.string, values: t.UnknownArray },
);
const PatchObject = optionalProps('PatchObject', {}, {
  attributes: t.UnknownRecord,
  changes: t.array(Change),
  labels: optionalProps('LabelChanges', {}, { add: t.array(t.string), remove: t.array(t.string) }),
});
const CreateWorkflow = optionalProps('CreateWorkflow', { workType: t.string, state: t.string }, {
  deadline: t.union([t.string, t.null]),
  data: t.UnknownRecord,
  tags: t.record(t.string, t.string),
});
const Transition = optionalProps('Transition', { state: t.string }, { closed: t.boolean });

/** The request bodies' codecs, for the OpenAPI document. */
export const adminObjectBodies = { CreateObject, PatchObject, CreateWorkflow, Transition };

const ALL_ACCESS = { all: true, labels: new Set<string>() };

/** Store objects and their workflows: `/api/admin/objects`, `/api/admin/workflows`. */
export const adminObjectRoutes = (deps: CommandDeps, queries: ObjectQueryDeps) => {
  const router = new Router<AppState>({ prefix: '/api/admin' });

  router.post('/objects', async (ctx) => {
    const body = decodeBody(CreateObject, ctx.request.body);
    const attributes = withType(await parseAttributes(deps, body.attributes), typeValue(deps, body.type));
    const created = await createObject(deps, metadataOf(ctx), { attributes, ...(body.labels ? { labels: body.labels } : {}) });
    ctx.status = 201;
    ctx.body = { ref: created.ref, recordVersion: created.recordVersion };
  });

  router.get('/objects/:ref', async (ctx) => {
    ctx.body = { success: true, kind: 'svc:api-v0:object:serialised', object: await getObject(queries, refParam(ctx.params.ref), 'ALL', ALL_ACCESS) };
  });

  router.patch('/objects/:ref', async (ctx) => {
    const ref = refParam(ctx.params.ref);
    const body = decodeBody(PatchObject, ctx.request.body);
    const changes: AttributeChange[] = [];
    if (body.attributes) {
      const parsed = await parseAttributes(deps, body.attributes);
      for (const code of Object.keys(body.attributes)) changes.push({ op: 'set', attribute: code, values: parsed[code] ?? [] });
    }
    for (const [i, c] of (body.changes ?? []).entries()) {
      if (!deps.schema.attributes.has(c.attribute)) throw badRequest(`changes[${i}].attribute: unknown attribute ${c.attribute}`, 'svc:object:unknown-attribute');
      if (c.qualifier !== undefined && !deps.schema.qualifiers.has(c.qualifier)) {
        throw badRequest(`changes[${i}].qualifier: unknown qualifier ${c.qualifier}`, 'svc:object:bad-value');
      }
      if (c.op === 'remove') {
        changes.push({ op: 'remove', attribute: c.attribute, ...(c.qualifier ? { qualifier: c.qualifier } : {}) });
        continue;
      }
      const values = (await parseAttributes(deps, { [c.attribute]: c.values ?? [] }, `changes[${i}]`))[c.attribute] ?? [];
      changes.push(c.op === 'append' ? { op: 'append', attribute: c.attribute, values } : { op: 'replace', attribute: c.attribute, values, ...(c.qualifier ? { qualifier: c.qualifier } : {}) });
    }
    ctx.body = await changeObject(deps, metadataOf(ctx), ref, { changes, ...(body.labels ? { labels: body.labels } : {}) });
  });

  router.delete('/objects/:ref', async (ctx) => {
    ctx.body = { ...(await deleteObject(deps, metadataOf(ctx), refParam(ctx.params.ref))), deleted: true };
  });
  router.post('/objects/:ref/undelete', async (ctx) => {
    ctx.body = { ...(await undeleteObject(deps, metadataOf(ctx), refParam(ctx.params.ref))), deleted: false };
  });

  router.post('/objects/:ref/workflows', async (ctx) => {
    const body = decodeBody(CreateWorkflow, ctx.request.body);
    if (body.deadline && Number.isNaN(Date.parse(body.deadline))) throw badRequest('deadline: expected an ISO 8601 date-time');
    const deadline = body.deadline ? new Date(body.deadline).toISOString() : null;
    ctx.body = await createWorkUnit(deps, metadataOf(ctx), refParam(ctx.params.ref), { ...body, deadline });
    ctx.status = 201;
  });
  router.get('/workflows/:id', async (ctx) => {
    const unit = await deps.reads.get<WorkUnitDoc>(WORK_UNITS, ctx.params.id!);
    if (!unit) throw notFound(`Workflow ${ctx.params.id} does not exist`, 'svc:workflow:no-such-workflow');
    ctx.body = unit;
  });
  router.post('/workflows/:id/transition', async (ctx) => {
    ctx.body = await transitionWorkUnit(deps, metadataOf(ctx), ctx.params.id!, decodeBody(Transition, ctx.request.body));
  });
  return router;
};
