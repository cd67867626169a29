import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { Binary, GridFSBucket, MongoClient, ObjectId, type Db } from 'mongodb';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { gridFsBlobStore, openGridFsBlobStore } from '../../src/blobs/adapters/gridfs-blob-store.ts';
import { openBlobStore } from '../../src/app/open-blob-store.ts';
import { connectMongo, type MongoConnection } from '../../src/drivers/mongodb.ts';
import { MongoReadStore } from '../../src/projections/adapters/mongo-read-store.ts';
import { blobStoreContract } from './blob-store.contract.ts';

const uri = process.env.SVC_TEST_MONGODB;

/** Uploads still recorded as under way, and chunks whose files document does not exist. */
const partialUploads = async (db: Db, bucket = 'blobs'): Promise<number> => {
  const records = await db.collection(`${bucket}.uploads`).countDocuments();
  const [orphans] = await db
    .collection(`${bucket}.chunks`)
    .aggregate<{ n: number }>([
      { $group: { _id: '$files_id' } },
      { $lookup: { from: `${bucket}.files`, localField: '_id', foreignField: '_id', as: 'file' } },
      { $match: { file: { $size: 0 } } },
      { $count: 'n' },
    ])
    .toArray();
  return records + (orphans?.n ?? 0);
};

const dropDatabase = async (dbName: string) => {
  const client = await new MongoClient(uri!).connect();
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
};

const testDbName = () => `svc_test_${randomBytes(6).toString('hex')}`;

if (!uri) {
  console.log('skipped: GridFS blob-store contract suite, its orphan sweep and the shared client (no server; set SVC_TEST_MONGODB=... to run them)');
} else {
  blobStoreContract('GridFS', async () => {
    const dbName = testDbName();
    // Small chunks so that ranges and multi-chunk files cross chunk boundaries.
    const store = await openGridFsBlobStore(uri, { dbName, chunkSizeBytes: 64 * 1024 });
    const probe = await connectMongo(uri, dbName);
    const close = async () => {
      await store.close();
      await probe.client.close();
      await dropDatabase(dbName);
    };
    return { store, partialUploads: () => partialUploads(probe.db), close };
  }).run();

  const sweep = suite<{ conn: MongoConnection; dbName: string }>('GridFS: what crashed uploads left behind is swept when the store opens', {} as never);
  sweep.before.each(async (ctx) => {
    ctx.dbName = testDbName();
    ctx.conn = await connectMongo(uri, ctx.dbName);
  });
  sweep.after.each(async (ctx) => {
    await ctx.conn.client.close();
    await dropDatabase(ctx.dbName);
  });

  sweep('chunks without a files document, uploads never renamed and lost duplicates go; stored blobs and fresh uploads stay', async ({ conn: { db } }) => {
    const orphanAgeMs = 60_000;
    const options = { chunkSizeBytes: 1024, orphanAgeMs };
    const store = await gridFsBlobStore(db, options);
    const bucket = new GridFSBucket(db, { bucketName: 'blobs', chunkSizeBytes: 1024 });
    const records = db.collection<{ _id: ObjectId; startedAt: Date }>('blobs.uploads');
    const old = new Date(Date.now() - 2 * orphanAgeMs);
    const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    const upload = async (id: ObjectId, name: string, bytes: Buffer) => {
      const stream = bucket.openUploadStreamWithId(id, name);
      stream.end(bytes);
      await finished(stream);
    };

    const kept = randomBytes(5000);
    const stored = await store.put(Readable.from([kept]));
    // A process died mid-upload: its record and some chunks, no files document.
    const midway = new ObjectId();
    await records.insertOne({ _id: midway, startedAt: old });
    await db.collection('blobs.chunks').insertMany([0, 1].map((n) => ({ files_id: midway, n, data: new Binary(randomBytes(1024)) })));
    // ... after the upload completed, before it was renamed to its digest.
    const unnamed = new ObjectId();
    await records.insertOne({ _id: unnamed, startedAt: old });
    await upload(unnamed, `upload-${unnamed.toHexString()}`, randomBytes(3000));
    // ... after renaming a copy of bytes already stored, before deleting it.
    const duplicate = new ObjectId();
    await records.insertOne({ _id: duplicate, startedAt: old });
    await upload(duplicate, stored.digest, kept);
    // ... after renaming the only copy, before forgetting the upload: a stored blob.
    const onlyBytes = randomBytes(2000);
    const only = new ObjectId();
    await records.insertOne({ _id: only, startedAt: old });
    await upload(only, sha256(onlyBytes), onlyBytes);
    // An upload under way in another process.
    const fresh = new ObjectId();
    await records.insertOne({ _id: fresh, startedAt: new Date() });
    await db.collection('blobs.chunks').insertOne({ files_id: fresh, n: 0, data: new Binary(randomBytes(1024)) });
    // A completed, never renamed upload of a version that did not record uploads.
    const legacy = new ObjectId();
    await db.collection('blobs.files').insertOne({ _id: legacy, length: 10, chunkSize: 1024, uploadDate: old, filename: 'upload-legacy' });
    await db.collection('blobs.chunks').insertOne({ files_id: legacy, n: 0, data: new Binary(randomBytes(10)) });

    // Opening the store again (a restart) sweeps.
    const reopened = await gridFsBlobStore(db, options);
    const chunksOf = (id: ObjectId) => db.collection('blobs.chunks').countDocuments({ files_id: id });
    const fileOf = (id: ObjectId) => db.collection('blobs.files').countDocuments({ _id: id });
    for (const id of [midway, unnamed, duplicate, legacy]) {
      assert.is(await chunksOf(id), 0, `chunks of ${id.toHexString()}`);
      assert.is(await fileOf(id), 0, `files document of ${id.toHexString()}`);
    }
    assert.ok(await reopened.exists(stored), 'the stored blob stays');
    assert.ok(await reopened.exists({ digest: sha256(onlyBytes), size: onlyBytes.length }), 'a renamed only copy is a stored blob');
    assert.is(await fileOf(only), 1);
    assert.is(await chunksOf(fresh), 1, 'a fresh upload stays');
    assert.equal((await records.find().toArray()).map((r) => r._id.toHexString()), [fresh.toHexString()]);
    const read: Buffer[] = [];
    for await (const chunk of await reopened.get(stored)) read.push(chunk as Buffer);
    assert.equal(Buffer.concat(read), kept);
  });

  sweep.run();

  const shared = suite('GridFS and the read store share the process’s one client');
  shared('the blob store opened beside a MongoDB read store sends its commands on the read store’s client', async () => {
    const dbName = testDbName();
    const conn = await connectMongo(uri, dbName, { monitorCommands: true });
    const seen = new Set<string>();
    conn.client.on('commandStarted', (event) => seen.add(String(event.command[event.commandName])));
    try {
      const reads = new MongoReadStore(conn.db);
      await reads.ensureCollection({ name: 'things', indexes: [] });
      await reads.upsert('things', { id: 'a' });
      const blobs = await openBlobStore({ dataDir: '/nonexistent' }, { mongo: conn });
      await blobs.put(Readable.from([randomBytes(100)]));
      assert.ok(seen.has('things'), 'the read store used the client');
      assert.ok(seen.has('blobs.files'), 'GridFS used the same client');
      // Neither store owns the shared client: closing them leaves it usable.
      await reads.close();
      await blobs.close();
      assert.ok(await conn.db.collection('things').findOne({ _id: 'a' as never }));
    } finally {
      await conn.client.close();
      await dropDatabase(dbName);
    }
  });
  shared.run();
}
