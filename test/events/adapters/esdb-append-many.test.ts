/**
 * The KurrentDB adapter's choice between one atomic `multiStreamAppend` and appends in order, and its mapping of the
 * client's answers, against an in-memory stand-in for the client (no server runs here; the contract suite in
 * test/contracts runs the adapter against a real one when SVC_TEST_ESDB names it). The stand-in answers as the
 * client documents: `UnsupportedError` from a server before 25.1, `WrongExpectedVersionError` on a conflict,
 * idempotent single-stream appends of the same ids at the same expected revision.
 */
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  UnsupportedError,
  WrongExpectedVersionError,
  type AppendStreamRequest,
  type AppendStreamState,
  type EventData,
  type KurrentDBClient,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { EsdbEventStore } from '../../../src/events/adapters/esdb-event-store.ts';
import { toKurrentConnectionString, toMetadata } from '../../../src/events/adapters/esdb-mapping.ts';
import { WrongExpectedRevisionError, type NewEvent } from '../../../src/events/event-store.ts';

interface Stored {
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly revision: bigint;
  readonly position: bigint;
}

/** An in-memory server behind the few client calls the adapter's appends use. */
class FakeClient {
  readonly streams = new Map<string, Stored[]>();
  readonly calls: string[] = [];
  readonly multiStreamRequests: AppendStreamRequest[][] = [];
  private position = 0n;

  constructor(private readonly multiStream: 'supported' | 'unsupported' | 'unimplemented') {}

  private conflict(stream: string, expected: AppendStreamState): WrongExpectedVersionError | undefined {
    const current = this.streams.get(stream)?.length ?? 0;
    const ok = expected === 'any' || (expected === 'no_stream' ? current === 0 : expected === 'stream_exists' ? current > 0 : BigInt(current - 1) === expected);
    return ok ? undefined : new WrongExpectedVersionError(undefined, { streamName: stream, expected, current: current === 0 ? 'no_stream' : BigInt(current - 1) });
  }

  private write(stream: string, events: readonly EventData[]): Stored {
    const list = this.streams.get(stream) ?? [];
    this.streams.set(stream, list);
    for (const e of events) {
      this.position += 100n;
      list.push({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, revision: BigInt(list.length), position: this.position });
    }
    return list[list.length - 1]!;
  }

  async appendToStream(stream: string, events: EventData | EventData[], options: { streamState?: AppendStreamState } = {}) {
    this.calls.push(`append ${stream}`);
    const list = Array.isArray(events) ? events : [events];
    const expected = options.streamState ?? 'any';
    const conflict = this.conflict(stream, expected);
    if (conflict) {
      // The server's idempotency: the same ids right after the expected revision are taken as already written.
      const from = expected === 'no_stream' ? 0 : typeof expected === 'bigint' ? Number(expected) + 1 : -1;
      const there = from < 0 ? [] : (this.streams.get(stream) ?? []).slice(from, from + list.length);
      if (there.length !== list.length || there.some((s, i) => s.id !== list[i]!.id)) throw conflict;
      const last = there[there.length - 1]!;
      return { success: true, nextExpectedRevision: last.revision, position: { commit: last.position, prepare: last.position } };
    }
    const last = this.write(stream, list);
    return { success: true, nextExpectedRevision: last.revision, position: { commit: last.position, prepare: last.position } };
  }

  async multiStreamAppend(requests: AppendStreamRequest[]) {
    this.calls.push(`multi ${requests.map((r) => r.streamName).join(',')}`);
    if (this.multiStream === 'unsupported') throw new UnsupportedError('multiStreamAppend', '25.1');
    if (this.multiStream === 'unimplemented') throw Object.assign(new Error('12 UNIMPLEMENTED'), { code: 12 });
    this.multiStreamRequests.push(requests);
    // No idempotency assumed here: a repeated append of written ids is a conflict, left to the adapter to sort out.
    for (const r of requests) {
      const conflict = this.conflict(r.streamName, r.expectedState);
      if (conflict) throw conflict;
    }
    const responses = requests.map((r) => ({ streamName: r.streamName, revision: this.write(r.streamName, r.events).revision }));
    return { position: this.position, responses };
  }

