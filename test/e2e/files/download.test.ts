/**
 * Signed downloads end to end: the URL from `GET /api/v0-file/metadata/<digest>` fetched without
 * credentials; headers, HEAD, conditional requests, byte ranges (206, 416), tampering with each
 * part of the URL (403) and expiry with an injected clock.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DownloadSigner } from '../../../src/blobs/signed-urls.ts';
import { random } from '../../support/file-samples.ts';
import { ManualClock } from '../../support/fixtures.ts';
import { BASE_URL, createFileClient, sha256, startFilesService, stored, type FileClient, type FileMetadata, type FilesService } from './support.ts';

interface Ctx {
  svc: FilesService;
  clock: ManualClock;
  client: FileClient;
  bytes: Buffer;
  file: FileMetadata;
  other: FileMetadata;
}
const test = suite<Ctx>('signed downloads (end to end)', {} as Ctx);
const SIZE = 3 * 1024 * 1024 + 123;

test.before(async (ctx) => {
  ctx.clock = new ManualClock(Date.parse('2026-06-01T08:00:00.000Z'));
  ctx.svc = await startFilesService({ clock: ctx.clock.fn });
  ctx.client = await createFileClient(ctx.svc);
  ctx.bytes = random(SIZE, 5);
  ctx.file = await stored(ctx.svc, ctx.bytes, 'Quarterly report é.pdf', 'application/pdf');
  ctx.other = await stored(ctx.svc, random(SIZE, 6), 'other.bin', 'application/octet-stream');
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

/** A fresh signed URL (as the API gives it, under SVC_BASE_URL) and the same URL on the test server. */
const signedUrl = async (client: FileClient, svc: FilesService, file: FileMetadata) => {
  const r = await client.get(`/api/v0-file/metadata/${file.digest}?fileSize=${file.fileSize}`);
  assert.is(r.status, 200);
  return { published: r.body.download.url as string, validUntil: r.body.download.validUntil as string, local: svc.local(r.body.download.url) };
};

const get = (url: string, headers: Record<string, string> = {}, method = 'GET') => fetch(url, { method, headers });
const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());

const expect403 = async (url: string, kind = 'svc:api-v0:file:invalid-download-url', what = url) => {
  const res = await get(url);
  assert.is(res.status, 403, `${what}: status`);
  assert.match(res.headers.get('content-type') ?? '', 'application/json', what);
  const body = (await res.json()) as any;
  assert.equal([body.success, body.kind, typeof body.error?.message], [false, kind, 'string'], what);
  assert.is(res.headers.get('content-disposition'), null, `${what}: no file headers on an error`);
};

test('download: no credentials needed; the bytes with Content-Type, Content-Length, Content-Disposition, ETag', async ({ svc, client, file, bytes }) => {
  const { local } = await signedUrl(client, svc, file);
  const res = await get(local);
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/pdf');
  assert.is(res.headers.get('content-length'), String(SIZE));
  assert.is(res.headers.get('content-disposition'), `attachment; filename="Quarterly report _.pdf"; filename*=UTF-8''Quarterly%20report%20%C3%A9.pdf`);
  assert.is(res.headers.get('etag'), `"${file.digest}"`);
  assert.is(res.headers.get('accept-ranges'), 'bytes');
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  const body = await bytesOf(res);
  assert.is(body.length, SIZE);
  assert.is(sha256(body), file.digest);
  assert.ok(body.equals(bytes));
});

test('download: the URL is opaque but names the file and carries e and s; each metadata call signs afresh', async ({ svc, client, file, clock }) => {
  const a = await signedUrl(client, svc, file);
  const u = new URL(a.published);
  assert.is(u.pathname, `/api/v0-file/download/${file.digest}/${file.fileSize}/Quarterly%20report%20%C3%A9.pdf`);
  assert.equal([...u.searchParams.keys()], ['e', 's']);
  clock.advance(5000);
  const b = await signedUrl(client, svc, file);
  assert.is.not(b.published, a.published);
  assert.is((await get(a.local)).status, 200);
  assert.is((await get(b.local)).status, 200);
});

test('HEAD answers the headers without a body', async ({ svc, client, file }) => {
  const { local } = await signedUrl(client, svc, file);
  const res = await get(local, {}, 'HEAD');
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-length'), String(SIZE));
  assert.is(res.headers.get('content-type'), 'application/pdf');
  assert.is((await bytesOf(res)).length, 0);
});

