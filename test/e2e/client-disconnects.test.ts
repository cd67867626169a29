/**
 * A client that goes away (closes its socket while sending its body, or while the answer is being
 * sent) is not an error of the service: the log says "client disconnected" at info, without an error
 * object or a stack, and nothing is logged at error level.
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startService } from '../../src/app/service.ts';
import { loadConfig } from '../../src/config/config.ts';
import { defineApi, EXAMPLE_CONTROL } from '../support/push-data.ts';
import { basic } from '../support/fixtures.ts';
import type { TestService } from '../support/service.ts';
import { tempDir } from '../support/tmp.ts';
import { createFileClient, type FilesService } from './files/support.ts';

type Line = Record<string, any>;
const test = suite<{ svc: FilesService; lines: Line[]; remove(): void }>('client disconnects', {} as never);

test.before(async (ctx) => {
  const tmp = tempDir('svc-disconnects');
  ctx.remove = tmp.remove;
  ctx.lines = [];
  const dest = new Writable({
    write(chunk, _e, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) ctx.lines.push(JSON.parse(line));
      cb();
    },
  });
  const config = loadConfig({ PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: 'test-admin-token-0123456789', SVC_BASE_URL: 'http://127.0.0.1' });
  const service = await startService(config, { logger: pino({ level: 'info' }, dest) });
  ctx.svc = {
    ...service,
    config,
    dataDir: config.dataDir,
    request: (path, { admin = true, headers, ...init } = {}) =>
      fetch(`${service.url}${path}`, { ...init, headers: { ...(admin ? { Authorization: `Bearer ${service.adminToken}` } : {}), ...(headers as Record<string, string>) } }),
    stop: () => service.close(),
    local: (absoluteUrl: string) => `${service.url}${new URL(absoluteUrl).pathname}${new URL(absoluteUrl).search}`,
  } satisfies TestService & FilesService;
});
test.after(async (ctx) => {
  await ctx.svc?.close();
  ctx.remove?.();
});

const port = (svc: FilesService) => Number(new URL(svc.url).port);

/** Lines logged for one request id, once its request line is written (bounded wait). */
const linesOf = async (lines: Line[], requestId: string, until: (mine: Line[]) => boolean): Promise<Line[]> => {
  const mine = () => lines.filter((l) => l.requestId === requestId);
  for (let waited = 0; waited < 30_000 && !until(mine()); waited += 20) await new Promise((r) => setTimeout(r, 20));
  return mine();
};

/** Sends the headers and half the body of a POST, then closes the socket once the server has the headers. */
const abandonBody = async (svc: FilesService, path: string, headers: Record<string, string>, requestId: string) => {
  const socket = connect(port(svc), '127.0.0.1');
  socket.on('error', () => undefined);
  const head = Object.entries({ Host: 'x', 'Content-Length': '100000', 'X-Request-Id': requestId, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`POST ${path} HTTP/1.1\r\n${head}\r\n${'{"a":"'.padEnd(5000, 'x')}`);
  await new Promise((r) => setTimeout(r, 200));
  socket.destroy();
};

const expectDisconnectLogged = (mine: Line[], during: string) => {
  const levels = mine.map((l) => [l.level, l.msg]);
  assert.equal(mine.filter((l) => l.level >= 50), [], `nothing at error level: ${JSON.stringify(levels)}`);
  const line = mine.find((l) => l.msg === 'client disconnected');
  assert.ok(line, `a "client disconnected" line: ${JSON.stringify(levels)}`);
  assert.is(line!.level, 30);
  assert.is(line!.during, during);
  assert.is(line!.err, undefined, 'no error object (and so no stack)');
  assert.not.match(JSON.stringify(line), /stack|\n\s+at /);
};

const requestLogged = (mine: Line[]) => mine.some((l) => l.msg === 'request');

test('a push-data client that closes mid-body', async ({ svc, lines }) => {
  const api = await defineApi(svc, EXAMPLE_CONTROL);
  await abandonBody(svc, `/api/push-data/${api.url}`, { Authorization: basic(api.key), 'Content-Type': 'application/json' }, 'gone-push');
  const mine = await linesOf(lines, 'gone-push', requestLogged);
  expectDisconnectLogged(mine, 'request');
  assert.is(mine.find((l) => l.msg === 'request')!.status, 499);
});

test('an admin API client that closes mid-body', async ({ svc, lines }) => {
  await abandonBody(svc, '/api/admin/objects', { Authorization: `Bearer ${svc.adminToken}`, 'Content-Type': 'application/json' }, 'gone-admin');
  expectDisconnectLogged(await linesOf(lines, 'gone-admin', requestLogged), 'request');
});

test('a file upload that the client abandons', async ({ svc, lines }) => {
  await abandonBody(svc, '/api/admin/files?filename=gone.bin', { Authorization: `Bearer ${svc.adminToken}`, 'Content-Type': 'application/octet-stream' }, 'gone-upload');
  expectDisconnectLogged(await linesOf(lines, 'gone-upload', requestLogged), 'request');
});

test('a download that the client stops reading and closes', async ({ svc, lines }) => {
  const uploaded = await svc.request('/api/admin/files?filename=big.bin', { method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: Buffer.alloc(16 * 1024 * 1024, 7) });
  assert.is(uploaded.status, 201);
  const { digest } = (await uploaded.json()) as { digest: string };
  const client = await createFileClient(svc);
  const meta = await client.get(`/api/v0-file/metadata/${digest}`);
  assert.is(meta.status, 200);
  const url = new URL(meta.body.download.url);
  const socket = connect(port(svc), '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    socket.once('data', () => {
      socket.destroy();
      resolve();
    });
    socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: x\r\nX-Request-Id: gone-download\r\n\r\n`);
  });
  expectDisconnectLogged(await linesOf(lines, 'gone-download', (mine) => mine.some((l) => l.msg === 'client disconnected' || l.level >= 50)), 'response');
});

test.run();
