/**
 * Request logging: one line per request carrying the request id (the caller's or a generated one),
 * written without making a child logger unless something else logs for the request; lines logged
 * through `ctx.state.log` (e.g. an unexpected error) carry the same request id.
 */
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { handleErrors } from '../../src/http/middleware/handle-errors.ts';
import { jsonOutput } from '../../src/http/middleware/json-output.ts';
import { logRequests } from '../../src/http/middleware/log-requests.ts';
import { requestId } from '../../src/http/middleware/request-id.ts';
import type { AppState } from '../../src/http/state.ts';

const test = suite('request log');

const serve = async () => {
  const lines: Record<string, unknown>[] = [];
  const dest = new Writable({
    write(chunk, _e, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  });
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(requestId(pino({ level: 'info' }, dest)));
  app.use(logRequests());
  app.use(jsonOutput());
  app.use(handleErrors());
  app.use((ctx) => {
    if (ctx.path === '/boom') throw new Error('boom');
    if (ctx.path === '/note') ctx.state.log.info({ note: true }, 'noted');
    ctx.state.actor = 'apikey:k1';
    ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { lines, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

test('one line per request: request id first, then method, path, status, ms, actor', async () => {
  const { lines, server, url } = await serve();
  try {
    const res = await fetch(`${url}/things?x=1`, { headers: { 'X-Request-Id': 'req-1' } });
    assert.is(res.headers.get('x-request-id'), 'req-1');
    const generated = await fetch(`${url}/other`);
    const id = generated.headers.get('x-request-id')!;
    assert.match(id, /^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 20));
    const [first, second] = lines.filter((l) => l.msg === 'request');
    assert.equal(Object.keys(first!), ['level', 'time', 'pid', 'hostname', 'requestId', 'method', 'path', 'status', 'ms', 'actor', 'msg']);
    assert.equal([first!.requestId, first!.method, first!.path, first!.status, first!.actor], ['req-1', 'GET', '/things', 200, 'apikey:k1']);
    assert.type(first!.ms, 'number');
    assert.is(second!.requestId, id);
  } finally {
    server.close();
  }
});

test('lines logged for a request through ctx.state.log carry its id; so does its request line', async () => {
  const { lines, server, url } = await serve();
  try {
    assert.is((await fetch(`${url}/boom`, { headers: { 'X-Request-Id': 'req-boom' } })).status, 500);
    assert.is((await fetch(`${url}/note`, { headers: { 'X-Request-Id': 'req-note' } })).status, 200);
    await new Promise((r) => setTimeout(r, 20));
    const error = lines.find((l) => l.msg === 'unhandled error')!;
    assert.is(error.requestId, 'req-boom');
    const note = lines.find((l) => l.msg === 'noted')!;
    assert.is(note.requestId, 'req-note');
    const requests = lines.filter((l) => l.msg === 'request');
    assert.equal(requests.map((l) => [l.requestId, l.status]), [['req-boom', 500], ['req-note', 200]]);
    for (const l of requests) assert.equal(Object.keys(l).slice(0, 5), ['level', 'time', 'pid', 'hostname', 'requestId']);
  } finally {
    server.close();
  }
});

test.run();