test('ranges: first bytes, open-ended, suffix, clamped end, one byte; 206 with Content-Range', async ({ svc, client, file, bytes }) => {
  const { local } = await signedUrl(client, svc, file);
  const cases: [string, number, number][] = [
    ['bytes=0-99', 0, 99],
    [`bytes=${SIZE - 1000}-`, SIZE - 1000, SIZE - 1],
    ['bytes=-500', SIZE - 500, SIZE - 1],
    [`bytes=1048570-${SIZE + 5000}`, 1048570, SIZE - 1],
    ['bytes=65536-65536', 65536, 65536],
  ];
  for (const [header, start, end] of cases) {
    const res = await get(local, { Range: header });
    assert.is(res.status, 206, header);
    assert.is(res.headers.get('content-range'), `bytes ${start}-${end}/${SIZE}`, header);
    assert.is(res.headers.get('content-length'), String(end - start + 1), header);
    assert.is(res.headers.get('content-type'), 'application/pdf', header);
    assert.ok((await bytesOf(res)).equals(bytes.subarray(start, end + 1)), header);
  }
});

test('ranges: unsatisfiable is a JSON 416 with Content-Range bytes */size; several ranges or other units get it all', async ({ svc, client, file }) => {
  const { local } = await signedUrl(client, svc, file);
  for (const header of [`bytes=${SIZE}-`, `bytes=${SIZE + 10}-${SIZE + 20}`, 'bytes=10-5', 'bytes=-0']) {
    const res = await get(local, { Range: header });
    assert.is(res.status, 416, header);
    assert.is(res.headers.get('content-range'), `bytes */${SIZE}`, header);
    const body = (await res.json()) as any;
    assert.equal([body.success, body.kind], [false, 'svc:api-v0:file:range-not-satisfiable'], header);
  }
  for (const header of ['bytes=0-1,5-6', 'lines=1-2', 'bytes=x-y']) {
    const res = await get(local, { Range: header });
    assert.is(res.status, 200, header);
    assert.is((await bytesOf(res)).length, SIZE, header);
  }
});

test('conditional requests: If-Range with the ETag gives the range, another tag the whole; If-None-Match 304', async ({ svc, client, file }) => {
  const { local } = await signedUrl(client, svc, file);
  const etag = `"${file.digest}"`;
  assert.is((await get(local, { Range: 'bytes=0-9', 'If-Range': etag })).status, 206);
  const stale = await get(local, { Range: 'bytes=0-9', 'If-Range': '"something-else"' });
  assert.is(stale.status, 200);
  assert.is((await bytesOf(stale)).length, SIZE);
  const notModified = await get(local, { 'If-None-Match': etag });
  assert.is(notModified.status, 304);
  assert.is(notModified.headers.get('etag'), etag);
  assert.is((await get(local, { 'If-None-Match': '"nope"' })).status, 200);
});

test('tampering with any part of the URL gives a JSON 403', async ({ svc, client, file, other }) => {
  const { local } = await signedUrl(client, svc, file);
  const u = new URL(local);
  const e = u.searchParams.get('e')!;
  const s = u.searchParams.get('s')!;
  const base = `${u.origin}/api/v0-file/download`;
  const name = 'Quarterly%20report%20%C3%A9.pdf';
  const flip = (hex: string, i: number) => hex.slice(0, i) + (hex[i] === 'a' ? 'b' : 'a') + hex.slice(i + 1);
  const tampered: [string, string][] = [
    ['digest of another stored file', `${base}/${other.digest}/${file.fileSize}/${name}?e=${e}&s=${s}`],
    ['digest with one character changed', `${base}/${flip(file.digest, 0)}/${file.fileSize}/${name}?e=${e}&s=${s}`],
    ['digest in upper case', `${base}/${file.digest.toUpperCase()}/${file.fileSize}/${name}?e=${e}&s=${s}`],
    ['digest not hex', `${base}/${'z'.repeat(64)}/${file.fileSize}/${name}?e=${e}&s=${s}`],
    ['size', `${base}/${file.digest}/${file.fileSize - 1}/${name}?e=${e}&s=${s}`],
    ['size with a leading zero', `${base}/${file.digest}/0${file.fileSize}/${name}?e=${e}&s=${s}`],
    ['size not a number', `${base}/${file.digest}/big/${name}?e=${e}&s=${s}`],
    ['filename', `${base}/${file.digest}/${file.fileSize}/other.pdf?e=${e}&s=${s}`],
    ['filename missing', `${base}/${file.digest}/${file.fileSize}?e=${e}&s=${s}`],
    ['extra path segment', `${base}/${file.digest}/${file.fileSize}/${name}/more?e=${e}&s=${s}`],
    ['expiry later', `${base}/${file.digest}/${file.fileSize}/${name}?e=${Number(e) + 86_400}&s=${s}`],
    ['expiry earlier', `${base}/${file.digest}/${file.fileSize}/${name}?e=${Number(e) - 1}&s=${s}`],
    ['expiry missing', `${base}/${file.digest}/${file.fileSize}/${name}?s=${s}`],
    ['expiry not a number', `${base}/${file.digest}/${file.fileSize}/${name}?e=soon&s=${s}`],
    ['signature with one character changed', `${base}/${file.digest}/${file.fileSize}/${name}?e=${e}&s=${flip(s, 40)}`],
    ['signature truncated', `${base}/${file.digest}/${file.fileSize}/${name}?e=${e}&s=${s.slice(0, 32)}`],
    ['signature missing', `${base}/${file.digest}/${file.fileSize}/${name}?e=${e}`],
    ['no query at all', `${base}/${file.digest}/${file.fileSize}/${name}`],
    ['signature of another file', `${base}/${file.digest}/${file.fileSize}/${name}?e=${e}&s=${new URL((await signedUrl(client, svc, other)).local).searchParams.get('s')}`],
  ];
  for (const [what, url] of tampered) await expect403(url, undefined, what);
  assert.is((await get(local)).status, 200, 'the genuine URL still works');
});

