/**
 * The log watch while this process's groups are committed off the event loop: a group's commit is
 * visible (the head moved) a little before its answer arrives. No kept state may count as current
 * at such a head, and once the answer shows the move was this process's own, the chain goes on
 * (kept states of other streams stay current) instead of starting again.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogWatch, StreamStates } from '../../../src/commands/appending/stream-states.ts';
import type { EventStore, RecordedEvent, StreamAppend } from '../../../src/events/event-store.ts';

const log = () => {
  const state = { head: 0 };
  const events = { headPosition: async () => state.head } as unknown as EventStore;
  return { state, watch: new LogWatch(events) };
};
const append = (stream: string, n: number): StreamAppend => ({ stream, events: Array.from({ length: n }, () => ({ type: 'T', data: {} })), expectedRevision: 'any' });

const test = suite('log watch: own groups in flight');

test('an own group seen committed before its answer: nothing current meanwhile, the chain kept once told', async () => {
  const { state, watch } = log();
  state.head = 10;
  assert.is(await watch.position(), 10);
  assert.ok(watch.current('other', 10, 10), 'a state read at the head is current');
  watch.writing(2);
  state.head = 12; // committed by the writer thread, not yet answered
  const h = await watch.position();
  assert.is(h, 12);
  assert.not.ok(watch.current('other', 10, h), 'not current at a head the watch cannot explain yet');
  watch.appended([append('mine', 2)], [{ revision: 1, position: 12 }]);
  watch.writing(-2);
  const after = await watch.position();
  assert.ok(watch.current('other', 10, after), 'the move was our own group: other streams stay current');
  assert.not.ok(watch.current('mine', 10, after), 'the stream it wrote does not');
});

test('a move by someone else while an own group is under way restarts the chain once told', async () => {
  const { state, watch } = log();
  state.head = 10;
  await watch.position();
  watch.writing(2);
  state.head = 12; // another process appended two events; ours land after them
  const h = await watch.position();
  assert.not.ok(watch.current('other', 10, h));
  state.head = 14;
  watch.appended([append('mine', 2)], [{ revision: 1, position: 14 }]);
  watch.writing(-2);
  const after = await watch.position();
  assert.is(after, 14);
  assert.not.ok(watch.current('other', 10, after), 'events that were not ours came between: read again');
  assert.ok(watch.current('other', 14, after), 'a state read at the new head is current');
});

test("a head read before this process's later appends: states complete through the newer head are current at it", async () => {
  // A record reads the head once and loads its streams after: a group answered in between moved the
  // head by our own events only, and a state of another stream is as complete as a read of it would be.
  const { state, watch } = log();
  state.head = 10;
  const h = await watch.position();
  watch.writing(2);
  state.head = 12;
  watch.appended([append('mine', 2)], [{ revision: 1, position: 12 }]);
  watch.writing(-2);
  assert.ok(watch.current('other', 10, h), 'no event of that stream came after 10');
  assert.not.ok(watch.current('mine', 10, h), 'the stream written since is read again');
  assert.ok(watch.current('mine', 12, h), 'its state with the append folded in is current');
});

/** Kept states over the fake log, whose one stream `other` has one event; reads of it counted. */
const kept = () => {
  const { state, watch } = log();
  const reads = { count: 0 };
  const recorded: RecordedEvent = { id: 'e', type: 'T', data: {}, metadata: {}, stream: 'other', revision: 0, position: 5, recordedAt: new Date(0) };
  const events = {
    headPosition: async () => state.head,
    async *readStream(_: string, options?: { fromRevision?: number }) {
      reads.count++;
      if ((options?.fromRevision ?? 0) === 0) yield recorded;
    },
  } as unknown as EventStore;
  const states = new StreamStates<number, { type: string; data: unknown }>(events, (e) => e as never, (n) => (n ?? 0) + 1, watch);
  return { state, watch, states, reads };
};

test('a load at a head that own writes under way may explain waits for their answer instead of reading the stream', async () => {
  const { state, watch, states, reads } = kept();
  state.head = 10;
  assert.equal(await states.load('other'), { state: 1, revision: 0 });
  assert.is(reads.count, 1);
  watch.writing(2);
  state.head = 12; // committed by the writer thread, not yet answered
  let loaded: unknown;
  const loading = states.load('other').then((l) => (loaded = l));
  await new Promise((r) => setImmediate(r));
  assert.is(loaded, undefined, 'waits while the writes are under way');
  watch.appended([append('mine', 2)], [{ revision: 1, position: 12 }]);
  watch.writing(-2);
  await loading;
  assert.equal(loaded, { state: 1, revision: 0 });
  assert.is(reads.count, 1, 'the move was our own: not read again');
});

test('and reads it when the answer shows that someone else moved the head', async () => {
  const { state, watch, states, reads } = kept();
  state.head = 10;
  await states.load('other');
  watch.writing(2);
  state.head = 12; // another process's two events; ours land after them
  const loading = states.load('other');
  await new Promise((r) => setImmediate(r));
  state.head = 14;
  watch.appended([append('mine', 2)], [{ revision: 1, position: 14 }]);
  watch.writing(-2);
  assert.equal(await loading, { state: 1, revision: 0 });
  assert.is(reads.count, 2, 'read again');
});

test('a move beyond what is under way restarts at once', async () => {
  const { state, watch } = log();
  state.head = 10;
  await watch.position();
  watch.writing(1);
  state.head = 13;
  const h = await watch.position();
  assert.not.ok(watch.current('other', 10, h));
  assert.ok(watch.current('other', 13, h), 'restarted at the new head');
});

test.run();
