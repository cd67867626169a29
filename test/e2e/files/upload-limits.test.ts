/**
 * Upload limits and interrupted uploads: SVC_FILE_LIMIT refuses larger files with a JSON 413 (both
 * when Content-Length says so up front and when a chunked body passes it), and neither those nor an
 * upload the client abandons leave anything behind.
 */
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { random } from '../../support/file-samples.ts';
import { expectError, sha256, startFilesService, stored, upload, type FilesService } from './support.ts';

const test = suite<{ svc: FilesService }>('file upload limits', {} as { svc: FilesService });
test.before(async (ctx) => {
  ctx.svc = await startFilesService({ env: { SVC_FILE_LIMIT: '64kb' } });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const LIMIT = 64 * 1024;
const leftovers = (svc: FilesService) => readdirSync(join(svc.config.dataDir, 'files', 'tmp'));
const blobCount = (svc: FilesService) =>
  readdirSync(join(svc.config.dataDir, 'files'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;

/** A chunked upload (no Content-Length) sent in pieces; resolves with status and parsed body. */
const chunkedUpload = (svc: FilesService, chunks: Buffer[]) =>
  new Promise<{ status: number; body: any; headers: Record<string, unknown> }>((resolve, reject) => {
    const url = new URL(`${svc.url}/api/admin/files?filename=big.bin`);
    const req = request(url, { method: 'POST', headers: { Authorization: `Bearer ${svc.adminToken}`, 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers }));
    });
    // The server answers 413 and closes while the client may still be writing: the client's EPIPE or
    // ECONNRESET can come before or after the response, so an error only fails the request if no
    // response arrives shortly after it.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error) => {
      setTimeout(() => (answered ? undefined : reject(error)), 2000);
    });
    (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return;
        req.write(chunk);
        await sleep(1);
      }
      req.end();
    })().catch(() => undefined);
  });

test('exactly the limit is accepted', async ({ svc }) => {
  const file = await stored(svc, random(LIMIT, 1), 'exact.bin');
  assert.is(file.fileSize, LIMIT);
});

test('a Content-Length over the limit is refused at once with a JSON 413 that closes the connection', async ({ svc }) => {
  const r = await upload(svc, random(LIMIT + 1, 2), 'big.bin', 'application/octet-stream');
  expectError(r, 413, 'svc:api:payload-too-large');
  assert.is(r.headers.get('connection'), 'close');
  assert.equal(leftovers(svc), []);
});

test('a chunked body that passes the limit is cut off with a JSON 413 and nothing is kept', async ({ svc }) => {
  const before = blobCount(svc);
  const chunks = Array.from({ length: 20 }, (_, i) => random(8 * 1024, 100 + i));
  const r = await chunkedUpload(svc, chunks);
  assert.is(r.status, 413);
  assert.equal([r.body.success, r.body.kind], [false, 'svc:api:payload-too-large']);
  assert.is(blobCount(svc), before);
  assert.equal(leftovers(svc), []);
});

test('a chunked body under the limit stores normally', async ({ svc }) => {
  const chunks = Array.from({ length: 4 }, (_, i) => random(4 * 1024, 200 + i));
  const r = await chunkedUpload(svc, chunks);
  assert.is(r.status, 201);
  assert.is(r.body.digest, sha256(Buffer.concat(chunks)));
  assert.is(r.body.fileSize, 16 * 1024);
});

test('an upload the client abandons half-way leaves no temporary file and stores nothing', async ({ svc }) => {
  const before = blobCount(svc);
  await new Promise<void>((resolve) => {
    const req = request(new URL(`${svc.url}/api/admin/files?filename=gone.bin`), {
      method: 'POST',
      headers: { Authorization: `Bearer ${svc.adminToken}`, 'Content-Length': String(LIMIT) },
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(random(LIMIT / 2, 300));
    setTimeout(() => req.destroy(), 50);
  });
  for (let i = 0; i < 100 && leftovers(svc).length > 0; i++) await sleep(10);
  assert.equal(leftovers(svc), []);
  assert.is(blobCount(svc), before);
  assert.is((await upload(svc, 'still fine', 'after.txt', 'text/plain')).status, 201, 'the server carries on');
});

test.run();
