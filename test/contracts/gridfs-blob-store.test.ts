import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openGridFsBlobStore } from '../../src/blobs/adapters/gridfs-blob-store.ts';
import { blobStoreContract } from './blob-store.contract.ts';

const uri = process.env.SVC_TEST_MONGODB;

if (!uri) {
  console.log('skipped: GridFS blob-store contract suite (no server; set SVC_TEST_MONGODB=... to run it)');
} else {
  blobStoreContract('GridFS', async () => {
    const dbName = `svc_test_${randomBytes(6).toString('hex')}`;
    // Small chunks so that ranges and multi-chunk files cross chunk boundaries.
    const store = await openGridFsBlobStore(uri, { dbName, chunkSizeBytes: 64 * 1024 });
    const close = async () => {
      await store.close();
      const client = await new MongoClient(uri).connect();
      try {
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    };
    return { store, close };
  }).run();
}
