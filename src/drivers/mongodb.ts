import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';

/**
 * Connects eagerly (an unreachable server or a bad URI fails at start-up) and opens the URI's
 * database, or `svc` when the URI names none: the driver would default to `test`.
 */
export const connectMongo = async (uri: string, dbName?: string, options?: MongoClientOptions): Promise<{ client: MongoClient; db: Db }> => {
  const client = new MongoClient(uri, options);
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new Error(`Cannot connect to MongoDB: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const uriHasDb = /^mongodb(?:\+srv)?:\/\/[^/]*\/[^?]+/.test(uri);
  return { client, db: client.db(dbName ?? (uriHasDb ? client.options.dbName : 'svc')) };
};
