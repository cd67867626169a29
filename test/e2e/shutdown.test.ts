import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '../support/tmp.ts';

const test = suite('Graceful shutdown');

const TOKEN = 'shutdown-test-token-123456';

/**
 * A free port below the kernel's ephemeral range (32768 and up on Linux). After the service closes its
 * listener, a port it was given by `PORT=0` may at once be handed to any other process on the machine
 * that listens on port 0 (other test processes do), and a connection there would look accepted.
 */
const quietPort = async (): Promise<number> => {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
};

/** The real process (src/main.ts) on a fresh data directory; resolves once it listens. */
const spawnService = async () => {
  const tmp = tempDir('svc-shutdown');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: String(await quietPort()), SVC_HOST: '127.0.0.1', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /"port":(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    setTimeout(() => reject(new Error(`service did not start: ${out}`)), 20_000);
  });
  return { tmp, child, exited, port };
};

test('SIGTERM lets an in-flight request finish, then the process exits cleanly', async () => {
  const { tmp, child, exited, port } = await spawnService();
  const body = JSON.stringify({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'In flight' } });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/admin/objects', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: `Bearer ${TOKEN}` } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    // Half the body now, the rest after the signal: the request is in flight when shutdown starts.
    req.write(body.slice(0, 20));
    setTimeout(() => {
      child.kill('SIGTERM');
      setTimeout(() => req.end(body.slice(20)), 300);
    }, 200);
  });
  const { status, text } = await response;
  assert.is(status, 201, text);
  assert.match(text, '"recordVersion":1');
  assert.is(await exited, 0);
  tmp.remove();
});

/** A raw keep-alive connection that keeps what it receives and notes when the server closes it. */
const raw = (port: number) => {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const responses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) [^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)].map((m) => ({ status: Number(m[1]), head: m[2]!.toLowerCase() }));
  const bounded = <T>(p: Promise<T>, what: string) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}; received ${received}`)), 30_000))]);
  return {
    socket,
    closed,
    responses,
    waitFor: (n: number) =>
      bounded(
        new Promise<void>((resolve) => {
          const check = () => (responses().length >= n ? (socket.off('data', check), resolve()) : undefined);
          socket.on('data', check);
          check();
        }),
        `${n} responses`,
      ),
    waitClosed: () => bounded(closed, 'the server to close the connection'),
  };
};

/** What a new connection gets: refused, or (accepted by the kernel) whether anything answers a request on it. */
const newConnection = (port: number) =>
  new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let answer = '';
    s.setEncoding('latin1');
    s.once('connect', () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    s.on('data', (d: string) => (answer += d));
    s.once('close', () => resolve(answer ? `served: ${answer.split('\r\n')[0]}` : 'not served'));
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? 'ECONNREFUSED' : 'not served'));
    setTimeout(() => (s.destroy(), resolve(answer ? `served: ${answer.split('\r\n')[0]}` : 'not served')), 10_000);
  });

test('SIGTERM: idle keep-alive connections close at once, new connections are refused, an in-flight request finishes with Connection: close, exit 0', async () => {
  const { tmp, child, exited, port } = await spawnService();
  // An idle keep-alive connection: one request answered, then nothing.
  const idle = raw(port);
  idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await idle.waitFor(1);
  assert.match(idle.responses()[0]!.head, 'connection: keep-alive');
  // An in-flight request: headers and half the body sent.
  const busy = raw(port);
  const body = JSON.stringify({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'In flight at SIGTERM' } });
  busy.socket.write(
    `POST /api/admin/objects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`,
  );
  // Give the server the headers before the signal (a second connection's answer proves they were read).
  const probe = raw(port);
  probe.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  await probe.waitClosed();

  child.kill('SIGTERM');
  await idle.waitClosed(); // the server has begun shutting down
  assert.is(await newConnection(port), 'ECONNREFUSED', 'no new connection is accepted after SIGTERM');

  // The rest of the body, and a pipelined request that must not be served on this connection.
  busy.socket.write(`${body.slice(20)}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
  await busy.waitFor(1);
  await busy.waitClosed();
  const answers = busy.responses();
  assert.is(answers[0]!.status, 201);
  assert.match(answers[0]!.head, 'connection: close');
  assert.is(answers.length, 1, 'nothing more is served on the connection after the in-flight answer');
  assert.is(await exited, 0);
  tmp.remove();
});

test.run();
