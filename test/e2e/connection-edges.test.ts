/**
 * Edges of HTTP connections, driven over raw sockets: a client that dribbles its headers or its body
 * is cut off by SVC_HEADERS_TIMEOUT_MS / SVC_REQUEST_TIMEOUT_MS, and after a body refused for its size
 * the next request on the same connection is answered (the rest of the body is drained) instead of
 * the connection hanging until it times out.
 */
import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createFileClient, startFilesService, stored, type FilesService } from './files/support.ts';
import { defineApi, EXAMPLE_CONTROL } from '../support/push-data.ts';

const LIMIT = 1024;
const withService = (name: string, env: Record<string, string>) => {
  const s = suite<{ svc: FilesService }>(name, {} as { svc: FilesService });
  s.before(async (ctx) => {
    ctx.svc = await startFilesService({ env: { SVC_BODY_LIMIT: String(LIMIT), ...env } });
  });
  s.after(async (ctx) => {
    await ctx.svc?.stop();
  });
  return s;
};

/** A raw connection that collects what the server sends and notes when the server closes it. */
const rawConnection = (svc: FilesService) => {
  const socket: Socket = connect(Number(new URL(svc.url).port), '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined); // a reset shows as 'close'; what was received says the rest
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    received: () => received,
    statuses: () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])),
    closed,
    /** Resolves when `n` responses have arrived or the connection closed, whichever is first (bounded). */
    until: (n: number, boundMs = 30_000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(finish, boundMs);
        const check = () => ([...received.matchAll(/HTTP\/1\.1 \d{3} /g)].length >= n ? finish() : undefined);
        socket.on('data', check);
        void closed.then(finish);
        check();
        function finish() {
          clearTimeout(timer);
          socket.off('data', check);
          resolve();
        }
      }),
  };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const slow = withService('slow clients', { SVC_HEADERS_TIMEOUT_MS: '1000', SVC_REQUEST_TIMEOUT_MS: '2000' });

slow('connections that send their headers a byte at a time are closed after SVC_HEADERS_TIMEOUT_MS', async ({ svc }) => {
  const conns = Array.from({ length: 10 }, () => rawConnection(svc));
  let dribbling = true;
  const head = `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(10_000)}`;
  const dribble = (async () => {
    for (let i = 0; dribbling && i < head.length; i++) {
      for (const c of conns) if (!c.socket.destroyed) c.socket.write(head[i]!);
      await sleep(50);
    }
  })();
  // Bounded far above the 1 s setting (and far below Node's defaults of 60 s, checked every 30 s).
  const all = Promise.all(conns.map((c) => c.closed)).then(() => 'closed' as const);
  const outcome = await Promise.race([all, sleep(30_000).then(() => 'still open' as const)]);
  dribbling = false;
  await dribble;
  for (const c of conns) c.socket.destroy();
  assert.is(outcome, 'closed', 'every dribbling connection is closed by the server');
  for (const c of conns) assert.equal(c.statuses(), [408]);
});

slow('a body sent a byte at a time is cut off after SVC_REQUEST_TIMEOUT_MS', async ({ svc }) => {
  const c = rawConnection(svc);
  c.socket.write(
    `POST /api/admin/objects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${svc.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
  );
  let dribbling = true;
  const dribble = (async () => {
    for (let i = 0; dribbling && i < 1000 && !c.socket.destroyed; i++) {
      c.socket.write(i === 0 ? '{' : ' ');
      await sleep(50);
    }
  })();
  const outcome = await Promise.race([c.closed.then(() => 'closed' as const), sleep(30_000).then(() => 'still open' as const)]);
  dribbling = false;
  await dribble;
  c.socket.destroy();
  assert.is(outcome, 'closed');
  assert.equal(c.statuses(), [408]);
});

slow.run();

const refused = withService('refused bodies', {});

/** Far more than the socket buffers hold, so the client cannot finish sending unless the server reads. */
const BIG = 8 * 1024 * 1024;

/**
 * A chunked body of BIG bytes, then a second request on the same connection. Resolves with the
 * statuses the connection got (bounded wait: the server either answers both or closes).
 */
const oversizeThenNext = async (svc: FilesService, requestLine: string, headers: Record<string, string>) => {
  const c = rawConnection(svc);
  const head = Object.entries({ Host: 'x', 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  c.socket.write(`${requestLine} HTTP/1.1\r\n${head}\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  for (let sent = 0; sent < BIG && !c.socket.destroyed; sent += chunk.length) {
    c.socket.write(`${chunk.length.toString(16)}\r\n`);
    c.socket.write(chunk);
    // Bounded: a server that stops reading must not hang the test (it then fails on the statuses).
    if (!c.socket.write('\r\n')) await Promise.race([new Promise((r) => c.socket.once('drain', r).once('close', r)), sleep(30_000)]);
  }
  c.socket.write('0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await c.until(2);
  c.socket.destroy();
  return { statuses: c.statuses(), received: c.received() };
};

refused('after an oversize chunked body on the admin API, the next request on the connection is answered', async ({ svc }) => {
  const r = await oversizeThenNext(svc, 'POST /api/admin/objects', { Authorization: `Bearer ${svc.adminToken}` });
  assert.equal(r.statuses, [413, 200], r.received.slice(0, 400));
});

refused('after an oversize chunked body on the file tags endpoint, the next request on the connection is answered', async ({ svc }) => {
  const file = await stored(svc, 'tagged bytes', 'tagged.txt', 'text/plain');
  const client = await createFileClient(svc, '/api/v0-file/tags/');
  const r = await oversizeThenNext(svc, `POST /api/v0-file/tags/${file.digest}`, { Authorization: client.authorization });
  assert.equal(r.statuses, [413, 200], r.received.slice(0, 400));
});

refused('after an oversize chunked body on push-data, the next request on the connection is answered', async ({ svc }) => {
  const api = await defineApi(svc, EXAMPLE_CONTROL);
  const r = await oversizeThenNext(svc, `POST /api/push-data/${api.url}`, { Authorization: `Basic ${Buffer.from(`svc:${api.key}`).toString('base64')}` });
  assert.equal(r.statuses, [413, 200], r.received.slice(0, 400));
});

refused('a Content-Length over the limit is refused and the body that follows is drained', async ({ svc }) => {
  const c = rawConnection(svc);
  const body = Buffer.alloc(BIG, 0x20);
  c.socket.write(
    `POST /api/admin/objects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${svc.adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  c.socket.write(body);
  c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await c.until(2);
  c.socket.destroy();
  assert.equal(c.statuses(), [413, 200]);
});

refused.run();
