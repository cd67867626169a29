import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import type { EventStore } from '../events/event-store.ts';
import { openSqliteEventStore } from '../events/adapters/sqlite-event-store.ts';
import type { ReadStore } from '../projections/read-store.ts';
import { openSqliteReadStore } from '../projections/adapters/sqlite-read-store.ts';

export interface Engines {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly describe: { readonly eventStore: string; readonly readStore: string };
  close(): Promise<void>;
}

/** Opens the configured engines; the server engines' clients load only when configured. */
export const openEngines = async (config: Config, options: { clock?: () => number } = {}): Promise<Engines> => {
  mkdirSync(config.dataDir, { recursive: true });
  const events =
    config.eventStore.engine === 'esdb'
      ? await (await import('../events/adapters/esdb-event-store.ts')).openEsdbEventStore(config.eventStore.url)
      : openSqliteEventStore(join(config.dataDir, 'events.db'), options.clock ? { clock: options.clock } : {});
  const reads =
    config.readStore.engine === 'mongodb'
      ? await (await import('../projections/adapters/mongo-read-store.ts')).openMongoReadStore(config.readStore.url)
      : openSqliteReadStore(join(config.dataDir, 'read.db'));
  return {
    events,
    reads,
    describe: { eventStore: config.eventStore.engine, readStore: config.readStore.engine },
    close: async () => {
      await events.close();
      await reads.close();
    },
  };
};
