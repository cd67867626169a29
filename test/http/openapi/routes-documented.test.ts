/**
 * Every route of every router the app mounts is in /openapi.json, and every documented operation
 * is served by a route: the routers come from koa-app's own routerFamilies, the document from the
 * same function GET /openapi.json serves. Routes left out are exactly those under the document's
 * UNDOCUMENTED prefixes (the admin interface's HTML pages).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../src/config/config.ts';
import { routerFamilies, type AppDeps } from '../../../src/http/koa-app.ts';
import { openApiDocument, openApiPath, UNDOCUMENTED } from '../../../src/http/openapi/document.ts';
import { OPENAPI_METHODS, type Method } from '../../../src/http/openapi/operation.ts';
import { tempDir } from '../../support/tmp.ts';

const test = suite('OpenAPI: every route is documented');

/**
 * Dependencies for building the routers without opening engines: the routers only keep their
 * dependencies for their handlers, which this test never calls. Any property read of a dependency
 * gives another inert value, so a router that starts to use one while being built still builds.
 */
const inert = (): any =>
  new Proxy(function inert() {}, {
    get: (_target, key) => (key === Symbol.toPrimitive ? () => '' : key === 'then' ? undefined : inert()),
    apply: () => inert(),
    construct: () => inert(),
  });

interface Route {
  readonly path: string;
  readonly methods: readonly string[];
}

const servedRoutes = (): Route[] => {
  const tmp = tempDir('svc-openapi');
  try {
    const config = loadConfig({ PORT: '0', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: 'test-admin-token-0123456789' });
    // Values that routers read while being built must be real ones (the metrics token is hashed then).
    const real: Partial<Record<keyof AppDeps, unknown>> = { config, adminToken: 'test-admin-token-0123456789', metrics: { registry: inert(), requests: inert(), token: undefined } };
    const deps = new Proxy(real, { get: (target, key) => (key in target ? target[key as keyof AppDeps] : inert()) }) as unknown as AppDeps;
    return routerFamilies(deps).flatMap((family) =>
      family.routers.flatMap((router) =>
        // Layers without methods are router-level middleware (authentication), not routes.
        router.stack.filter((layer) => layer.methods.length > 0).map((layer) => ({ path: String(layer.path), methods: layer.methods.map((m) => m.toLowerCase()) })),
      ),
    );
  } finally {
    tmp.remove();
  }
};

const isUndocumented = (path: string) => UNDOCUMENTED.some((u) => path === u.prefix || path.startsWith(`${u.prefix}/`));

/** What a route must have documented: the methods OpenAPI can describe; HEAD goes with GET (the info says so). */
const documentable = (methods: readonly string[]): Method[] =>
  OPENAPI_METHODS.filter((m) => methods.includes(m) && !(m === 'head' && methods.includes('get')));

const routes = servedRoutes();
const doc = openApiDocument('test');
const paths = doc.paths as Record<string, Record<string, unknown>>;

test('the routers were reached (the walk sees the families the app mounts)', () => {
  const prefixes = ['/healthz', '/openapi.json', '/api/admin/', '/api/v0-object/', '/api/push-data/', '/api/reporting/v0/', '/api/v0-file/', '/admin'];
  for (const p of prefixes) assert.ok(routes.some((r) => r.path.startsWith(p)), `no route under ${p}`);
});

/** Route and method pairs the document lacks. */
const undocumented = (served: readonly Route[]) =>
  served
    .filter((r) => !isUndocumented(r.path))
    .flatMap((r) => documentable(r.methods).filter((m) => !paths[openApiPath(r.path)]?.[m]).map((m) => `${m.toUpperCase()} ${r.path}`));

test('every route and method the app serves is in the document', () => {
  const missing = undocumented(routes);
  assert.equal(missing, [], `undocumented routes: ${missing.join(', ')}`);
});

test('every documented path and method is served by a route', () => {
  const unserved: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of Object.keys(item)) {
      const served = routes.some((r) => openApiPath(r.path) === path && (r.methods.includes(method) || (method === 'head' && r.methods.includes('get'))));
      if (!served) unserved.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.equal(unserved, [], `documented but not served: ${unserved.join(', ')}`);
});

test('left out: exactly the admin interface, by an explicit prefix, and none of it is in the document', () => {
  assert.equal(UNDOCUMENTED.map((u) => u.prefix), ['/admin']);
  const left = routes.filter((r) => isUndocumented(r.path));
  assert.ok(left.length > 0, 'the admin interface has routes');
  assert.ok(left.every((r) => r.path.startsWith('/admin')));
  assert.equal(Object.keys(paths).filter(isUndocumented), []);
  assert.match(doc.info.description, 'Not documented: /admin (');
});

test('the check fails on a route missing from the document (the walk is not vacuous)', () => {
  const extra = { path: '/api/admin/not-in-the-document/:id', methods: ['head', 'get', 'delete'] };
  assert.equal(undocumented([...routes, extra]), ['GET /api/admin/not-in-the-document/:id', 'DELETE /api/admin/not-in-the-document/:id']);
});

test('path templates: parameters and catch-alls in OpenAPI form, trailing slash dropped', () => {
  assert.is(openApiPath('/api/admin/objects/:ref/undelete'), '/api/admin/objects/{ref}/undelete');
  assert.is(openApiPath('/api/v0-file/download/*rest'), '/api/v0-file/download/{rest}');
  assert.is(openApiPath('/api/admin/rest-apis/'), '/api/admin/rest-apis');
  for (const [path, item] of Object.entries(paths)) {
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const op of Object.values(item) as { parameters?: { name: string; in: string }[] }[]) {
      assert.equal(op.parameters?.filter((p) => p.in === 'path').map((p) => p.name) ?? [], names, path);
    }
  }
});

test.run();
