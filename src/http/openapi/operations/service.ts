import * as t from 'io-ts';
import { error } from '../answers.ts';
import { OPENAPI_METHODS, type Operation } from '../operation.ts';
import { PushResultBody } from '../shapes.ts';

const Check = t.union([t.type({ ok: t.literal(true) }), t.type({ ok: t.literal(false), error: t.keyof({ timeout: null, error: null, 'not checked': null }) })]);
const Readiness = (status: 'ready' | 'not-ready') =>
  t.type({
    status: t.literal(status),
    failed: t.readonlyArray(t.keyof({ eventStore: null, readStore: null, projections: null })),
    checks: t.type({
      eventStore: Check,
      readStore: Check,
      projections: t.intersection([
        t.type({ ok: t.boolean, maxLag: t.number }),
        t.partial({ error: t.keyof({ timeout: null, error: null, 'not checked': null }), behind: t.readonlyArray(t.type({ name: t.string, state: t.string, lag: t.number })) }),
      ]),
    }),
  });

const PUSH_XML = { contentType: 'application/xml', schema: { type: 'string', description: 'The same result as <response result= applied= failures= errorCount=> with <errors> and <actions>' } };
const push = (description: string) => ({ description, ref: 'PushResult', alsoAs: [PUSH_XML] });

/** Push-data APIs: one route for every method, as Haplo answers any method but POST with a push-data error. */
export const pushDataOperations: readonly Operation[] = OPENAPI_METHODS.map((method): Operation =>
  method === 'post'
    ? {
        method,
        path: '/api/push-data/:url',
        tag: 'push-data',
        access: 'api-key',
        summary: 'Push records to a push-data API: its control file turns them into changes of store objects',
        pathParams: { url: 'The API\'s url, as defined in the admin API' },
        parameters: [{ name: 'Idempotency-Key', in: 'header', description: 'Send the same key again to get the first answer back instead of pushing twice' }],
        body: { contentType: '*/*', schema: { type: 'string' }, description: 'The records in the format the control file reads (JSON, CSV, TSV, XML, ...)' },
        responses: {
          200: push('Every record applied'),
          400: push('Failures or errors (the answer lists them): also no such API, a disabled API, a bad Idempotency-Key'),
          401: error('No HTTP Basic credentials', { 'WWW-Authenticate': 'Basic realm="svc", charset="UTF-8"' }),
          403: { description: 'A key for another API, an invalid key (JSON error), or a user not authorised for this API (push result)', schema: { anyOf: [{ $ref: '#/components/schemas/PushResult' }, { $ref: '#/components/schemas/ErrorBody' }] } },
          409: push('The Idempotency-Key is in use by a push still running, or was used for another request'),
          413: push('The body is larger than SVC_BODY_LIMIT'),
          503: push('Busy or disabled: retry later'),
        },
      }
    : {
        method,
        path: '/api/push-data/:url',
        tag: 'push-data',
        access: 'public',
        summary: 'Only POST pushes: any other method is answered with a push-data error',
        pathParams: { url: 'The API\'s url' },
        // Written by the route itself, as Haplo's: no `actions`, JSON whatever the API's format.
        responses: {
          400: {
            description: 'Only POST requests supported for push data REST APIs.',
            codec: t.type({ result: t.literal('error'), applied: t.literal(0), failures: t.literal(0), errorCount: t.literal(1), errors: t.readonlyArray(t.string) }),
          },
        },
      },
);

/** Health, and this document. */
export const serviceOperations: readonly Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    tag: 'service',
    access: 'public',
    summary: 'Liveness: 200 whenever the process answers, with the projections\' state and lag when their status comes in time',
    responses: {
      200: {
        description: 'Alive',
        codec: t.intersection([
          t.type({ status: t.literal('ok'), projections: t.readonlyArray(t.type({ name: t.string, state: t.string, lag: t.number })) }),
          t.partial({ projectionsUnknown: t.literal(true) }),
        ]),
      },
    },
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'service',
    access: 'public',
    summary: 'Readiness for load balancers: the engines answer and every projection is live within the configured lag',
    responses: {
      200: { description: 'Ready', codec: Readiness('ready') },
      503: { description: 'Not ready: `failed` names the checks that failed', codec: Readiness('not-ready') },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'service',
    access: 'public',
    summary: 'Prometheus metrics in the text exposition format (with SVC_METRICS_TOKEN set, only for Authorization: Bearer <token>)',
    responses: {
      200: { description: 'The metrics', contentType: 'text/plain', schema: { type: 'string' } },
      401: error('SVC_METRICS_TOKEN is set and the request did not send it', { 'WWW-Authenticate': 'Bearer realm="svc metrics"' }),
    },
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'service',
    access: 'public',
    summary: 'This document (OpenAPI 3.1)',
    responses: {
      // The OpenAPI 3.1 meta-schema is not bundled; these are the fields every 3.1 document must have.
      200: { description: 'The document', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } } },
    },
  },
];
