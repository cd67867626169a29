import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { EventStore } from '../events/event-store.ts';
import { openSqliteEventStore } from '../events/adapters/sqlite-event-store.ts';
import type { ReadStore } from '../projections/read-store.ts';
import { openSqliteReadStore } from '../projections/adapters/sqlite-read-store.ts';
import type { MongoConnection } from '../drivers/mongodb.ts';
import { ensurePrivateDirectory } from '../drivers/private-files.ts';

export interface Engines {
  readonly events: EventStore;
  readonly reads: ReadStore;
  /** The process's one MongoDB client when the read models are there; GridFS uses it too. Closed by close(). */
  readonly mongo?: MongoConnection;
  readonly describe: { readonly eventStore: string; readonly readStore: string };
  close(): Promise<void>;
}

/**
 * How often a serving process's embedded read store has its log checkpointed by a thread of its
 * own (see SqliteCheckpointThread): a process answering requests on its main thread, which a
 * checkpoint inside a commit would hold up. Often enough that the log stays a few MB under steady writes.
 */
export const SERVING_CHECKPOINT_MS = 1000;

/**
 * Opens the configured engines; the server engines' clients load only when configured.
 * `readStoreCheckpointEveryMs`: see SqliteReadStoreOptions.checkpointEveryMs (serving processes: SERVING_CHECKPOINT_MS).
 */
export const openEngines = async (
  config: Config,
  options: { clock?: () => number; readStorePageCacheBytes?: number; readStoreBusyTimeoutMs?: number; readStoreCheckpointEveryMs?: number } = {},
): Promise<Engines> => {
  ensurePrivateDirectory(config.dataDir);
  const events =
    config.eventStore.engine === 'esdb'
      ? await (await import('../events/adapters/esdb-event-store.ts')).openEsdbEventStore(config.eventStore.url)
      : openSqliteEventStore(join(config.dataDir, 'events.db'), options.clock ? { clock: options.clock } : {});
  const mongo = config.readStore.engine === 'mongodb' ? await (await import('../drivers/mongodb.ts')).connectMongo(config.readStore.url) : undefined;
  const reads = mongo
    ? new (await import('../projections/adapters/mongo-read-store.ts')).MongoReadStore(mongo.db)
    : openSqliteReadStore(join(config.dataDir, 'read.db'), {
        ...(options.readStorePageCacheBytes ? { pageCacheBytes: options.readStorePageCacheBytes } : {}),
        ...(options.readStoreBusyTimeoutMs ? { busyTimeoutMs: options.readStoreBusyTimeoutMs } : {}),
        ...(options.readStoreCheckpointEveryMs ? { checkpointEveryMs: options.readStoreCheckpointEveryMs } : {}),
      });
  return {
    events,
    reads,
    ...(mongo ? { mongo } : {}),
    describe: { eventStore: config.eventStore.engine, readStore: config.readStore.engine },
    close: async () => {
      await events.close();
      await reads.close();
      await mongo?.client.close();
    },
  };
};
