import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMongoReadStore } from '../../src/projections/adapters/mongo-read-store.ts';
import { readStoreContract } from './read-store.contract.ts';

const uri = process.env.SVC_TEST_MONGODB;

if (!uri) {
  console.log('skipped: MongoDB contract suite (no server; set SVC_TEST_MONGODB=mongodb://host:27017/?replicaSet=rs0 to run it)');
} else {
  readStoreContract('MongoDB', async () => {
    const dbName = `svc_test_${randomBytes(6).toString('hex')}`;
    const store = await openMongoReadStore(uri, { dbName });
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
