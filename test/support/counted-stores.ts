import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from './tmp.ts';

/**
 * Embedded stores in a temporary directory, the log holding `streams` streams s0, s1… of `perStream`
 * `Counted` events each, recorded at the times `clock` gives (the wall clock by default).
 */
export const countedStores = async (streams: number, perStream: number, clock?: () => number) => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 10, ...(clock ? { clock } : {}) });
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  for (let s = 0; s < streams; s++) await events.append(`s${s}`, Array.from({ length: perStream }, () => ({ id: randomUUID(), type: 'Counted', data: {} })));
  return {
    events,
    reads,
    close: async () => {
      await events.close();
      await reads.close();
      tmp.remove();
    },
  };
};
