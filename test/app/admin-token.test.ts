import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '../support/tmp.ts';

const test = suite('admin token on first start');

/** Starts `npm start`'s entry as an operator would, waits for /healthz, stops it, and returns everything it wrote. */
const firstStart = (dataDir: string) =>
  new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_HOST: '127.0.0.1', PORT: '0', SVC_LOG_LEVEL: 'info' };
    delete env.SVC_ADMIN_TOKEN;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let stopping = false;
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no 'service started' within 60 s; stdout: ${stdout} stderr: ${stderr}`));
    }, 60_000);
    child.stdout.on('data', (d) => {
      stdout += d;
      // The started line carries the port; the service answers from then on.
      const port = /"port":(\d+)[^\n]*"msg":"service started"/.exec(stdout)?.[1];
      if (port && !stopping) {
        stopping = true;
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (res) => {
            assert.is(res.status, 200);
            child.kill('SIGTERM');
          },
          (e) => {
            child.kill('SIGKILL');
            reject(e);
          },
        );
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      clearTimeout(deadline);
      if (stopping) resolve({ stdout, stderr });
      else reject(new Error(`the service exited (${code}) before it started: ${stderr}`));
    });
  });

test('is written only to its 0600 file: stdout and stderr carry the path, never the token', async () => {
  const tmp = tempDir('svc-admin-token');
  try {
    const dataDir = join(tmp.dir, 'data');
    const { stdout, stderr } = await firstStart(dataDir);
    const file = join(dataDir, 'admin-token');
    const token = readFileSync(file, 'utf8').trim();
    assert.ok(token.length >= 32, 'a generated token is in the file');
    assert.is((statSync(file).mode & 0o777).toString(8), '600');
    assert.not.ok(stdout.includes(token), 'the token is not on stdout');
    assert.not.ok(stderr.includes(token), 'the token is not on stderr');
    assert.ok(stdout.includes(JSON.stringify(file).slice(1, -1)), `the file's path is logged: ${stdout}`);
    assert.match(stdout, '"msg":"service started"');
  } finally {
    tmp.remove();
  }
});

test.run();