test('a URL signed with another secret is refused', async ({ svc, file, clock }) => {
  const foreign = new DownloadSigner({ secret: Buffer.from('another-secret-of-at-least-32-characters!'), baseUrl: BASE_URL, validSeconds: 14_400, clock: clock.fn });
  await expect403(svc.local(foreign.sign(file).url), undefined, 'foreign secret');
});

test('expiry (injected clock): valid up to validUntil and to the last second, 403 expired afterwards', async ({ svc, client, file, clock }) => {
  const start = clock.now;
  try {
    const { local, validUntil } = await signedUrl(client, svc, file);
    const expires = Number(new URL(local).searchParams.get('e'));
    assert.is(Date.parse(validUntil), (expires - 16) * 1000, 'validUntil is 16 s before the expiry');
    assert.is(expires - Math.floor(start / 1000), 14_400, 'valid for 4 hours');

    clock.now = Date.parse(validUntil);
    assert.is((await get(local, { Range: 'bytes=0-0' })).status, 206, 'at validUntil');
    clock.now = expires * 1000 - 1;
    assert.is((await get(local, { Range: 'bytes=0-0' })).status, 206, 'a millisecond before expiry');
    clock.now = expires * 1000;
    await expect403(local, 'svc:api-v0:file:download-expired', 'at expiry');
    clock.advance(30 * 86_400_000);
    await expect403(local, 'svc:api-v0:file:download-expired', 'a month later');

    const fresh = await signedUrl(client, svc, file);
    assert.is((await get(fresh.local, { Range: 'bytes=0-0' })).status, 206, 'a new URL works');
  } finally {
    clock.now = start;
  }
});

test('SVC_DOWNLOAD_VALID_SECONDS sets the period', async () => {
  const clock = new ManualClock(Date.parse('2026-06-01T08:00:00.000Z'));
  const svc = await startFilesService({ env: { SVC_DOWNLOAD_VALID_SECONDS: '600' }, clock: clock.fn });
  try {
    const client = await createFileClient(svc);
    const file = await stored(svc, random(100, 1), 'short.bin');
    const { local, validUntil } = await signedUrl(client, svc, file);
    assert.is(validUntil, '2026-06-01T08:09:44.000Z');
    clock.advance(599_999);
    assert.is((await get(local)).status, 200);
    clock.advance(1);
    await expect403(local, 'svc:api-v0:file:download-expired');
  } finally {
    await svc.stop();
  }
});

test('a recorded file whose bytes are gone is a JSON 404, not a broken stream', async ({ svc, client }) => {
  const file = await stored(svc, random(1000, 77), 'doomed.bin');
  const { local } = await signedUrl(client, svc, file);
  rmSync(join(svc.config.dataDir, 'files', file.digest.slice(0, 2), file.digest.slice(2, 4), file.digest));
  const res = await get(local);
  assert.is(res.status, 404);
  assert.is(((await res.json()) as any).kind, 'svc:api-v0:file:no-such-file');
});

test('other methods on a download URL are refused (405)', async ({ svc, client, file }) => {
  const { local } = await signedUrl(client, svc, file);
  assert.is((await fetch(local, { method: 'POST' })).status, 405);
  assert.is((await fetch(local, { method: 'DELETE' })).status, 405);
});

test.run();
