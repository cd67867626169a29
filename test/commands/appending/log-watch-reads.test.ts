/**
 * The log watch's reads of the head: every push asks for it before its loads, so the commands that
 * ask in one turn of the event loop share one read. A shared read must still have begun after each
 * of its askers asked (else an asker could miss an append made before it asked): one that has
 * already begun is never joined.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LogWatch } from '../../../src/commands/appending/stream-states.ts';
import type { EventStore } from '../../../src/events/event-store.ts';

const counted = () => {
  const state = { head: 0, reads: 0, gate: undefined as Promise<void> | undefined };
  const events = {
    headPosition: async () => {
      state.reads++;
      const head = state.head; // read when the read begins
      if (state.gate) await state.gate;
      return head;
    },
  } as unknown as EventStore;
  return { state, watch: new LogWatch(events) };
};

const test = suite('log watch: reads of the head');

test('commands asking in the same turn share one read', async () => {
  const { state, watch } = counted();
  state.head = 7;
  const heads = await Promise.all(Array.from({ length: 5 }, () => watch.position()));
  assert.equal(heads, [7, 7, 7, 7, 7]);
  assert.is(state.reads, 1);
});

test('a command asking after a read answered reads again, and sees what was appended meanwhile', async () => {
  const { state, watch } = counted();
  state.head = 7;
  assert.is(await watch.position(), 7);
  state.head = 9; // another process appended
  assert.is(await watch.position(), 9);
  assert.is(state.reads, 2);
});

test('a read already under way is not joined by a later asker', async () => {
  const { state, watch } = counted();
  state.head = 7;
  let open!: () => void;
  state.gate = new Promise((r) => (open = r));
  const first = watch.position();
  // Let the first read begin (it waits at the gate with head 7).
  while (state.reads === 0) await new Promise((r) => setImmediate(r));
  state.head = 9; // appended after the first read began
  const second = watch.position();
  open();
  assert.is(await first, 7);
  assert.is(await second, 9, 'the later asker is answered by a read that began after it asked');
  assert.is(state.reads, 2);
});

test.run();
