/**
 * Admin object commands load their stream from the kept stream states (the push path's), not from
 * the stream's whole history every time (issue 15: the cost of a command must not grow with the
 * object's history). What they decide on stays the stream's true state: another writer's appends
 * are read, and the result equals a fold of the whole stream.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { loadSchema } from '../../src/app/load-schema.ts';
import { createStoreHelpers } from '../../src/commands/appending/stream-states.ts';
import { loadState, runCommand, toNewEvents } from '../../src/commands/appending/run-command.ts';
import { objectStream, type ObjectEvent } from '../../src/domain/objects/events.ts';
import { evolveObjectState, objectDecider, type ObjectCommand } from '../../src/domain/objects/object.ts';
import type { AttributeValue } from '../../src/domain/objects/values.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import type { EventStore, ReadStreamOptions } from '../../src/events/event-store.ts';
import { tempDir } from '../support/tmp.ts';

const schema = loadSchema('config/schema.json');
const decider = objectDecider(schema);
const decode = eventDecoder(domainCodecs);
const REF = 'keptobj1';
const stream = objectStream(REF);
const TITLE = 'dc:attribute:title';
const title = (value: string): AttributeValue => ({ type: 'text', value });
const typeLink: AttributeValue = { type: 'link', ref: schema.types.get('phd:type:project')!.ref };
const metadata = { actor: 'test' };

/** The store, counting the events its stream reads hand out. */
const counting = (events: EventStore) => {
  const counter = { read: 0 };
  const store: EventStore = Object.create(events);
  store.readStream = async function* (s: string, options?: ReadStreamOptions) {
    for await (const e of events.readStream(s, options)) {
      counter.read++;
      yield e;
    }
  };
  return { store, counter };
};

const test = suite('Admin object commands: kept stream states');

test('a command on a long stream reads what was appended since, not the whole history', async () => {
  const dir = tempDir();
  const events = openSqliteEventStore(join(dir.dir, 'events.db'));
  try {
    const { store, counter } = counting(events);
    const states = createStoreHelpers(store).streamStates(decode, evolveObjectState, 2 ** 20);
    const deps = { events: store, decode };
    const change = (value: string): ObjectCommand => ({ type: 'ChangeObject', ref: REF, changes: [{ op: 'set', attribute: TITLE, values: [title(value)] }] });
    await runCommand(deps, stream, decider, { type: 'CreateObject', ref: REF, attributes: { 'dc:attribute:type': [typeLink], [TITLE]: [title('v0')] }, labels: [] }, metadata, states);
    for (let i = 1; i <= 30; i++) await runCommand(deps, stream, decider, change(`v${i}`), metadata, states);

    counter.read = 0;
    const kept = await runCommand(deps, stream, decider, change('v31'), metadata, states);
    assert.ok(counter.read <= 1, `events read for the 32nd command: ${counter.read}`);
    assert.is(kept.state?.recordVersion, 32);

    counter.read = 0;
    const whole = await runCommand(deps, stream, decider, change('v32'), metadata);
    assert.is(counter.read, 32, 'without kept states the whole stream is read');
    assert.is(whole.state?.recordVersion, 33);
  } finally {
    events.close();
    dir.remove();
  }
});

test('another writer\'s appends are decided on, and the state equals a fold of the whole stream', async () => {
  const dir = tempDir();
  const events = openSqliteEventStore(join(dir.dir, 'events.db'));
  try {
    const states = createStoreHelpers(events).streamStates(decode, evolveObjectState, 2 ** 20);
    const deps = { events, decode };
    await runCommand(deps, stream, decider, { type: 'CreateObject', ref: REF, attributes: { 'dc:attribute:type': [typeLink], [TITLE]: [title('first')] }, labels: [] }, metadata, states);
    // Another process changes the title behind the kept state's back.
    const other: ObjectEvent = { type: 'ObjectAttributesChanged', data: { ref: REF, set: { [TITLE]: [title('by another')] } } };
    await events.append(stream, toNewEvents([other], metadata), 0);
    // Setting the title the other writer set changes nothing: the command saw that write.
    const same = await runCommand(deps, stream, decider, { type: 'ChangeObject', ref: REF, changes: [{ op: 'set', attribute: TITLE, values: [title('by another')] }] }, metadata, states);
    assert.is(same.appended, 0);
    const next = await runCommand(deps, stream, decider, { type: 'ChangeObject', ref: REF, changes: [{ op: 'set', attribute: TITLE, values: [title('third')] }] }, metadata, states);
    assert.is(next.appended, 1);
    assert.equal(next.state, (await loadState(deps, stream, decider)).state);
    assert.equal(next.state?.attributes[TITLE], [title('third')]);
  } finally {
    events.close();
    dir.remove();
  }
});

test.run();
