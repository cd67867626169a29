import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BlobNotFoundError, BlobTooLargeError, InvalidRangeError, type BlobStore } from '../../src/blobs/blob-store.ts';

export interface BlobStoreFixture {
  readonly store: BlobStore;
  /**
   * Uploads left unfinished in the engine's own terms (disk: temporary files; GridFS: uploads still
   * recorded as under way, and chunks without a files document).
   */
  partialUploads(): Promise<number>;
  close(): Promise<void>;
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const readAll = async (stream: Readable): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** A source that yields `bytes` in chunks of `chunk` bytes (like a request body). */
async function* chunked(bytes: Buffer, chunk = 64 * 1024): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
}

async function* failing(bytes: Buffer, error: Error): AsyncGenerator<Buffer> {
  yield bytes;
  throw error;
}

const rejects = async (p: Promise<unknown>, type: new (...a: never[]) => Error): Promise<Error> => {
  try {
    await p;
  } catch (e) {
    assert.instance(e, type, `expected ${type.name}, got ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return e as Error;
  }
  return assert.unreachable(`expected ${type.name}`) as never;
};

/** One behaviour contract for every BlobStore adapter. */
export const blobStoreContract = (name: string, open: () => Promise<BlobStoreFixture>) => {
  const test = suite<{ fx: BlobStoreFixture }>(`BlobStore contract: ${name}`, {} as { fx: BlobStoreFixture });
  test.before(async (ctx) => {
    ctx.fx = await open();
  });
  test.after(async (ctx) => {
    await ctx.fx?.close();
  });

  test('put answers the SHA-256 digest and size; the bytes read back the same', async ({ fx }) => {
    const bytes = randomBytes(100_000);
    const put = await fx.store.put(Readable.from([bytes]));
    assert.equal(put, { digest: sha256(bytes), size: bytes.length, created: true });
    assert.ok(await fx.store.exists(put));
    assert.equal(await readAll(await fx.store.get(put)), bytes);
  });

  test('a source in many chunks (an async iterable) is hashed as a whole', async ({ fx }) => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const put = await fx.store.put(chunked(bytes, 65_536));
    assert.is(put.digest, sha256(bytes));
    assert.is(put.size, bytes.length);
    assert.equal(await readAll(await fx.store.get(put)), bytes);
  });

  test('storing the same bytes again keeps one copy and says it was not created', async ({ fx }) => {
    const bytes = randomBytes(5000);
    const first = await fx.store.put(Readable.from([bytes]));
    const second = await fx.store.put(chunked(bytes, 1000));
    assert.is(first.created, true);
    assert.equal(second, { digest: first.digest, size: first.size, created: false });
    assert.equal(await readAll(await fx.store.get(second)), bytes);
  });

  test('concurrent puts of the same bytes both succeed and leave readable bytes', async ({ fx }) => {
    const bytes = randomBytes(200_000);
    const results = await Promise.all([0, 1, 2].map(() => fx.store.put(chunked(bytes, 10_000))));
    for (const r of results) assert.equal({ digest: r.digest, size: r.size }, { digest: sha256(bytes), size: bytes.length });
    assert.ok(results.some((r) => r.created), 'one of them stored the bytes');
    assert.equal(await readAll(await fx.store.get(results[0]!)), bytes);
  });

  test('an empty blob is a blob', async ({ fx }) => {
    const put = await fx.store.put(Readable.from([]));
    assert.is(put.digest, EMPTY_SHA256);
    assert.is(put.size, 0);
    assert.ok(await fx.store.exists(put));
    assert.is((await readAll(await fx.store.get(put))).length, 0);
  });

  test('get with a range answers exactly those bytes (both ends inclusive)', async ({ fx }) => {
    const bytes = randomBytes(300_000);
    const ref = await fx.store.put(Readable.from([bytes]));
    for (const [start, end] of [
      [0, 0],
      [0, 9],
      [10, 299_999],
      [299_999, 299_999],
      [65_530, 200_000],
      [0, 299_999],
    ] as const) {
      assert.equal(await readAll(await fx.store.get(ref, { start, end })), bytes.subarray(start, end + 1), `${start}-${end}`);
    }
  });

  test('a range outside the blob is refused', async ({ fx }) => {
    const ref = await fx.store.put(Readable.from([randomBytes(100)]));
    await rejects(fx.store.get(ref, { start: 0, end: 100 }), InvalidRangeError);
    await rejects(fx.store.get(ref, { start: 50, end: 40 }), InvalidRangeError);
    await rejects(fx.store.get(ref, { start: -1, end: 10 }), InvalidRangeError);
  });

  test('unknown blobs, and known digests with another size, are not found', async ({ fx }) => {
    const ref = await fx.store.put(Readable.from([randomBytes(64)]));
    const unknown = { digest: sha256(randomBytes(8)), size: 8 };
    assert.is(await fx.store.exists(unknown), false);
    assert.is(await fx.store.exists({ digest: ref.digest, size: 65 }), false);
    assert.is(await fx.store.exists({ digest: 'not-a-digest', size: 1 }), false);
    await rejects(fx.store.get(unknown), BlobNotFoundError);
    await rejects(fx.store.get({ digest: ref.digest, size: 65 }), BlobNotFoundError);
  });

  test('a source longer than the limit fails with BlobTooLargeError and nothing is kept', async ({ fx }) => {
    const bytes = randomBytes(10_001);
    const error = await rejects(fx.store.put(chunked(bytes, 1000), { limit: 10_000 }), BlobTooLargeError);
    assert.is((error as BlobTooLargeError).limit, 10_000);
    assert.is(await fx.store.exists({ digest: sha256(bytes), size: bytes.length }), false);
    const exact = await fx.store.put(chunked(bytes.subarray(0, 10_000), 1000), { limit: 10_000 });
    assert.is(exact.size, 10_000, 'exactly the limit is accepted');
  });

  test('a source that fails mid-way rejects with its error and nothing is kept', async ({ fx }) => {
    const bytes = randomBytes(50_000);
    const boom = new Error('client went away');
    try {
      await fx.store.put(failing(bytes, boom));
      assert.unreachable('put should fail');
    } catch (e) {
      assert.is((e as Error).message, 'client went away');
    }
    assert.is(await fx.store.exists({ digest: sha256(bytes), size: bytes.length }), false);
  });

  test('failed, oversize and duplicate puts leave no partial upload behind', async ({ fx }) => {
    const bytes = randomBytes(200_000);
    await fx.store.put(chunked(bytes, 10_000), { limit: 100_000 }).catch(() => undefined);
    await fx.store.put(failing(bytes, new Error('gone'))).catch(() => undefined);
    await fx.store.put(chunked(bytes, 10_000));
    await fx.store.put(chunked(bytes, 10_000));
    await Promise.all([0, 1].map(() => fx.store.put(chunked(bytes, 30_000))));
    assert.is(await fx.partialUploads(), 0);
  });

  test('different blobs do not interfere', async ({ fx }) => {
    const a = randomBytes(1234);
    const b = randomBytes(4321);
    const [ra, rb] = await Promise.all([fx.store.put(Readable.from([a])), fx.store.put(Readable.from([b]))]);
    assert.equal(await readAll(await fx.store.get(ra)), a);
    assert.equal(await readAll(await fx.store.get(rb)), b);
  });

  return test;
};
