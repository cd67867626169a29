import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { StoreNotEmptyError, WrongExpectedRevisionError, type EventStore, type ExportedEvent, type RecordedEvent } from '../../src/events/event-store.ts';
import { collect } from '../support/async-iterables.ts';

export interface EventStoreFixture {
  readonly store: EventStore;
  /** Unique stream-name prefix for this run, so a shared server's other streams never interfere. */
  readonly prefix: string;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ev = (type: string, data: unknown = {}) => ({ id: randomUUID(), type, data, metadata: { correlationId: 'c-1', actor: 'test' } });

async function* source<T>(items: readonly T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

/** An exported log of three interleaved streams, recorded a day ago one second apart. */
const exportedLog = (prefix: string): ExportedEvent[] => {
  const day = Date.now() - 86_400_000;
  const order = [
    ['a', 0],
    ['b', 0],
    ['a', 1],
    ['c', 0],
    ['b', 1],
    ['a', 2],
  ] as const;
  return order.map(([stream, revision], i) => ({
    id: randomUUID(),
    type: `Imported${stream.toUpperCase()}`,
    data: { n: i, nested: { text: 'ü ✓', list: [1, null] } },
    metadata: { correlationId: `c-${i}`, actor: 'user:ada', schemaVersion: 2 },
    stream: `${prefix}${stream}`,
    revision,
    recordedAt: new Date(day + i * 1000),
  }));
};

export interface ContractOptions {
  /** A store with no event at all, for the import tests (a shared server cannot be emptied). */
  readonly openEmpty?: () => Promise<EventStoreFixture>;
  /** Said when `openEmpty` is missing, so the skip is visible. */
  readonly noEmptyStore?: string;
  /** The engine reads by stream (`readByStream` is optional on the port; where it must be there, its absence fails). */
  readonly readsByStream?: boolean;
}

/** One behaviour contract for every EventStore adapter. */
export const eventStoreContract = (name: string, open: () => Promise<EventStoreFixture>, options: ContractOptions = {}) => {
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

  test('readByStream: stream after stream in name order, each in revision order, up to a position, by type; pages across streams', async (ctx) => {
    const store = ctx.fx.store;
    if (!store.readByStream) {
      assert.not.ok(options.readsByStream, `${name} should read by stream`);
      console.log(`skipped: readByStream on ${name} (optional; this engine reads its log in log order only, and rebuilds do so)`);
      return;
    }
    const base = s(ctx, 'bys');
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => ev(i % 2 ? 'Odd' : 'Even', { n: from + i }));
    await store.append(`${base}-c`, [ev('Even', { n: 0 })]);
    await store.append(`${base}-a`, many(0, 600));
    await store.append(`${base}x-other`, [ev('Even', { n: 0 })]);
    await store.append(`${base}-b`, [ev('Even', { n: 0 }), ev('Odd', { n: 1 })]);
    const { position: through } = await store.append(`${base}-a`, many(600, 600));
    await store.append(`${base}-c`, [ev('Odd', { n: 1 })]);
    await store.append(`${base}-d`, [ev('Even', { n: 0 })]);
    const all = await collect(store.readByStream({ streamPrefix: `${base}-`, through }));
    const seen = all.map((e) => `${e.stream.slice(base.length)}:${e.revision}`);
    const expected = [...Array.from({ length: 1200 }, (_, i) => `-a:${i}`), '-b:0', '-b:1', '-c:0'];
    assert.equal(seen, expected);
    assert.equal(all.map((e) => (e.data as { n: number }).n), [...Array.from({ length: 1200 }, (_, i) => i), 0, 1, 0]);
    assert.ok(all.every((e) => e.position <= through));
    const odd = await collect(store.readByStream({ streamPrefix: `${base}-`, through: await store.headPosition(), types: ['Odd'] }));
    assert.equal(odd.map((e) => `${e.stream.slice(base.length)}:${e.revision}`), [...Array.from({ length: 600 }, (_, i) => `-a:${2 * i + 1}`), '-b:1', '-c:1']);
  });

  test('splitStreams cuts a prefix\'s streams into runs of about as many events; readByStream reads one run from cut to cut', async (ctx) => {
    const store = ctx.fx.store;
    if (!store.readByStream || !store.splitStreams) {
      assert.not.ok(options.readsByStream, `${name} should read by stream and split its streams`);
      console.log(`skipped: splitStreams on ${name} (optional, with readByStream; its rebuilds read the log in log order)`);
      return;
    }
    const base = s(ctx, 'split');
    // 40 streams of 1 to 40 events (820 in all), appended in no name order, and one outside the prefix.
    const sizes = Array.from({ length: 40 }, (_, i) => (i * 17) % 40 + 1);
    for (const [i, n] of sizes.entries()) await store.append(`${base}-${String((i * 7) % 40).padStart(2, '0')}`, Array.from({ length: n }, (_, k) => ev('Even', { k })));
    await store.append(`${base}x-outside`, [ev('Even')]);
    const through = await store.headPosition();
    const whole = await collect(store.readByStream({ streamPrefix: `${base}-`, through }));
    assert.is(whole.length, 820);
    assert.equal(await store.splitStreams({ streamPrefix: `${base}-`, parts: 1 }), []);
    for (const parts of [2, 3, 4]) {
      const cuts = await store.splitStreams({ streamPrefix: `${base}-`, parts });
      assert.is(cuts.length, parts - 1, `${parts} parts`);
      const runs: RecordedEvent[][] = [];
      for (let k = 0; k < parts; k++) {
        const from = k === 0 ? {} : { from: cuts[k - 1]! };
        const before = k === parts - 1 ? {} : { before: cuts[k]! };
        runs.push(await collect(store.readByStream({ streamPrefix: `${base}-`, through, ...from, ...before })));
      }
      // Together the runs read what one read does, in the same order; each within a stream's length (40) of an even share.
      assert.equal(runs.flat().map((e) => e.id), whole.map((e) => e.id));
      for (const run of runs) assert.ok(Math.abs(run.length - 820 / parts) <= 40, `${parts} parts: a run of ${run.length}`);
      // A cut is the first stream of its run: no stream is read in two.
      for (let k = 1; k < parts; k++) assert.is(runs[k]![0]!.stream, cuts[k - 1]);
    }
  });

  test('appendMany appends to several streams and reports each result', async (ctx) => {
    const a = s(ctx, 'many-a');
    const b = s(ctx, 'many-b');
    const results = await ctx.fx.store.appendMany([
      { stream: a, events: [ev('A1'), ev('A2')], expectedRevision: 'no_stream' },
      { stream: b, events: [ev('B1')], expectedRevision: 'no_stream' },
    ]);
    assert.equal(results.map((r) => r.revision), [1, 0]);
    const lastA = (await collect(ctx.fx.store.readStream(a))).at(-1)!;
    const lastB = (await collect(ctx.fx.store.readStream(b))).at(-1)!;
    assert.is(lastA.revision, 1);
    // An atomic multi-stream append may report the commit's last position for every stream (KurrentDB does).
    assert.ok(results[0]!.position >= lastA.position && results[1]!.position >= lastB.position);
    assert.is(Math.max(...results.map((r) => r.position)), Math.max(lastA.position, lastB.position));
  });

  test('appendMany: a conflict on the first stream writes nothing at all, on every engine', async (ctx) => {
    const taken = s(ctx, 'first-taken');
    const fresh = s(ctx, 'first-fresh');
    await ctx.fx.store.append(taken, [ev('Winner')], 'no_stream');
    try {
      await ctx.fx.store.appendMany([
        { stream: taken, events: [ev('Loser')], expectedRevision: 'no_stream' },
        { stream: fresh, events: [ev('Fresh')], expectedRevision: 'no_stream' },
      ]);
      assert.unreachable('the first stream conflicts');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
      assert.is((e as WrongExpectedRevisionError).stream, taken);
      assert.is((e as WrongExpectedRevisionError).actual, 0);
    }
    assert.equal(await collect(ctx.fx.store.readStream(fresh)), []);
    assert.equal((await collect(ctx.fx.store.readStream(taken))).map((e) => e.type), ['Winner']);
  });

  test('appendMany: a conflict on a later stream writes nothing where atomic, the streams before it where in order', async (ctx) => {
    // A multi-stream append first, so an engine that learns its capability from the server knows it.
    await ctx.fx.store.appendMany([
      { stream: s(ctx, 'learn-a'), events: [ev('L')], expectedRevision: 'no_stream' },
      { stream: s(ctx, 'learn-b'), events: [ev('L')], expectedRevision: 'no_stream' },
    ]);
    const atomic = ctx.fx.store.atomicAppendMany;
    assert.type(atomic, 'boolean', 'known after a multi-stream append');
    const fresh = s(ctx, 'later-fresh');
    const taken = s(ctx, 'later-taken');
    await ctx.fx.store.append(taken, [ev('Winner')], 'no_stream');
    try {
      await ctx.fx.store.appendMany([
        { stream: fresh, events: [ev('Fresh')], expectedRevision: 'no_stream' },
        { stream: taken, events: [ev('Loser')], expectedRevision: 'no_stream' },
      ]);
      assert.unreachable('the second stream conflicts');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
      assert.is((e as WrongExpectedRevisionError).stream, taken);
    }
    assert.equal((await collect(ctx.fx.store.readStream(fresh))).map((e) => e.type), atomic ? [] : ['Fresh']);
    assert.equal((await collect(ctx.fx.store.readStream(taken))).map((e) => e.type), ['Winner']);
  });

  test('appendMany repeated with the same event ids is a no-op with the same revisions and highest position', async (ctx) => {
    const a = s(ctx, 'again-a');
    const b = s(ctx, 'again-b');
    const appends = [
      { stream: a, events: [ev('A1'), ev('A2')], expectedRevision: 'no_stream' as const },
      { stream: b, events: [ev('B1')], expectedRevision: 'no_stream' as const },
    ];
    const first = await ctx.fx.store.appendMany(appends);
    const again = await ctx.fx.store.appendMany(appends);
    assert.equal(again.map((r) => r.revision), first.map((r) => r.revision));
    assert.is(Math.max(...again.map((r) => r.position)), Math.max(...first.map((r) => r.position)));
    assert.equal((await collect(ctx.fx.store.readStream(a))).map((e) => e.type), ['A1', 'A2']);
    assert.equal((await collect(ctx.fx.store.readStream(b))).map((e) => e.type), ['B1']);
  });

  test('appendMany retried after only its first stream was written writes the rest once', async (ctx) => {
    const claim = s(ctx, 'partial-claim');
    const object = s(ctx, 'partial-object');
    const appends = [
      { stream: claim, events: [ev('Claimed')], expectedRevision: 'no_stream' as const },
      { stream: object, events: [ev('Created'), ev('Changed')], expectedRevision: 'no_stream' as const },
    ];
    // What an engine appending in order leaves when it stops between the two.
    const written = await ctx.fx.store.append(claim, appends[0]!.events, 'no_stream');
    const results = await ctx.fx.store.appendMany(appends);
    assert.equal(results.map((r) => r.revision), [0, 1]);
    assert.is(results[0]!.revision, written.revision);
    assert.equal((await collect(ctx.fx.store.readStream(claim))).map((e) => e.id), [appends[0]!.events[0]!.id]);
    assert.equal((await collect(ctx.fx.store.readStream(object))).map((e) => e.type), ['Created', 'Changed']);
  });

  test('a claim-first commit that loses its claim to a concurrent one leaves no orphan object', async (ctx) => {
    const claim = s(ctx, 'dependent');
    const winner = s(ctx, 'object-winner');
    const loser = s(ctx, 'object-loser');
    const commit = (object: string, claimRevision: 'no_stream' | number) => [
      { stream: claim, events: [ev('DependentObjectClaimed', { ref: object })], expectedRevision: claimRevision },
      { stream: object, events: [ev('ObjectCreated', { ref: object })], expectedRevision: 'no_stream' as const },
    ];
    // Both decided on the empty slot; the winner commits first.
    const loserCommit = commit(loser, 'no_stream');
    await ctx.fx.store.appendMany(commit(winner, 'no_stream'));
    try {
      await ctx.fx.store.appendMany(loserCommit);
      assert.unreachable('the slot is taken');
    } catch (e) {
      assert.instance(e, WrongExpectedRevisionError);
      assert.is((e as WrongExpectedRevisionError).stream, claim);
    }
    assert.equal(await collect(ctx.fx.store.readStream(loser)), [], 'no orphan object');
    assert.equal((await collect(ctx.fx.store.readStream(claim))).map((e) => (e.data as { ref: string }).ref), [winner]);
    assert.is((await collect(ctx.fx.store.readStream(winner))).length, 1);
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

  test('importEvents refuses a store that holds events, importing nothing', async (ctx) => {
    await ctx.fx.store.append(s(ctx, 'present'), [ev('Present')]);
    const log = exportedLog(s(ctx, 'refused-'));
    try {
      await ctx.fx.store.importEvents(source(log));
      assert.unreachable('a store with events must refuse an import');
    } catch (e) {
      assert.instance(e, StoreNotEmptyError);
      assert.match((e as Error).message, 'not empty');
    }
    assert.equal(await collect(ctx.fx.store.readStream(log[0]!.stream)), []);
  });

  const openEmpty = options.openEmpty;
  if (!openEmpty) {
    console.log(`skipped: EventStore contract ${name}, importing into an empty store (${options.noEmptyStore ?? 'no empty store'})`);
    return test;
  }

  test('importEvents loads an exported log into an empty store: order, ids, streams, revisions, data, metadata and times kept', async () => {
    const fx = await openEmpty();
    try {
      const log = exportedLog(fx.prefix);
      const result = await fx.store.importEvents(source(log));
      assert.is(result.events, log.length);
      const all = await collect(fx.store.readAll());
      assert.is(result.head, all[all.length - 1]!.position);
      assert.is(await fx.store.headPosition(), result.head);
      const shape = (e: RecordedEvent | ExportedEvent) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata, stream: e.stream, revision: e.revision, recordedAt: e.recordedAt.toISOString() });
      assert.equal(all.map(shape), log.map(shape));
      assert.ok(all.every((e, i) => i === 0 || e.position > all[i - 1]!.position));
      assert.equal((await collect(fx.store.readStream(`${fx.prefix}a`))).map((e) => e.revision), [0, 1, 2]);
      // Reading up to a time goes by the imported times.
      assert.equal((await collect(fx.store.readAll({ until: log[2]!.recordedAt }))).map((e) => e.id), log.slice(0, 3).map((e) => e.id));
      // Appends carry on where the imported streams ended, recorded after the imported times.
      const next = await fx.store.append(`${fx.prefix}b`, [ev('After')], 1);
      assert.is(next.revision, 2);
      const [after] = await collect(fx.store.readStream(`${fx.prefix}b`, { fromRevision: 2 }));
      assert.ok(after!.recordedAt.getTime() >= log[log.length - 1]!.recordedAt.getTime());
      try {
        await fx.store.importEvents(source(exportedLog(`${fx.prefix}again-`)));
        assert.unreachable('a second import must be refused');
      } catch (e) {
        assert.instance(e, StoreNotEmptyError);
      }
    } finally {
      await fx.close();
    }
  });

  test('importEvents refuses an event whose revision does not follow its stream', async () => {
    const fx = await openEmpty();
    try {
      const log = exportedLog(fx.prefix);
      const gap = [log[0]!, { ...log[2]!, revision: 2 }];
      try {
        await fx.store.importEvents(source(gap));
        assert.unreachable('a gap in a stream must be refused');
      } catch (e) {
        assert.instance(e, WrongExpectedRevisionError);
        assert.is((e as WrongExpectedRevisionError).stream, log[0]!.stream);
      }
    } finally {
      await fx.close();
    }
  });

  return test;
};
