import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { openMongoReadStore } from '../../src/projections/adapters/mongo-read-store.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { readStoreContract } from './read-store.contract.ts';

const uri = process.env.SVC_TEST_MONGODB;

if (!uri) {
  console.log('skipped: MongoDB contract suite (no server; set SVC_TEST_MONGODB=mongodb://host:27017/?replicaSet=rs0 to run it)');
} else {
  readStoreContract('MongoDB', async () => {
    const dbName = `svc_test_${randomBytes(6).toString('hex')}`;
    const store = await openMongoReadStore(uri, { dbName });
    const others: ReadStore[] = [];
    const close = async () => {
      // Closing a client twice is harmless (a store the contract closed itself).
      for (const other of others) await other.close();
      await store.close();
      const client = await new MongoClient(uri).connect();
      try {
        await client.db(dbName).dropDatabase();
      } finally {
        await client.close();
      }
    };
    const another = async (options = {}) => {
      const other = await openMongoReadStore(uri, { dbName, ...options });
      others.push(other);
      return other;
    };
    return { store, another, close };
  }).run();
}