  async *readStream(stream: string, options: { fromRevision?: bigint | 'start' | 'end'; direction?: string; maxCount?: number | bigint } = {}): AsyncGenerator<ResolvedEvent> {
    let list = [...(this.streams.get(stream) ?? [])];
    if (options.direction === 'backwards') list.reverse();
    const from = options.fromRevision;
    if (typeof from === 'bigint') list = list.filter((s) => (options.direction === 'backwards' ? s.revision <= from : s.revision >= from));
    for (const s of list.slice(0, Number(options.maxCount ?? list.length))) {
      yield {
        event: { streamId: stream, id: s.id, revision: s.revision, type: s.type, data: s.data, metadata: s.metadata, isJson: true, created: new Date(), position: { commit: s.position, prepare: s.position } },
      } as ResolvedEvent;
    }
  }

  async dispose() {}
}

const storeOn = (fake: FakeClient) => new EsdbEventStore(fake as unknown as KurrentDBClient);
const ev = (type: string, metadata?: NewEvent['metadata']): NewEvent => ({ id: randomUUID(), type, data: { type }, ...(metadata ? { metadata } : {}) });
const types = (fake: FakeClient, stream: string) => (fake.streams.get(stream) ?? []).map((s) => s.type);

const test = suite('KurrentDB adapter: appendMany');

test('a server with multiStreamAppend gets one all-or-nothing call; each stream its revision, all the commit position', async () => {
  const fake = new FakeClient('supported');
  const store = storeOn(fake);
  assert.is(store.atomicAppendMany, undefined, 'unknown before the server was asked');
  const results = await store.appendMany([
    { stream: 'claim', events: [ev('Claimed')], expectedRevision: 'no_stream' },
    { stream: 'object', events: [ev('Created'), ev('Changed')], expectedRevision: 'no_stream' },
  ]);
  assert.equal(fake.calls, ['multi claim,object']);
  assert.is(store.atomicAppendMany, true);
  assert.equal(results, [
    { revision: 0, position: 300 },
    { revision: 1, position: 300 },
  ]);
  fake.streams.set('taken', [{ id: randomUUID(), type: 'Winner', data: {}, metadata: undefined, revision: 0n, position: 1n }]);
  try {
    await store.appendMany([
      { stream: 'fresh', events: [ev('Fresh')], expectedRevision: 'no_stream' },
      { stream: 'taken', events: [ev('Loser')], expectedRevision: 'no_stream' },
    ]);
    assert.unreachable('taken conflicts');
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
    assert.is((e as WrongExpectedRevisionError).stream, 'taken');
    assert.is((e as WrongExpectedRevisionError).expected, 'no_stream');
    assert.is((e as WrongExpectedRevisionError).actual, 0);
  }
  assert.equal(types(fake, 'fresh'), [], 'nothing written');
});

test('multiStreamAppend metadata travels as strings; schemaVersion comes back a number', async () => {
  const fake = new FakeClient('supported');
  await storeOn(fake).appendMany([
    { stream: 'a', events: [ev('A', { correlationId: 'c-1', actor: 'test', schemaVersion: 2 })], expectedRevision: 'no_stream' },
    { stream: 'b', events: [ev('B')], expectedRevision: 'no_stream' },
  ]);
  const sent = fake.multiStreamRequests[0]!.flatMap((r) => r.events.map((e) => e.metadata));
  assert.equal(sent, [{ correlationId: 'c-1', actor: 'test', schemaVersion: '2' }, {}]);
  for (const m of sent) assert.ok(Object.values(m as object).every((v) => typeof v === 'string'), 'the client refuses other values');
  assert.equal(toMetadata({ correlationId: 'c-1', schemaVersion: '2' }), { correlationId: 'c-1', schemaVersion: 2 });
  assert.equal(toMetadata({ correlationId: 'c-1', schemaVersion: 3 }), { correlationId: 'c-1', schemaVersion: 3 });
  assert.equal(toMetadata('not an object'), {});
});

