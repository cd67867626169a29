import { toJsonSchema, type JsonSchema } from './json-schema.ts';
import type { Access, Answer, Operation } from './operation.ts';
import { adminOperations } from './operations/admin.ts';
import { fileApiOperations, objectApiOperations, reportingOperations } from './operations/read-apis.ts';
import { pushDataOperations, serviceOperations } from './operations/service.ts';
import { ErrorBody, PushResultBody } from './shapes.ts';

/**
 * Routes deliberately left out of the document, by path prefix, with the reason. The OpenAPI test
 * checks that every route it skips is under one of these and that the document lists none of them.
 */
export const UNDOCUMENTED = [
  {
    prefix: '/admin',
    reason: 'The admin interface: HTML pages and forms for people (session cookie, CSRF field), not an API. Machines use /api/admin.',
  },
] as const;

/** Every documented operation, family by family. */
export const OPERATIONS: readonly Operation[] = [
  ...serviceOperations,
  ...pushDataOperations,
  ...reportingOperations,
  ...objectApiOperations,
  ...fileApiOperations,
  ...adminOperations,
];

/** `/objects/:ref` as OpenAPI writes it (`/objects/{ref}`); a trailing slash is the same route (routers are not strict). */
export const openApiPath = (routerPath: string) => {
  const path = routerPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
};

const pathParamNames = (routerPath: string) => [...routerPath.matchAll(/[:*]([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

const SECURITY: Record<Access, readonly Record<string, readonly string[]>[]> = {
  admin: [{ adminToken: [] }, { adminSession: [] }],
  'api-key': [{ apiKey: [] }],
  public: [],
};

const RESPONSE_SCHEMAS = { closed: false };

const answerSchema = (a: Answer): JsonSchema | undefined =>
  a.codec ? toJsonSchema(a.codec, RESPONSE_SCHEMAS) : a.ref ? { $ref: `#/components/schemas/${a.ref}` } : a.schema;

const response = (a: Answer) => {
  const schema = answerSchema(a);
  const headers = a.headers ? Object.fromEntries(Object.entries(a.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }])) : undefined;
  return {
    description: a.description,
    ...(headers ? { headers } : {}),
    ...(schema
      ? { content: { [a.contentType ?? 'application/json']: { schema }, ...Object.fromEntries((a.alsoAs ?? []).map((m) => [m.contentType, { schema: m.schema }])) } }
      : {}),
  };
};

const operation = (op: Operation) => {
  const path = pathParamNames(op.path).map((name) => ({ name, in: 'path', required: true, description: op.pathParams?.[name] ?? name, schema: { type: 'string' } }));
  const other = (op.parameters ?? []).map((p) => ({ name: p.name, in: p.in, required: p.required ?? false, description: p.description, schema: p.schema ?? { type: 'string' } }));
  const body = op.body
    ? 'codec' in op.body
      ? { required: op.body.required ?? true, content: { 'application/json': { schema: toJsonSchema(op.body.codec) } } }
      : { required: true, description: op.body.description, content: { [op.body.contentType]: { schema: op.body.schema } } }
    : undefined;
  return {
    operationId: `${op.method}${openApiPath(op.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: SECURITY[op.access],
    ...(path.length + other.length > 0 ? { parameters: [...path, ...other] } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: Object.fromEntries(Object.entries(op.responses).map(([status, a]) => [status, response(a)])),
  };
};

/**
 * The OpenAPI 3.1 document of every endpoint, made from the operations above: request bodies from
 * the routes' own codecs, answers from the codecs in shapes.ts (tied to the routes' types).
 */
export const openApiDocument = (version: string) => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const item = (paths[openApiPath(op.path)] ??= {});
    if (item[op.method]) throw new Error(`Documented twice: ${op.method.toUpperCase()} ${op.path}`);
    item[op.method] = operation(op);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'svc: data import and reporting',
      version,
      description: [
        'Push-data, Reporting, Object and File APIs, and the admin API. Every GET also answers HEAD.',
        `Not documented: ${UNDOCUMENTED.map((u) => `${u.prefix} (${u.reason})`).join('; ')}.`,
      ].join('\n\n'),
    },
    tags: ['service', 'push-data', 'reporting', 'object-api', 'file-api', 'admin'].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ErrorBody: toJsonSchema(ErrorBody, RESPONSE_SCHEMAS), PushResult: toJsonSchema(PushResultBody, RESPONSE_SCHEMAS) },
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'The admin token (SVC_ADMIN_TOKEN, or the file in the data directory)' },
        adminSession: { type: 'apiKey', in: 'cookie', name: 'svc_admin_session', description: 'A signed-in admin interface session; not GET/HEAD/OPTIONS requests also send X-CSRF-Token' },
        apiKey: { type: 'http', scheme: 'basic', description: 'User name svc, an API key as password' },
      },
    },
  };
};

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
