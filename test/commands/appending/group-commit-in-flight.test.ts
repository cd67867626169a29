/**
 * Group commit over a store that commits off the event loop (the embedded store's writer thread):
 * at most two groups are under way, the submissions that arrive meanwhile are written together as
 * the next, and `onAppended` hears of every append in the order of the log, failed groups' retries
 * included.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { GroupCommit } from '../../../src/commands/appending/group-commit.ts';
import { openSqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { WrongExpectedRevisionError, type AppendResult, type EventStore, type StreamAppend } from '../../../src/events/event-store.ts';
import { tempDir } from '../../support/tmp.ts';

const append = (stream: string, expectedRevision: StreamAppend['expectedRevision'] = 'no_stream'): StreamAppend => ({
  stream,
  events: [{ id: randomUUID(), type: 'T', data: {} }],
  expectedRevision,
});
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await turn();
};

/** A store whose appendMany calls are answered only when the test says so; `refuse` fails a call holding that stream. */
const manual = (refuse?: string) => {
  const calls: string[][] = [];
  const answers: (() => void)[] = [];
  let position = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const events = {
    appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
      calls.push(appends.map((a) => a.stream));
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      return new Promise((resolve, reject) =>
        answers.push(() => {
          inFlight--;
          if (appends.some((a) => a.stream === refuse)) reject(new WrongExpectedRevisionError(refuse!, 'no_stream', 0));
          else resolve(appends.map((a) => ({ revision: 0, position: (position += a.events.length) })));
        }),
      );
    },
  } as unknown as EventStore;
  /** Answers the oldest unanswered call. */
  const answer = () => answers.shift()!();
  return { calls, events, answer, maxInFlight: () => maxInFlight, unanswered: () => answers.length };
};

const test = suite('group commit: one write in flight');

test('at most two groups are written at once; submissions made meanwhile go as one group when one ends', async () => {
  const store = manual();
  const told: string[][] = [];
  const commits = new GroupCommit(store.events, (appends) => told.push(appends.map((a) => a.stream)));
  const a = commits.appendMany([append('a')]);
  await turns(2);
  const b = commits.appendMany([append('b')]);
  await turns(2);
  assert.equal(store.calls, [['a'], ['b']], 'the second group queued behind the first');
  const later = [commits.appendMany([append('c')])];
  await turn();
  later.push(commits.appendMany([append('d')]));
  await turns(8);
  later.push(commits.appendMany([append('e')]));
  await turns(8);
  assert.equal(store.calls, [['a'], ['b']], 'nothing more written while two are in flight');
  assert.ok(commits.settled('c'), 'c is waiting for its group');
  store.answer();
  assert.equal(await a, [{ revision: 0, position: 1 }]);
  await turns(2);
  assert.equal(store.calls, [['a'], ['b'], ['c', 'd', 'e']], 'the gathered ones as one group, at once');
  store.answer();
  store.answer();
  assert.equal((await b)[0]!.position, 2);
  assert.equal((await Promise.all(later)).map((r) => r[0]!.position), [3, 4, 5]);
  assert.equal(told, [['a'], ['b'], ['c', 'd', 'e']]);
  assert.is(store.maxInFlight(), 2);
  assert.is(commits.settled('c'), undefined);
});

test("a failed group's retries follow the group written behind it, and are heard of in that order", async () => {
  const store = manual('bad');
  const told: string[][] = [];
  const commits = new GroupCommit(store.events, (appends) => told.push(appends.map((x) => x.stream)));
  const first = Promise.allSettled([commits.appendMany([append('a')]), commits.appendMany([append('bad')])]);
  await turns(2);
  const next = commits.appendMany([append('c')]);
  await turns(2);
  store.answer(); // [a, bad] fails: [a] is retried alone, behind [c]
  await turns(2);
  store.answer(); // [c]
  await turns(2);
  store.answer(); // [a]
  await turns(2);
  store.answer(); // [bad] alone fails
  await turns(2);
  assert.equal(store.calls, [['a', 'bad'], ['c'], ['a'], ['bad']]);
  const [a, bad] = await first;
  assert.equal((a as PromiseFulfilledResult<AppendResult[]>).value, [{ revision: 0, position: 2 }]);
  assert.instance((bad as PromiseRejectedResult).reason, WrongExpectedRevisionError);
  assert.equal(await next, [{ revision: 0, position: 1 }]);
  assert.equal(told, [['c'], ['a']], 'in log order');
  assert.is(store.maxInFlight(), 2);
});

test('many callers through the writer thread: the log order is the order onAppended hears, groups form', async () => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  await events.append('warm', [{ type: 'T', data: {} }]);
  const heard: number[] = [];
  let groups = 0;
  const commits = new GroupCommit(events, (_appends, results) => {
    groups++;
    heard.push(...results.map((r) => r.position));
  });
  const submissions: Promise<AppendResult[]>[] = [];
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 20; i++) submissions.push(commits.appendMany([append(`s-${round}-${i}`)]));
    await turn();
  }
  const results = (await Promise.all(submissions)).map((r) => r[0]!.position);
  assert.equal(heard, Array.from({ length: 200 }, (_, i) => i + 2), 'dense, ascending: told in log order');
  assert.equal(results, heard, 'each submission answered with its own position');
  assert.ok(groups < 200, `grouped: ${groups} groups`);
  await events.close();
  tmp.remove();
});

test.run();
