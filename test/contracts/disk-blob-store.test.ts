import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DiskBlobStore, openDiskBlobStore } from '../../src/blobs/adapters/disk-blob-store.ts';
import { blobStoreContract } from './blob-store.contract.ts';
import { tempDir } from '../support/tmp.ts';

blobStoreContract('disk', async () => {
  const tmp = tempDir('svc-blobs');
  const store = await openDiskBlobStore(join(tmp.dir, 'files'));
  const temporary = join(tmp.dir, 'files', 'tmp');
  const partialUploads = async () => (existsSync(temporary) ? readdirSync(temporary).length : 0);
  return { store, partialUploads, close: async () => (await store.close(), tmp.remove()) };
}).run();

/** Every regular file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();

const test = suite<{ root: string; remove(): void; store: DiskBlobStore }>('disk blob store layout', {} as never);
test.before.each(async (ctx) => {
  const tmp = tempDir('svc-blobs');
  ctx.root = join(tmp.dir, 'files');
  ctx.remove = tmp.remove;
  ctx.store = await openDiskBlobStore(ctx.root);
});
test.after.each((ctx) => ctx.remove());

test('blobs live at <root>/ab/cd/<digest> and nothing is left in tmp/', async ({ root, store }) => {
  const put = await store.put(Readable.from([randomBytes(1000)]));
  assert.equal(filesUnder(root), [join(put.digest.slice(0, 2), put.digest.slice(2, 4), put.digest)]);
  assert.is(store.pathOf(put.digest), join(root, put.digest.slice(0, 2), put.digest.slice(2, 4), put.digest));
  assert.equal(readdirSync(join(root, 'tmp')), []);
});

test('the same bytes stored twice (and concurrently) are one file on disk', async ({ root, store }) => {
  const bytes = randomBytes(100_000);
  await store.put(Readable.from([bytes]));
  await Promise.all([store.put(Readable.from([bytes])), store.put(Readable.from([bytes])), store.put(Readable.from([bytes]))]);
  assert.is(filesUnder(root).length, 1);
  assert.is(statSync(store.pathOf((await store.put(Readable.from([bytes]))).digest)).size, bytes.length);
});

test('failed and oversize puts leave no temporary file', async ({ root, store }) => {
  await store.put(Readable.from([randomBytes(5000)]), { limit: 100 }).catch(() => undefined);
  async function* broken() {
    yield randomBytes(10);
    throw new Error('boom');
  }
  await store.put(broken()).catch(() => undefined);
  assert.equal(filesUnder(root), []);
});

test('opening the store sweeps temporary files untouched for over an hour, keeping younger ones', async ({ root }) => {
  // No upload outlives SVC_REQUEST_TIMEOUT_MS (at most an hour), and a live one writes to its file as
  // bytes arrive: a temporary file untouched for an hour belongs to no upload, in any process.
  const old = join(root, 'tmp', 'left-by-a-kill');
  const recent = join(root, 'tmp', 'stalled-upload');
  const fresh = join(root, 'tmp', 'upload-in-progress');
  writeFileSync(old, 'x');
  writeFileSync(recent, 'y');
  writeFileSync(fresh, 'z');
  const minutesAgo = (m: number) => (Date.now() - m * 60_000) / 1000;
  utimesSync(old, minutesAgo(61), minutesAgo(61));
  utimesSync(recent, minutesAgo(50), minutesAgo(50));
  await openDiskBlobStore(root);
  assert.is(existsSync(old), false);
  assert.is(existsSync(recent), true);
  assert.is(existsSync(fresh), true);
});

test('stored blobs are readable by their owner only (0600, in 0700 directories)', async ({ root, store }) => {
  const put = await store.put(Readable.from([randomBytes(100)]));
  const path = store.pathOf(put.digest);
  assert.is(statSync(path).mode & 0o777, 0o600);
  for (const dir of [root, join(root, 'tmp'), join(root, put.digest.slice(0, 2)), join(root, put.digest.slice(0, 2), put.digest.slice(2, 4))]) {
    assert.is(statSync(dir).mode & 0o777, 0o700, dir);
  }
});

test('pathOf refuses anything but a digest (no path tricks)', ({ store }) => {
  assert.throws(() => store.pathOf('../../etc/passwd'));
  assert.throws(() => store.pathOf('A'.repeat(64)));
});

test.run();
