/**
 * The event decoder: an event decoded again at once (by the projectors of a one-event batch, as
 * the runner folds a push's) is checked against its codec once; otherwise each decoding checks it,
 * since keeping every event decoded cost more than checking it again. What it keeps is one event,
 * not a number growing with the log.
 */
import * as t from 'io-ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventDecoder, EventDecodeError } from '../../src/events/decode.ts';
import type { RecordedEvent } from '../../src/events/event-store.ts';
import { collectGarbage } from '../support/gc.ts';

const Counted = t.type({ n: t.number });

/** A codec table whose one type counts the checks its codec makes. */
const counting = () => {
  const counts = { is: 0 };
  const codec = new t.Type<{ n: number }>(
    'Counted',
    (u): u is { n: number } => {
      counts.is++;
      return Counted.is(u);
    },
    (u, c) => Counted.validate(u, c),
    (a) => a,
  );
  return { counts, decode: eventDecoder({ Counted: { codec, version: 1 } }) };
};

let position = 0;
const event = (data: unknown, type = 'Counted'): RecordedEvent => ({
  id: `e${++position}`,
  type,
  data,
  metadata: {},
  stream: 's',
  revision: position,
  position,
  recordedAt: new Date(0),
});

test('the projectors of a one-event batch check its event once, and each gets it back as it was read', () => {
  const { counts, decode } = counting();
  const e = event({ n: 1 });
  for (let projector = 0; projector < 3; projector++) assert.is(decode(e), e);
  assert.is(counts.is, 1);
});

test('a longer batch folded projector by projector is checked by each: no event but the last is kept', () => {
  const { counts, decode } = counting();
  const batch = Array.from({ length: 2000 }, (_, i) => event({ n: i }));
  for (let projector = 0; projector < 3; projector++) for (const e of batch) assert.is(decode(e), e);
  assert.is(counts.is, 6000);
});

test('an event whose data does not match its codec is refused every time; other types pass through', () => {
  const { decode } = counting();
  const bad = event({ n: 'one' });
  assert.throws(() => decode(bad), (e: unknown) => e instanceof EventDecodeError);
  assert.throws(() => decode(bad), (e: unknown) => e instanceof EventDecodeError);
  const other = event({ anything: true }, 'SomethingElse');
  assert.is(decode(other), other);
});

test('events decoded long ago are no longer held: what is kept is bounded by a number of events, not the log', async () => {
  const gc = collectGarbage();
  const collected = new Set<string>();
  const registry = new FinalizationRegistry<string>((id) => collected.add(id));
  const { decode } = counting();
  const ids = new Set<string>();
  // Made and decoded in a function of their own: nothing of this test holds them afterwards.
  (() => {
    for (let i = 0; i < 100; i++) {
      const e = event({ n: i });
      decode(e);
      registry.register(e, e.id);
      ids.add(e.id);
    }
  })();
  // A long log read on: the decoder sees a hundred thousand more events.
  for (let i = 0; i < 100_000; i++) decode(event({ n: i }));
  for (let round = 0; round < 20 && collected.size < ids.size; round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.is(collected.size, ids.size, `${collected.size} of ${ids.size} early events collected`);
});

test.run();
