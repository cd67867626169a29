/**
 * A subscription on the embedded store is handed the events this store has just appended without
 * reading them back from the log (its writer thread says where each landed and when), and what it
 * is handed is exactly what reading the log gives: events appended by another connection in
 * between, retried appends (already in the log) and another connection's later recorded times are
 * read from the file as before.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { NewEvent, RecordedEvent } from '../../../src/events/event-store.ts';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { RecentRows } from '../../../src/events/adapters/recent-rows.ts';
import { tempDir } from '../../support/tmp.ts';
import { collect } from '../../support/async-iterables.ts';
import { sleep, until } from '../../support/wait.ts';

type Statement = { all: (...args: unknown[]) => unknown[] };
/** Rows that reads of the log in position order returned (the subscription's page reads), counted across every connection. */
const pageRows = { count: 0 };
const proto = Database.prototype as unknown as { prepare(this: unknown, sql: string): Statement };
const prepare = proto.prepare;
proto.prepare = function (sql: string) {
  const statement = prepare.call(this, sql);
  // The page query whatever columns it names (it once read `SELECT *`, and this hook then counted nothing).
  if (!/^SELECT .+ FROM events WHERE position > \?/.test(sql)) return statement;
  const all = statement.all;
  statement.all = function (this: unknown, ...args: unknown[]) {
    const rows = all.apply(this, args);
    pageRows.count += rows.length;
    return rows;
  };
  return statement;
};

const ev = (n: number, id = randomUUID()): NewEvent => ({ id, type: n % 2 ? 'Odd' : 'Even', data: { n, at: new Date(1_700_000_000_000 + n) }, metadata: { actor: `user:u${n}` } });

const test = suite('embedded store: own appends handed to subscriptions');

test('a subscription following this store is handed its appends without reading them back', async () => {
  const dir = tempDir('own-appends');
  // No poll while it runs: only this store's answers wake the subscription.
  const store = openSqliteEventStore(join(dir.dir, 'events.db'), { pollIntervalMs: 60_000 });
  try {
    const got: RecordedEvent[] = [];
    const sub = store.subscribe({ after: 0, batchSize: 100 }, async (batch) => {
      got.push(...batch);
    });
    await sleep(20);
    pageRows.count = 0;
    for (let i = 0; i < 20; i++) await store.appendMany([{ stream: `s-${i % 3}`, events: [ev(i), ev(i + 100)] }]);
    await until(() => got.length === 40, 'the subscription to catch up');
    await sub.stop();
    assert.is(pageRows.count, 0, 'no event was read back from the log');
    assert.equal(got, await collect(store.readAll()), 'handed exactly what the log holds');
    // The count sees page reads: reading the log just now was counted.
    assert.ok(pageRows.count >= 40, `the page reads were counted (${pageRows.count})`);
  } finally {
    await store.close();
    dir.remove();
  }
});

test('what it is handed equals the log, with another connection appending in between and retried appends', async () => {
  const dir = tempDir('own-appends-mixed');
  const file = join(dir.dir, 'events.db');
  let now = 1_800_000_000_000;
  const store = openSqliteEventStore(file, { clock: () => now });
  // Another process: its clock runs ahead, so this store's later appends take its recorded time.
  const other = openSqliteEventStore(file, { clock: () => now + 60_000 });
  try {
    const got: RecordedEvent[] = [];
    const sub = store.subscribe({ after: 0, batchSize: 7 }, async (batch) => {
      got.push(...batch);
    });
    const retried: NewEvent[] = [ev(1), ev(2)];
    let expected = 0;
    for (let i = 0; i < 30; i++) {
      now += 1000;
      const events = i % 5 === 0 ? retried : [ev(i), ev(i + 1), ev(i + 2)];
      const appends = [{ stream: `a-${i % 4}`, events }, { stream: `b-${i}`, events: [ev(i + 7)] }];
      await store.appendMany(i % 5 === 0 && i > 0 ? [{ stream: 'a-0', events: retried }] : appends);
      expected += i % 5 === 0 && i > 0 ? 0 : events.length + 1;
      if (i % 3 === 1) {
        await other.appendMany([{ stream: `o-${i}`, events: [ev(i + 50), ev(i + 51)] }]);
        expected += 2;
      }
    }
    await until(() => got.length === expected, `the subscription to reach ${expected} events`);
    await sub.stop();
    const log = await collect(store.readAll());
    assert.is(log.length, expected);
    assert.equal(got, log);
  } finally {
    await other.close();
    await store.close();
    dir.remove();
  }
});

test('rows held are bounded: a position dropped is read from the file', () => {
  const recent = new RecentRows(4, 1_000);
  const encoded = (n: number) => ({ stream: 's', expectedRevision: 'any' as const, events: Array.from({ length: n }, (_, i) => ({ id: `e${i}`, type: 'T', data: '{}', metadata: '{}' })) });
  recent.add([encoded(10)], { results: [{ revision: 9, position: 10 }], recordedAt: [5] });
  assert.equal(recent.after(6, 100)?.map(([position]) => position), [7, 8, 9, 10]);
  assert.is(recent.after(5, 100), undefined, 'dropped');
  assert.is(recent.after(10, 100), undefined, 'not yet appended');
  const big = { stream: 't', expectedRevision: 'any' as const, events: [{ id: 'b', type: 'T', data: 'x'.repeat(2_000), metadata: '{}' }] };
  recent.add([big], { results: [{ revision: 0, position: 11 }], recordedAt: [6] });
  assert.is(recent.after(10, 100), undefined, 'a row past the byte bound is not held');
  assert.is(recent.after(6, 100), undefined);
});

test.run();
