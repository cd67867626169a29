import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '../support/tmp.ts';

const test = suite('Graceful shutdown');

test('SIGTERM lets an in-flight request finish, then the process exits cleanly', async () => {
  const tmp = tempDir('svc-shutdown');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: tmp.dir, SVC_ADMIN_TOKEN: 'shutdown-test-token-123456' },
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
  const body = JSON.stringify({ type: 'svc:type:person', attributes: { 'dc:attribute:title': 'In flight' } });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/admin/objects', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Authorization: 'Bearer shutdown-test-token-123456' } },
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

test.run();