test('a server without it (UnsupportedError) gets the streams in order; a later conflict leaves the earlier written', async () => {
  const fake = new FakeClient('unsupported');
  const store = storeOn(fake);
  fake.streams.set('taken', [{ id: randomUUID(), type: 'Winner', data: {}, metadata: undefined, revision: 0n, position: 1n }]);
  try {
    await store.appendMany([
      { stream: 'fresh', events: [ev('Fresh')], expectedRevision: 'no_stream' },
      { stream: 'taken', events: [ev('Loser')], expectedRevision: 'no_stream' },
      { stream: 'never', events: [ev('Never')], expectedRevision: 'no_stream' },
    ]);
    assert.unreachable('taken conflicts');
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
    assert.is((e as WrongExpectedRevisionError).stream, 'taken');
  }
  assert.is(store.atomicAppendMany, false);
  assert.equal(fake.calls, ['multi fresh,taken,never', 'append fresh', 'append taken']);
  assert.equal(types(fake, 'fresh'), ['Fresh']);
  assert.equal(types(fake, 'never'), [], 'stopped at the first failure');
  await store.appendMany([
    { stream: 'x', events: [ev('X')], expectedRevision: 'no_stream' },
    { stream: 'y', events: [ev('Y')], expectedRevision: 'no_stream' },
  ]);
  assert.equal(fake.calls.slice(3), ['append x', 'append y'], 'not asked again');
});

test('a server answering UNIMPLEMENTED is taken as one without it', async () => {
  const fake = new FakeClient('unimplemented');
  const store = storeOn(fake);
  const results = await store.appendMany([
    { stream: 'a', events: [ev('A')], expectedRevision: 'no_stream' },
    { stream: 'b', events: [ev('B')], expectedRevision: 'no_stream' },
  ]);
  assert.equal(results.map((r) => r.revision), [0, 0]);
  assert.is(store.atomicAppendMany, false);
});

test('a retry after only the first stream was written (by an earlier ordered append) writes the rest once', async () => {
  const fake = new FakeClient('supported');
  const store = storeOn(fake);
  const claim = [ev('Claimed')];
  await store.append('claim', claim, 'no_stream');
  const results = await store.appendMany([
    { stream: 'claim', events: claim, expectedRevision: 'no_stream' },
    { stream: 'object', events: [ev('Created')], expectedRevision: 'no_stream' },
  ]);
  assert.equal(types(fake, 'claim'), ['Claimed'], 'the claim was not written twice');
  assert.equal(types(fake, 'object'), ['Created']);
  assert.equal(fake.calls, ['append claim', 'multi claim,object', 'multi object']);
  assert.equal(results, [
    { revision: 0, position: 100 },
    { revision: 0, position: 200 },
  ]);
  const again = await store.appendMany([
    { stream: 'claim', events: claim, expectedRevision: 'no_stream' },
    { stream: 'object', events: fake.streams.get('object')!.map((s) => ({ id: s.id, type: s.type, data: s.data })), expectedRevision: 'no_stream' },
  ]);
  assert.equal(again, results, 'all of it again is a no-op with the same answer');
  assert.equal(types(fake, 'object'), ['Created']);
});

test('a stream named twice in one call cannot go in one multiStreamAppend: it is appended in order', async () => {
  const fake = new FakeClient('supported');
  const store = storeOn(fake);
  await store.appendMany([
    { stream: 's', events: [ev('One')], expectedRevision: 'no_stream' },
    { stream: 's', events: [ev('Two')], expectedRevision: 0 },
  ]);
  assert.equal(fake.calls, ['append s', 'append s']);
  assert.equal(types(fake, 's'), ['One', 'Two']);
});

test('esdb:// connection strings are passed on as kurrentdb:// (same format, no deprecation warning)', () => {
  assert.is(toKurrentConnectionString(' esdb://admin:changeit@localhost:2113?tls=false '), 'kurrentdb://admin:changeit@localhost:2113?tls=false');
  assert.is(toKurrentConnectionString('esdb+discover://cluster.local:2113'), 'kurrentdb+discover://cluster.local:2113');
  assert.is(toKurrentConnectionString('kurrentdb://a:2113,b:2113?tls=true'), 'kurrentdb://a:2113,b:2113?tls=true');
});

test.run();
