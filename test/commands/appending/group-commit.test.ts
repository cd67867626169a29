/**
 * When the group commit writes: a lone append at the end of its own turn of the event loop; under
 * load, the appends that keep arriving turn after turn join one group, for a bounded number of turns.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GroupCommit } from '../../../src/commands/appending/group-commit.ts';
import type { AppendResult, EventStore, StreamAppend } from '../../../src/events/event-store.ts';

/** An event store that records each appendMany call's streams and answers dense positions. */
const recording = () => {
  const calls: string[][] = [];
  let position = 0;
  const events = {
    async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
      calls.push(appends.map((a) => a.stream));
      return appends.map((a) => ({ revision: a.events.length - 1, position: (position += a.events.length) }));
    },
  } as unknown as EventStore;
  return { calls, events };
};

const append = (stream: string): StreamAppend => ({ stream, events: [{ type: 'T', data: {} }], expectedRevision: 'no_stream' });
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const test = suite('group commit: when a group is written');

test('a lone append is written at the end of its turn, as one group', async () => {
  const { calls, events } = recording();
  const commits = new GroupCommit(events);
  const done = commits.appendMany([append('a')]);
  await turn();
  assert.equal(calls, [['a']], 'written in the turn it was submitted');
  assert.equal(await done, [{ revision: 0, position: 1 }]);
});

test('appends that keep arriving in the next turns join the group', async () => {
  const { calls, events } = recording();
  const commits = new GroupCommit(events);
  const all = [commits.appendMany([append('a')]), commits.appendMany([append('b')])];
  // Requests that reach their commit a turn or two later (their I/O came in the next poll).
  await turn();
  all.push(commits.appendMany([append('c')]));
  await turn();
  all.push(commits.appendMany([append('d')]));
  await Promise.all(all);
  assert.equal(calls, [['a', 'b', 'c', 'd']]);
  assert.equal((await Promise.all(all)).map((r) => r[0]!.position), [1, 2, 3, 4]);
});

test('a group waits a bounded number of turns, then is written while more keep coming', async () => {
  const { calls, events } = recording();
  const commits = new GroupCommit(events);
  const all = [commits.appendMany([append('s0')]), commits.appendMany([append('s1')])];
  for (let i = 2; i < 20; i++) {
    await turn();
    all.push(commits.appendMany([append(`s${i}`)]));
  }
  await Promise.all(all);
  assert.ok(calls.length >= 3, `written in several groups: ${JSON.stringify(calls)}`);
  assert.ok(calls[0]!.length <= 7, `the first group did not wait for ever: ${calls[0]!.length}`);
  assert.equal(calls.flat(), Array.from({ length: 20 }, (_, i) => `s${i}`), 'every append once, in order');
});

test('a stream with an append waiting for its group says so until it is written', async () => {
  const { events } = recording();
  const commits = new GroupCommit(events);
  const first = commits.appendMany([append('a')]);
  void commits.appendMany([append('b')]);
  const settled = commits.settled('a');
  assert.ok(settled);
  await turn();
  assert.ok(commits.settled('a'), 'still waiting: another submission came in its turn');
  await first;
  await settled;
  assert.is(commits.settled('a'), undefined);
});

test.run();
