/**
 * The log watch while this process's groups are committed off the event loop: a group's commit is
 * visible (the head moved) a little before its answer arrives. No kept state may count as current
 * at such a head, and once the answer shows the move was this process's own, the chain goes on
 * (kept states of other streams stay current) instead of starting again.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogWatch } from '../../../src/commands/appending/stream-states.ts';
import type { EventStore, StreamAppend } from '../../../src/events/event-store.ts';

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
