import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';

/**
 * One client per process: the read store and GridFS share it (the driver pools connections per
 * client, so a second client doubles the connections and monitoring for nothing).
 */
export interface MongoConnection {
  readonly client: MongoClient;
  readonly db: Db;
}

/**
 * Connects eagerly (an unreachable server or a bad URI fails at start-up) and opens the URI's
 * database, or `svc` when the URI names none: the driver would default to `test`.
 * `ignoreUndefined` matches JSON, which the read store's documents are: `{ a: undefined }` drops
 * `a` instead of storing null (GridFS writes no undefined fields).
 */
export const connectMongo = async (uri: string, dbName?: string, options?: MongoClientOptions): Promise<MongoConnection> => {
  const client = new MongoClient(uri, { ignoreUndefined: true, ...options });
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new Error(`Cannot connect to MongoDB: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const uriHasDb = /^mongodb(?:\+srv)?:\/\/[^/]*\/[^?]+/.test(uri);
  return { client, db: client.db(dbName ?? (uriHasDb ? client.options.dbName : 'svc')) };
};
