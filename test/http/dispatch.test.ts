/**
 * Dispatch by path prefix (src/http/dispatch.ts) answers exactly as passing every request through
 * every router's routes() and allowedMethods() did: the same status, Allow header and body for
 * every method and path, including 404, 405, 501, OPTIONS, router-level middleware, routers
 * sharing a prefix, case-insensitive matches and paths outside every family.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { dispatchByPrefix, type RouterFamily } from '../../src/http/dispatch.ts';
import { handleErrors } from '../../src/http/middleware/handle-errors.ts';
import { jsonOutput } from '../../src/http/middleware/json-output.ts';
import { unmatched } from '../../src/http/middleware/unmatched.ts';
import type { AppState } from '../../src/http/state.ts';
import { unauthorised } from '../../src/http/errors.ts';

const test = suite('dispatch by path prefix');

/** Routers shaped like the app's: prefixes, router.use, router.all, several routers per family. */
const families = (): RouterFamily[] => {
  const health = new Router<AppState>();
  health.get('/healthz', (ctx) => void (ctx.body = { ok: true }));

  const admin1 = new Router<AppState>({ prefix: '/api/admin' });
  admin1.get('/things', (ctx) => void (ctx.body = { list: true }));
  admin1.post('/things', (ctx) => void (ctx.body = { created: true }));
  admin1.get('/things/:id', (ctx) => void (ctx.body = { id: ctx.params.id }));
  const admin2 = new Router<AppState>({ prefix: '/api/admin/sub' });
  admin2.get('/', (ctx) => void (ctx.body = { sub: true }));
  admin2.put('/:x', (ctx) => void (ctx.body = { put: ctx.params.x }));
  const admin3 = new Router<AppState>({ prefix: '/api/admin' });
  admin3.use(async (ctx, next) => {
    ctx.set('X-Admin3', 'seen');
    await next();
  });
  admin3.delete('/things/:id', (ctx) => void (ctx.body = { deleted: ctx.params.id }));

  const object = new Router<AppState>({ prefix: '/api/v0-object' });
  object.use('', async (ctx, next) => {
    if (!ctx.get('Authorization')) throw unauthorised('no key', 'Basic realm="x"', 'svc:auth:credentials-required');
    await next();
  });
  object.get('/ref/:ref', (ctx) => void (ctx.body = { ref: ctx.params.ref }));

  const push = new Router<AppState>();
  push.all('/api/push-data/:url', (ctx) => void (ctx.body = { method: ctx.method, url: ctx.params.url }));

  const ui = new Router<AppState>({ prefix: '/admin' });
  ui.get('/', (ctx) => void (ctx.body = 'home'));
  ui.get('/assets/:file', (ctx) => void (ctx.body = `asset ${ctx.params.file}`));
  ui.post('/sign-in', (ctx) => void (ctx.body = 'signed in'));

  return [
    { prefix: /^\/healthz/i, routers: [health] },
    { prefix: /^\/api\/admin/i, routers: [admin1, admin2, admin3] },
    { prefix: /^\/api\/v0-object/i, routers: [object] },
    { prefix: /^\/api\/push-data/i, routers: [push] },
    { prefix: /^\/admin/i, routers: [ui] },
  ];
};

const serve = async (routing: 'every router' | 'by prefix') => {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(async (ctx, next) => {
    ctx.state.requestId = 'r';
    ctx.state.log = { error: () => undefined } as unknown as AppState['log'];
    await next();
  });
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use(unmatched());
  if (routing === 'by prefix') app.use(dispatchByPrefix(families()));
  else for (const router of families().flatMap((f) => f.routers)) app.use(router.routes()).use(router.allowedMethods());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, port: (server.address() as AddressInfo).port };
};

const send = (port: number, method: string, path: string, headers: Record<string, string>) =>
  new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(`${res.statusCode} allow=${res.headers.allow ?? '-'} admin3=${res.headers['x-admin3'] ?? '-'} www=${res.headers['www-authenticate'] ?? '-'} ${body}`));
    });
    req.on('error', reject);
    req.end();
  });

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'];
const PATHS = [
  '/', '/nope', '/favicon.ico', '/healthz', '/HEALTHZ', '/healthz/', '/healthzx', '/healthz?output=pretty',
  '/api', '/api/', '/api/admin', '/api/admin/', '/api/admin/things', '/API/Admin/Things', '/api/admin/things/', '/api/admin/things/7',
  '/api/admin/sub', '/api/admin/sub/', '/api/admin/sub/9', '/api/admin/nope', '/api/adminx', '/api/adminx/things',
  '/api/v0-object', '/api/v0-object/', '/api/v0-object/ref/abc', '/API/V0-OBJECT/REF/abc', '/api/v0-object/nope', '/api/v0-objectx/ref/abc',
  '/api/push-data', '/api/push-data/', '/api/push-data/x', '/API/PUSH-DATA/x', '/api/push-data/x/y', '/api/push-datax/y',
  '/admin', '/admin/', '/ADMIN', '/admin/assets/a.css', '/admin/sign-in', '/admin/nope', '/adminx', '/%61dmin/', '/api/%61dmin/things',
];

test('every method and path: the same answer as going through every router', async () => {
  const all = await serve('every router');
  const prefixed = await serve('by prefix');
  try {
    let compared = 0;
    for (const headers of [{}, { Authorization: 'Basic eDp5' }] as Record<string, string>[]) {
      for (const method of METHODS) {
        for (const path of PATHS) {
          const expected = await send(all.port, method, path, headers);
          const actual = await send(prefixed.port, method, path, headers);
          assert.is(actual, expected, `${method} ${path} ${JSON.stringify(headers)}`);
          compared++;
        }
      }
    }
    assert.is(compared, 2 * METHODS.length * PATHS.length);
  } finally {
    all.server.close();
    prefixed.server.close();
  }
});

test('the matrix covers 404, 405 with Allow, 501, OPTIONS and router middleware', async () => {
  const { server, port } = await serve('by prefix');
  try {
    assert.match(await send(port, 'GET', '/nope', {}), /^404 /);
    assert.match(await send(port, 'PUT', '/api/admin/things', {}), /^405 allow=HEAD, GET, POST /);
    assert.match(await send(port, 'PROPFIND', '/healthz', {}), /^501 /);
    assert.match(await send(port, 'OPTIONS', '/api/admin/things/1', {}), /^200 allow=HEAD, GET, DELETE /);
    assert.match(await send(port, 'DELETE', '/api/admin/things/1', {}), /^200 allow=- admin3=seen /);
    assert.match(await send(port, 'GET', '/API/V0-OBJECT/REF/abc', {}), /^401 /);
    assert.match(await send(port, 'GET', '/API/V0-OBJECT/REF/abc', { Authorization: 'Basic eDp5' }), /"ref":"abc"/);
  } finally {
    server.close();
  }
});

test.run();
