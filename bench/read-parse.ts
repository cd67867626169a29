/**
 * The baseline of catch-up and rebuild: reading the event log and JSON-parsing every event, the
 * floor under any fold of it (measured in the same run as what it is compared with).
 */
import { openRawDb, perSecond, round } from './support.ts';

/** Reads every event of the log in position order and parses its JSON: the floor of any catch-up. */
export const readParseRate = (eventsDb: string): { events: number; ms: number; eventsPerSec: number } => {
  const db = openRawDb(eventsDb);
  try {
    const page = db.prepare<[number], { position: number; data: string; metadata: string }>('SELECT position, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT 2000');
    const started = performance.now();
    let events = 0;
    let after = 0;
    let sink = 0;
    for (;;) {
      const rows = page.all(after);
      if (rows.length === 0) break;
      for (const row of rows) {
        const data = JSON.parse(row.data) as object;
        const metadata = JSON.parse(row.metadata) as object;
        if (data && metadata) sink++;
      }
      events += rows.length;
      after = rows[rows.length - 1]!.position;
    }
    const ms = performance.now() - started;
    if (sink !== events) throw new Error('read+parse lost events');
    return { events, ms: round(ms, 1), eventsPerSec: perSecond(events, ms) };
  } finally {
    db.close();
  }
};

