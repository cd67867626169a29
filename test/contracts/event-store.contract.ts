import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../src/events/event-store.ts';

export interface EventStoreFixture {
  readonly store: EventStore;
  /** Unique stream-name prefix for this run, so a shared server's other streams never interfere. */
  readonly prefix: string;
  close(): Promise<void>;
}

const collect = async <T>(it: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ev = (type: string, data: unknown = {}) => ({ id: randomUUID(), type, data, metadata: { correlationId: 'c-1', actor: 'test' } });

/** One behaviour contract for every EventStore adapter. */
export const eventStoreContract = (name: string, open: () => Promise<EventStoreFixture>) => {
  const test = suite<{ fx: EventStoreFixture }>(`EventStore contract: ${name}`, {} as { fx: EventStoreFixture });
  test.before(async (ctx) => {
    ctx.fx = await open();
  });
  test.after(async (ctx) => {
    await ctx.fx?.close();
  });
  const s = (ctx: { fx: EventStoreFixture }, n: string) => `${ctx.fx.prefix}${n}-${randomUUID().slice(0, 8)}`;

  test('append to a new stream returns the last revision and a global position', async (ctx) => {
    const stream = s(ctx, 'a');
    const r = await ctx.fx.store.append(stream, [ev('Happened', { n: 1 }), ev('Happened', { n: 2 })], 'no_stream');
    assert.is(r.revision, 1);
    assert.ok(r.position > 0);
    const r2 = await ctx.fx.store.append(stream, [ev('Happened', { n: 3 })], 1);
    assert.is(r2.revision, 2);
    assert.ok(r2.position > r.position);
  });

  test('every recorded event carries id, type, data, metadata, stream, revision, position and time', async (ctx) => {
    const stream = s(ctx, 'shape');
    const before = Date.now();
    const e = ev('Shaped', { nested: { list: [1, 'two', null] }, text: 'ü ✓' });
    const r = await ctx.fx.store.append(stream, [e]);
    const [got] = await collect(ctx.fx.store.readStream(stream));
    assert.ok(got);
    assert.is(got!.id, e.id);
    assert.is(got!.type, 'Shaped');
    assert.equal(got!.data, e.data);
    assert.is(got!.metadata.correlationId, 'c-1');
    assert.is(got!.metadata.actor, 'test');
    assert.is(got!.stream, stream);
    assert.is(got!.revision, 0);
    assert.is(got!.position, r.position);
    assert.instance(got!.recordedAt, Date);
    // Servers may have a slightly different clock; a minute either way is still "now".
    assert.ok(Math.abs(got!.recordedAt.getTime() - before) < 60_000);
  });

  test('expected revision: no_stream on an existing stream and a stale exact revision conflict', async (ctx) => {
    const stream = s(ctx, 'conflict');
    await ctx.fx.store.append(stream, [ev('A')], 'no_stream');
    try {
      await ctx.fx.store.append(stream, [ev('B')], 'no_stream');
      assert.unreachable('no_stream on existing stream must fail');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
      assert.is((e as WrongExpectedRevisionError).actual, 0);
    }
    try {
      await ctx.fx.store.append(stream, [ev('B')], 5);
      assert.unreachable('stale revision must fail');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
    }
    try {
      await ctx.fx.store.append(s(ctx, 'missing'), [ev('B')], 0);
      assert.unreachable('exact revision on a missing stream must fail');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
    }
    const r = await ctx.fx.store.append(stream, [ev('C')], 'any');
    assert.is(r.revision, 1);
    assert.is((await collect(ctx.fx.store.readStream(stream))).length, 2);
  });

  test('retrying an append with the same event ids is idempotent', async (ctx) => {
    const stream = s(ctx, 'retry');
    const events = [ev('A'), ev('B')];
    const first = await ctx.fx.store.append(stream, events, 'no_stream');
    const again = await ctx.fx.store.append(stream, events, 'no_stream');
    assert.equal(again, first);
    const more = [ev('C')];
    const third = await ctx.fx.store.append(stream, more, 1);
    assert.equal(await ctx.fx.store.append(stream, more, 1), third);
    const read = await collect(ctx.fx.store.readStream(stream));
    assert.equal(read.map((e) => e.type), ['A', 'B', 'C']);
  });

  test('readStream forwards, backwards, from a revision, with a limit; a missing stream is empty', async (ctx) => {
    const stream = s(ctx, 'read');
    await ctx.fx.store.append(stream, [0, 1, 2, 3, 4].map((n) => ev('N', { n })));
    const all = await collect(ctx.fx.store.readStream(stream));
    assert.equal(all.map((e) => (e.data as { n: number }).n), [0, 1, 2, 3, 4]);
    assert.equal(all.map((e) => e.revision), [0, 1, 2, 3, 4]);
    const back = await collect(ctx.fx.store.readStream(stream, { direction: 'backwards', maxCount: 2 }));
    assert.equal(back.map((e) => e.revision), [4, 3]);
    const from = await collect(ctx.fx.store.readStream(stream, { fromRevision: 2, maxCount: 2 }));
    assert.equal(from.map((e) => e.revision), [2, 3]);
    const backFrom = await collect(ctx.fx.store.readStream(stream, { direction: 'backwards', fromRevision: 1 }));
    assert.equal(backFrom.map((e) => e.revision), [1, 0]);
    assert.equal(await collect(ctx.fx.store.readStream(s(ctx, 'nothing'))), []);
  });

  test('readAll: global order after a position, filtered by stream prefix and type, up to a time', async (ctx) => {
    const start = await ctx.fx.store.headPosition();
    const base = s(ctx, 'log');
    await ctx.fx.store.append(`${base}-x`, [ev('X1'), ev('Y1')]);
    await ctx.fx.store.append(`${base}-y`, [ev('X2')]);
    await sleep(15);
    await ctx.fx.store.append(`${base}-x`, [ev('X3')]);
    const mine = await collect(ctx.fx.store.readAll({ after: start, streamPrefix: base }));
    assert.equal(mine.map((e) => e.type), ['X1', 'Y1', 'X2', 'X3']);
    for (let i = 1; i < mine.length; i++) assert.ok(mine[i]!.position > mine[i - 1]!.position);
    const typed = await collect(ctx.fx.store.readAll({ after: start, streamPrefix: base, types: ['X1', 'X3'] }));
    assert.equal(typed.map((e) => e.type), ['X1', 'X3']);
    const until = await collect(ctx.fx.store.readAll({ after: start, streamPrefix: base, until: mine[2]!.recordedAt }));
    assert.equal(until.map((e) => e.type), ['X1', 'Y1', 'X2']);
    const limited = await collect(ctx.fx.store.readAll({ after: mine[0]!.position, streamPrefix: base, maxCount: 2 }));
    assert.equal(limited.map((e) => e.type), ['Y1', 'X2']);
    assert.ok((await ctx.fx.store.headPosition()) >= mine[3]!.position);
  });

  test('appendMany appends to several streams and reports each result', async (ctx) => {
    const a = s(ctx, 'many-a');
    const b = s(ctx, 'many-b');
    const results = await ctx.fx.store.appendMany([
      { stream: a, events: [ev('A1'), ev('A2')], expectedRevision: 'no_stream' },
      { stream: b, events: [ev('B1')], expectedRevision: 'no_stream' },
    ]);
    assert.equal(results.map((r) => r.revision), [1, 0]);
    assert.ok(results[1]!.position > results[0]!.position);
    assert.is((await collect(ctx.fx.store.readStream(a))).length, 2);
  });

  test('subscribe catches up in order, in bounded batches, then turns live', async (ctx) => {
    const start = await ctx.fx.store.headPosition();
    const base = s(ctx, 'sub');
    await ctx.fx.store.append(`${base}-1`, [1, 2, 3, 4, 5].map((n) => ev('S', { n })));
    const seen: RecordedEvent[] = [];
    const sizes: number[] = [];
    let notify: () => void = () => undefined;
    const sub = ctx.fx.store.subscribe({ after: start, streamPrefix: base, batchSize: 2 }, async (batch) => {
      sizes.push(batch.length);
      seen.push(...batch);
      notify();
    });
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 10_000;
      while (seen.length < n && Date.now() < deadline) await new Promise<void>((r) => ((notify = r), setTimeout(r, 50)));
    };
    await waitFor(5);
    await ctx.fx.store.append(`${base}-2`, [ev('S', { n: 6 })]);
    await waitFor(6);
    await sub.stop();
    await sub.done;
    assert.equal(seen.map((e) => (e.data as { n: number }).n), [1, 2, 3, 4, 5, 6]);
    assert.ok(sizes.every((n) => n >= 1 && n <= 2), `batch sizes ${sizes.join(',')}`);
  });

  test('a failing subscription handler ends the subscription with that error', async (ctx) => {
    const start = await ctx.fx.store.headPosition();
    const base = s(ctx, 'subfail');
    await ctx.fx.store.append(base, [ev('F')]);
    const sub = ctx.fx.store.subscribe({ after: start, streamPrefix: base }, async () => {
      throw new Error('projector broke');
    });
    try {
      await sub.done;
      assert.unreachable('done must reject');
    } catch (e) {
      assert.match((e as Error).message, 'projector broke');
    }
    await sub.stop();
  });

  return test;
};
