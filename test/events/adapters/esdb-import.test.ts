/**
 * The KurrentDB adapter's import against an in-memory stand-in for the few client calls it uses (no server runs
 * here; the contract suite runs it against a real, empty one when SVC_TEST_ESDB_EMPTY names it): runs of one
 * stream's events appended at the revision before them, the original recorded time carried in the metadata and
 * read back as recordedAt.
 */
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WrongExpectedVersionError, type AllStreamResolvedEvent, type AppendStreamState, type EventData, type KurrentDBClient } from '@kurrent/kurrentdb-client';
import { EsdbEventStore } from '../../../src/events/adapters/esdb-event-store.ts';
import { StoreNotEmptyError, WrongExpectedRevisionError, type ExportedEvent } from '../../../src/events/event-store.ts';

interface Stored {
  readonly streamId: string;
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly revision: bigint;
  readonly position: { commit: bigint; prepare: bigint };
  readonly created: Date;
  readonly isJson: true;
}

class FakeClient {
  readonly log: Stored[] = [];
  readonly appends: string[] = [];

  async appendToStream(stream: string, events: EventData[], options: { streamState: AppendStreamState }) {
    const current = this.log.filter((e) => e.streamId === stream).length - 1;
    const expected = options.streamState;
    if (!(expected === 'any' || (expected === 'no_stream' ? current === -1 : BigInt(current) === expected))) {
      throw new WrongExpectedVersionError(undefined, { streamName: stream, expected, current: current === -1 ? 'no_stream' : BigInt(current) });
    }
    this.appends.push(`${stream}@${String(expected)}x${events.length}`);
    let revision = current;
    for (const e of events) {
      const position = BigInt((this.log.length + 1) * 100);
      this.log.push({ streamId: stream, id: e.id, type: e.type, data: e.data, metadata: e.metadata, revision: BigInt(++revision), position: { commit: position, prepare: position }, created: new Date(), isJson: true });
    }
    const last = this.log[this.log.length - 1]!;
    return { success: true, nextExpectedRevision: last.revision, position: last.position };
  }

  async *readAll(options: { direction?: string; maxCount?: number }): AsyncGenerator<AllStreamResolvedEvent> {
    const list = options.direction === 'backwards' ? [...this.log].reverse() : this.log;
    for (const event of list.slice(0, options.maxCount ?? list.length)) yield { event, commitPosition: event.position.commit } as unknown as AllStreamResolvedEvent;
  }

  async dispose() {}
}

async function* source(items: readonly ExportedEvent[]) {
  yield* items;
}

const exported = (stream: string, revision: number, at: string): ExportedEvent => ({
  id: randomUUID(),
  type: 'Happened',
  data: { stream, revision },
  metadata: { actor: 'user:ada', schemaVersion: 1 },
  stream,
  revision,
  recordedAt: new Date(at),
});

const test = suite('KurrentDB adapter: importEvents');

test('runs of one stream in one append each, at the revision before them; times and metadata read back as exported', async () => {
  const fake = new FakeClient();
  const store = new EsdbEventStore(fake as unknown as KurrentDBClient);
  const log = [exported('a', 0, '2024-01-01T00:00:00.000Z'), exported('a', 1, '2024-01-01T00:00:01.000Z'), exported('b', 0, '2024-01-01T00:00:02.000Z'), exported('a', 2, '2024-01-01T00:00:03.000Z')];
  const result = await store.importEvents(source(log));
  assert.equal(result, { events: 4, head: 400 });
  assert.equal(fake.appends, ['a@no_streamx2', 'b@no_streamx1', 'a@1x1']);
  const all = [];
  for await (const e of store.readAll()) all.push(e);
  assert.equal(
    all.map((e) => ({ id: e.id, stream: e.stream, revision: e.revision, recordedAt: e.recordedAt.toISOString(), metadata: e.metadata })),
    log.map((e) => ({ id: e.id, stream: e.stream, revision: e.revision, recordedAt: e.recordedAt.toISOString(), metadata: e.metadata })),
  );
  const until = [];
  for await (const e of store.readAll({ until: new Date('2024-01-01T00:00:01.500Z') })) until.push(e.id);
  assert.equal(until, [log[0]!.id, log[1]!.id]);
});

test('a store with events refuses; a revision that does not follow its stream fails as a conflict', async () => {
  const fake = new FakeClient();
  const store = new EsdbEventStore(fake as unknown as KurrentDBClient);
  await store.importEvents(source([exported('a', 0, '2024-01-01T00:00:00.000Z')]));
  try {
    await store.importEvents(source([exported('c', 0, '2024-01-02T00:00:00.000Z')]));
    assert.unreachable('not empty');
  } catch (e) {
    assert.instance(e, StoreNotEmptyError);
  }
  const fresh = new EsdbEventStore(new FakeClient() as unknown as KurrentDBClient);
  try {
    await fresh.importEvents(source([exported('a', 0, '2024-01-01T00:00:00.000Z'), exported('a', 2, '2024-01-01T00:00:01.000Z')]));
    assert.unreachable('gap');
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
    assert.is((e as WrongExpectedRevisionError).expected, 1);
  }
});

test.run();
