/**
 * Issue 6 end to end, through HTTP on a loopback port: storing files (`POST /api/admin/files`),
 * dedup, every property, `GET /api/v0-file/metadata/<digest>` with and without fileSize, tags, and
 * every error. Downloads are in download.test.ts, upload limits in upload-limits.test.ts.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { FileDoc } from '../../../src/projections/read-models.ts';
import { avif, gif, jpeg, pdf, png, random, rotatedJpeg, tiff, webp } from '../../support/file-samples.ts';
import { ISO_MS, ManualClock } from '../../support/fixtures.ts';
import {
  BASE_URL,
  createFileClient,
  expectError,
  sha256,
  startFilesService,
  stored,
  upload,
  type FileClient,
  type FileMetadata,
  type FilesService,
} from './support.ts';

interface Ctx {
  svc: FilesService;
  clock: ManualClock;
  client: FileClient;
  photo: FileMetadata;
  photoBytes: Buffer;
}
const test = suite<Ctx>('File API v0 (end to end)', {} as Ctx);
const START = Date.parse('2026-05-01T10:00:00.123Z');

test.before(async (ctx) => {
  ctx.clock = new ManualClock(START);
  ctx.svc = await startFilesService({ clock: ctx.clock.fn });
  ctx.client = await createFileClient(ctx.svc);
  ctx.photoBytes = await png(300, 200);
  ctx.photo = await stored(ctx.svc, ctx.photoBytes, 'holiday photo.png', 'image/png');
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

const metadata = (client: FileClient, digest: string, query = '') => client.get(`/api/v0-file/metadata/${digest}${query}`);
const blobFiles = (svc: FilesService) =>
  readdirSync(join(svc.config.dataDir, 'files'), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);

test('upload: 201 with the file metadata, a Location, the digest of the bytes and the recorded time', async ({ svc, photo, photoBytes }) => {
  const r = await upload(svc, random(2000, 42), 'notes.bin', 'application/octet-stream');
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body), ['digest', 'fileSize', 'mimeType', 'filename', 'createdAt', 'properties', 'tags']);
  assert.is(r.body.digest, sha256(random(2000, 42)));
  assert.is(r.body.fileSize, 2000);
  assert.is(r.body.mimeType, 'application/octet-stream');
  assert.is(r.body.filename, 'notes.bin');
  assert.is(r.body.createdAt, new Date(START).toISOString());
  assert.match(r.body.createdAt, ISO_MS);
  assert.equal(r.body.properties, {});
  assert.equal(r.body.tags, {});
  assert.is(r.headers.get('location'), `/api/v0-file/metadata/${r.body.digest}?fileSize=2000`);
  assert.is(photo.digest, sha256(photoBytes));
  assert.is(photo.fileSize, photoBytes.length);
});

test('upload: the FileStored event is in the log on stream file-<digest>-<size>', async ({ svc, photo }) => {
  const events = [];
  for await (const e of svc.engines.events.readStream(`file-${photo.digest}-${photo.fileSize}`)) events.push(e);
  assert.is(events.length, 1);
  assert.is(events[0]!.type, 'FileStored');
  assert.equal(events[0]!.data, {
    digest: photo.digest,
    fileSize: photo.fileSize,
    mimeType: 'image/png',
    filename: 'holiday photo.png',
    properties: (await svc.engines.reads.get<FileDoc>('files', `${photo.digest}-${photo.fileSize}`))!.properties,
  });
  assert.is(events[0]!.metadata.actor, 'admin');
});

test('dedup: the same bytes again answer 200 with the first metadata, record nothing and keep one copy', async ({ svc, photo, photoBytes }) => {
  const before = blobFiles(svc).length;
  const again = await upload(svc, photoBytes, 'renamed.png', 'image/jpeg');
  assert.is(again.status, 200);
  assert.equal(again.body, photo, 'the first upload name and type stand');
  assert.is(blobFiles(svc).length, before, 'no new blob on disk');
  assert.is(blobFiles(svc).filter((n) => n === photo.digest).length, 1);
  let count = 0;
  for await (const _ of svc.engines.events.readStream(`file-${photo.digest}-${photo.fileSize}`)) count++;
  assert.is(count, 1);
  assert.equal(readdirSync(join(svc.config.dataDir, 'files', 'tmp')), [], 'no temporary file left');
});

test('properties: PNG dimensions and a 64 px PNG thumbnail that is stored as a blob too', async ({ svc, photo }) => {
  assert.equal(photo.properties, { dimensions: { width: 300, height: 200, units: 'px' }, thumbnail: { width: 64, height: 43, mimeType: 'image/png' } });
  const doc = (await svc.engines.reads.get<FileDoc>('files', `${photo.digest}-${photo.fileSize}`))!;
  const thumb = doc.properties.thumbnail!;
  const bytes = readFileSync(join(svc.config.dataDir, 'files', thumb.digest.slice(0, 2), thumb.digest.slice(2, 4), thumb.digest));
  assert.is(bytes.length, thumb.fileSize);
  assert.is(sha256(bytes), thumb.digest);
  const meta = await sharp(bytes).metadata();
  assert.equal([meta.format, meta.width, meta.height], ['png', 64, 43]);
});

test('properties: JPEG (with EXIF orientation), GIF, WebP, TIFF, AVIF and PDF', async ({ svc }) => {
  const cases: [Buffer, string, string, Record<string, unknown>][] = [
    [await jpeg(400, 300), 'image/jpeg', 'a.jpg', { dimensions: { width: 400, height: 300, units: 'px' }, thumbnail: { width: 64, height: 48, mimeType: 'image/png' } }],
    [await rotatedJpeg(300, 200), 'image/jpeg', 'turned.jpg', { dimensions: { width: 200, height: 300, units: 'px' }, thumbnail: { width: 43, height: 64, mimeType: 'image/png' } }],
    [await gif(120, 80), 'image/gif', 'a.gif', { dimensions: { width: 120, height: 80, units: 'px' }, thumbnail: { width: 64, height: 43, mimeType: 'image/png' } }],
    [await webp(90, 160), 'image/webp', 'a.webp', { dimensions: { width: 90, height: 160, units: 'px' }, thumbnail: { width: 36, height: 64, mimeType: 'image/png' } }],
    [await tiff(40, 30), 'image/tiff', 'a.tiff', { dimensions: { width: 40, height: 30, units: 'px' }, thumbnail: { width: 40, height: 30, mimeType: 'image/png' } }],
    [await avif(64, 48), 'image/avif', 'a.avif', { dimensions: { width: 64, height: 48, units: 'px' }, thumbnail: { width: 64, height: 48, mimeType: 'image/png' } }],
    [await pdf(4), 'application/pdf', 'a.pdf', { numberOfPages: 4, dimensions: { width: 595, height: 842, units: 'pt' }, thumbnail: { width: 45, height: 64, mimeType: 'image/png' } }],
  ];
  for (const [bytes, type, name, properties] of cases) {
    const file = await stored(svc, bytes, name, type);
    assert.equal(file.properties, properties, name);
  }
});

test('properties: a PDF gets a PNG thumbnail of its first page, stored as a blob, showing what the page draws', async ({ svc }) => {
  const file = await stored(svc, await pdf(2, [595, 842], { draw: '0 0 0 rg 0 421 595 421 re f' }), 'top half black.pdf', 'application/pdf');
  assert.equal(file.properties, { numberOfPages: 2, dimensions: { width: 595, height: 842, units: 'pt' }, thumbnail: { width: 45, height: 64, mimeType: 'image/png' } });
  const thumb = (await svc.engines.reads.get<FileDoc>('files', `${file.digest}-${file.fileSize}`))!.properties.thumbnail!;
  const bytes = readFileSync(join(svc.config.dataDir, 'files', thumb.digest.slice(0, 2), thumb.digest.slice(2, 4), thumb.digest));
  assert.is(sha256(bytes), thumb.digest);
  const { data, info } = await sharp(bytes).greyscale().raw().toBuffer({ resolveWithObject: true });
  assert.equal([info.width, info.height], [45, 64]);
  assert.ok(data[16 * 45 + 22]! < 40, 'the top half is drawn black');
  assert.ok(data[48 * 45 + 22]! > 215, 'the bottom half is white paper');
});

test('properties: bytes that are not what the type claims still store, without properties', async ({ svc }) => {
  const cases: [Buffer | string, string][] = [
    ['this is text, not a picture', 'image/png'],
    [await png(10, 10), 'application/pdf'],
    [await jpeg(10, 10), 'image/gif'],
    ['%PDF-1.4 but nothing else', 'application/pdf'],
    [Buffer.concat([Buffer.from('%PDF-1.7\n'), random(20_000, 5)]), 'application/pdf'],
    [random(3000, 7), 'image/jpeg'],
  ];
  for (const [bytes, type] of cases) {
    const file = await stored(svc, bytes, 'odd', type);
    assert.equal(file.properties, {}, type);
    assert.is(file.mimeType, type, 'the declared type is still recorded');
  }
  const svg = await stored(svc, '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>', 'a.svg', 'image/svg+xml');
  assert.equal(svg.properties, {}, 'no reader for SVG');
});

test('upload: JSON bytes are stored raw (no JSON body parsing on this admin route)', async ({ svc }) => {
  const text = '{ "not": "parsed",\n  "spaces": true }';
  const file = await stored(svc, text, 'data.json', 'application/json');
  assert.is(file.digest, sha256(Buffer.from(text)));
  assert.is(file.fileSize, Buffer.byteLength(text));
  assert.is(file.mimeType, 'application/json');
});

test('upload: Content-Type is lower-cased without parameters; none means application/octet-stream', async ({ svc }) => {
  assert.is((await stored(svc, 'hello text', 'a.txt', 'Text/Plain; charset=UTF-8')).mimeType, 'text/plain');
  assert.is((await stored(svc, random(10, 3), 'none')).mimeType, 'application/octet-stream');
});

test('upload: an empty file and a non-ASCII filename are fine', async ({ svc }) => {
  const empty = await stored(svc, '', 'empty.txt', 'text/plain');
  assert.is(empty.fileSize, 0);
  assert.is(empty.digest, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  const named = await stored(svc, random(20, 9), 'résumé 日本 (v2).txt', 'text/plain');
  assert.is(named.filename, 'résumé 日本 (v2).txt');
});

test('upload errors: no filename, bad filename, malformed Content-Type (400); no admin token (401)', async ({ svc }) => {
  expectError(await upload(svc, 'x', null, 'text/plain'), 400, 'svc:file:bad-filename');
  expectError(await upload(svc, 'x', '', 'text/plain'), 400, 'svc:file:bad-filename');
  expectError(await upload(svc, 'x', 'dir/name.txt', 'text/plain'), 400, 'svc:file:bad-filename');
  expectError(await upload(svc, 'x', 'a\u0001b', 'text/plain'), 400, 'svc:file:bad-filename');
  expectError(await upload(svc, 'x', 'y'.repeat(256), 'text/plain'), 400, 'svc:file:bad-filename');
  expectError(await upload(svc, 'x', 'ok.txt', 'not a media type'), 400, 'svc:file:bad-content-type');
  expectError(await upload(svc, 'x', 'ok.txt', 'text/plain', { admin: false }), 401, 'svc:api:admin:unauthorised');
  const wrongMethod = await svc.request('/api/admin/files', { method: 'GET' });
  assert.is(wrongMethod.status, 405);
});

test('metadata: success kind, the file as uploaded, and a signed download valid for 4 h (reported 16 s early)', async ({ client, photo, clock }) => {
  const r = await metadata(client, photo.digest);
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body), ['success', 'kind', 'file', 'download']);
  assert.is(r.body.success, true);
  assert.is(r.body.kind, 'svc:api-v0:file:metadata');
  assert.equal(r.body.file, photo);
  assert.equal(Object.keys(r.body.download), ['url', 'validUntil']);
  assert.ok(r.body.download.url.startsWith(`${BASE_URL}/`), r.body.download.url);
  assert.match(r.body.download.validUntil, ISO_MS);
  assert.is(Date.parse(r.body.download.validUntil), (Math.floor(clock.now / 1000) + 14_400 - 16) * 1000);
});

test('metadata: fileSize must match when given; upper-case digests are accepted', async ({ client, photo }) => {
  const ok = await metadata(client, photo.digest, `?fileSize=${photo.fileSize}`);
  assert.is(ok.status, 200);
  assert.equal(ok.body.file, photo);
  expectError(await metadata(client, photo.digest, `?fileSize=${photo.fileSize + 1}`), 404, 'svc:api-v0:file:no-such-file');
  expectError(await metadata(client, photo.digest, '?fileSize=0'), 404, 'svc:api-v0:file:no-such-file');
  assert.equal((await metadata(client, photo.digest.toUpperCase())).body.file, photo);
});

test('metadata errors: unknown digest 404; malformed digest or fileSize 400 JSON; wrong method 405', async ({ client, photo, svc }) => {
  const message = expectError(await metadata(client, 'f'.repeat(64)), 404, 'svc:api-v0:file:no-such-file');
  assert.match(message, 'f'.repeat(64));
  for (const digest of ['f'.repeat(63), 'f'.repeat(65), `${'f'.repeat(63)}g`, 'not-a-digest']) {
    expectError(await metadata(client, digest), 400, 'svc:api-v0:generic:bad-request');
  }
  for (const size of ['-1', '1.5', 'abc', '', '1e3', '99999999999999999999']) {
    expectError(await metadata(client, photo.digest, `?fileSize=${encodeURIComponent(size)}`), 400, 'svc:api-v0:generic:bad-request');
  }
  const post = await svc.request(`/api/v0-file/metadata/${photo.digest}`, { method: 'POST', admin: false, headers: { Authorization: client.authorization } });
  assert.is(post.status, 405);
});

test('authentication as the other read APIs: none 401, bad key 403, key for another path 403, key for /api/v0-file/ ok', async ({ svc, photo }) => {
  const path = `/api/v0-file/metadata/${photo.digest}`;
  const none = await svc.request(path, { admin: false });
  assert.is(none.status, 401);
  assert.is(((await none.json()) as any).kind, 'svc:auth:credentials-required');
  const bad = await svc.request(path, { admin: false, headers: { Authorization: `Basic ${Buffer.from('svc:not-a-real-key-but-long-enough').toString('base64')}` } });
  assert.is(bad.status, 403);
  assert.is(((await bad.json()) as any).kind, 'svc:auth:invalid-api-key');
  const other = await createFileClient(svc, '/api/v0-object/');
  expectError(await other.get(path), 403, 'svc:auth:invalid-api-key');
  const scoped = await createFileClient(svc, '/api/v0-file/');
  assert.is((await scoped.get(path)).status, 200);
  const tags = await scoped.get(`/api/v0-file/tags/${photo.digest}`);
  assert.is(tags.status, 200);
});

test('tags: read, set, change and delete (null), shown in the metadata; no-op changes record nothing', async ({ svc, client }) => {
  // Tag writes need a key issued for them (README: what a read key can see).
  const writer = await createFileClient(svc, '/api/v0-file/tags/');
  const file = await stored(svc, random(100, 11), 'tagged.bin');
  const tagsPath = `/api/v0-file/tags/${file.digest}`;
  const read = await client.get(tagsPath);
  assert.equal(read.body, { success: true, kind: 'svc:api-v0:file:tags', tags: {} });

  const set = await writer.post(tagsPath, { tags: { project: 'apollo', stage: 'draft' } });
  assert.is(set.status, 200);
  assert.equal(set.body, { success: true, kind: 'svc:api-v0:file:tags', tags: { project: 'apollo', stage: 'draft' } });
  const changed = await writer.post(`${tagsPath}?fileSize=${file.fileSize}`, { tags: { stage: null, reviewer: 'ada' } });
  assert.equal(changed.body.tags, { project: 'apollo', reviewer: 'ada' });
  assert.equal((await client.get(tagsPath)).body.tags, { project: 'apollo', reviewer: 'ada' });
  assert.equal((await metadata(client, file.digest)).body.file.tags, { project: 'apollo', reviewer: 'ada' });

  const count = async () => {
    let n = 0;
    for await (const _ of svc.engines.events.readStream(`file-${file.digest}-${file.fileSize}`)) n++;
    return n;
  };
  const before = await count();
  assert.equal((await writer.post(tagsPath, { tags: { project: 'apollo', absent: null } })).body.tags, { project: 'apollo', reviewer: 'ada' });
  assert.is(await count(), before, 'nothing changed, nothing recorded');
});

test('tags errors: unknown file or size 404; bad digest/size 400; bad bodies 400/415; no key 401', async ({ svc, client, photo }) => {
  // Tag writes need a key issued for them (README: what a read key can see).
  const writer = await createFileClient(svc, '/api/v0-file/tags/');
  const tagsPath = `/api/v0-file/tags/${photo.digest}`;
  expectError(await client.get(`/api/v0-file/tags/${'e'.repeat(64)}`), 404, 'svc:api-v0:file:no-such-file');
  expectError(await writer.post(`/api/v0-file/tags/${'e'.repeat(64)}`, { tags: { a: 'b' } }), 404, 'svc:api-v0:file:no-such-file');
  expectError(await client.get(`${tagsPath}?fileSize=1`), 404, 'svc:api-v0:file:no-such-file');
  expectError(await writer.post(`${tagsPath}?fileSize=1`, { tags: { a: 'b' } }), 404, 'svc:api-v0:file:no-such-file');
  expectError(await client.get('/api/v0-file/tags/xyz'), 400, 'svc:api-v0:generic:bad-request');
  expectError(await client.get(`${tagsPath}?fileSize=-3`), 400, 'svc:api-v0:generic:bad-request');
  for (const body of [{ tags: { a: 1 } }, { tags: 'a' }, { tags: ['a'] }, {}, []]) {
    expectError(await writer.post(tagsPath, body), 400, 'svc:api:bad-request');
  }
  expectError(await writer.post(tagsPath, { tags: { '': 'x' } }), 400, 'svc:api-v0:file:bad-tags');
  expectError(await writer.post(tagsPath, '{"tags": {'), 400, 'svc:api:malformed-json');
  expectError(await writer.post(tagsPath, 'tags=a', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'svc:api:unsupported-media-type');
  const noKey = await svc.request(tagsPath, { method: 'POST', admin: false, body: '{"tags":{}}', headers: { 'Content-Type': 'application/json' } });
  assert.is(noKey.status, 401);
  assert.equal((await client.get(tagsPath)).body.tags, {}, 'no error changed anything');
});

test('files can be looked up by digest alone after many uploads (first stored wins)', async ({ svc, client }) => {
  const bytes = random(500, 99);
  const first = await stored(svc, bytes, 'first.bin');
  await stored(svc, bytes, 'second.bin', undefined, true);
  assert.is((await metadata(client, first.digest)).body.file.filename, 'first.bin');
  assert.ok(existsSync(join(svc.config.dataDir, 'files', first.digest.slice(0, 2), first.digest.slice(2, 4), first.digest)));
});

test.run();
