/**
 * The ids the service gives new events: UUIDs of version 7 (time first), so that the embedded store's
 * index of event ids grows at its end instead of taking a write on a random page per event.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newEventId } from '../../src/events/event-id.ts';
import { toNewEvents } from '../../src/commands/appending/run-command.ts';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { encodeAppends, SqliteAppender } from '../../src/events/adapters/sqlite-append.ts';
import { openSqliteFile } from '../../src/drivers/sqlite.ts';
import type { StreamAppend } from '../../src/events/event-store.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('event ids: UUID version 7, in the order they were made');

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('an id is a UUID of version 7 and RFC 9562 variant, its first 48 bits the Unix time in milliseconds', () => {
  const at = Date.UTC(2026, 10, 30, 9, 30, 0, 123) + 0.5;
  const id = newEventId(at);
  assert.match(id, V7);
  assert.is(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), Math.floor(at));
  // The half millisecond, in the 12 bits after the version: 2048 of 4096.
  assert.is(parseInt(id.slice(15, 18), 16), 2048);
});

test('ids made one after the other sort in that order, and never repeat', () => {
  const ids = Array.from({ length: 5000 }, () => newEventId());
  for (const id of ids) assert.match(id, V7);
  assert.equal([...ids].sort(), ids);
  assert.is(new Set(ids).size, ids.length);
});

test('commands give their new events such ids', () => {
  const events = toNewEvents(
    Array.from({ length: 50 }, (_, i) => ({ type: 'ObjectAttributesChanged', data: { i } })),
    { actor: 'system' },
  );
  const ids = events.map((e) => e.id!);
  for (const id of ids) assert.match(id, V7);
  assert.equal([...ids].sort(), ids);
});

test('so a commit of new events to many streams writes the id index at its end: far fewer pages than random ids', async () => {
  const tmp = tempDir('event-ids');
  try {
    const file = join(tmp.dir, 'events.db');
    await openSqliteEventStore(file).close(); // makes the schema
    const db = openSqliteFile(file, 'FULL');
    const appender = new SqliteAppender(db);
    const revisions = new Map<number, number>();
    // A history of 6,000 events over 200 streams (random ids, as a store written before has), then one
    // group commit of 27 appends to 27 of them.
    const appends = (n: number, first: number, id: () => string): StreamAppend[] =>
      Array.from({ length: n }, (_, i) => {
        const s = (first + i * 7) % 200;
        const revision = revisions.get(s) ?? -1;
        revisions.set(s, revision + 1);
        return { stream: `object-${s}`, expectedRevision: revision < 0 ? 'no_stream' : revision, events: [{ id: id(), type: 'ObjectAttributesChanged', data: { title: `title ${first + i}` } }] };
      });
    const commit = (a: StreamAppend[]) => {
      const encoded = encodeAppends(a);
      appender.append(encoded, encoded.map(() => Date.now()));
    };
    const framesOf = (a: StreamAppend[]): number => {
      db.pragma('wal_checkpoint(TRUNCATE)');
      commit(a);
      return (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!.log;
    };
    db.pragma('wal_autocheckpoint = 0');
    for (let batch = 0; batch < 60; batch++) commit(appends(100, batch * 100, () => crypto.randomUUID()));
    const ordered = framesOf(appends(27, 6000, newEventId));
    const random = framesOf(appends(27, 6100, () => crypto.randomUUID()));
    db.close();
    assert.ok(ordered < random * 0.8, `pages written: ${ordered} with version 7 ids, ${random} with random ones`);
  } finally {
    tmp.remove();
  }
});

test.run();
