/**
 * A process appending to an embedded event store, for the writer-thread tests:
 *   node --import tsx sqlite-append-child.ts <file> close      one append, close(), then the process must end
 *   node --import tsx sqlite-append-child.ts <file> unclosed   one append, no close(): the process must still end
 *   node --import tsx sqlite-append-child.ts <file> forever    appends from 8 callers until killed, printing each
 *                                                              acknowledged event id on a line of its own
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { openSqliteEventStore, type SqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';

const [file, mode] = process.argv.slice(2);
const event = () => ({ id: randomUUID(), type: 'Child', data: { at: Date.now() } });
// Only as a process of its own: a test runner whose pattern matches this file merely imports it.
const main = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;

const run = async (store: SqliteEventStore) => {
  if (mode === 'forever') {
    const caller = async (n: number) => {
      for (;;) {
        const e = event();
        await store.append(`child-${n}`, [e]);
        process.stdout.write(`${e.id}\n`);
      }
    };
    for (let n = 0; n < 8; n++) void caller(n);
    return;
  }
  await store.append('child', [event()]);
  if (mode === 'close') await store.close();
  process.stdout.write(`${mode} done\n`);
};

if (main) await run(openSqliteEventStore(file!));
