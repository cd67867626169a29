/**
 * Several runners on one store (as several processes on one data directory): one lease holder
 * folds each projection, the others stand by and follow its checkpoints; a clean stop hands over
 * at once, a lapsed lease is taken over, and a holder that lost its lease without noticing stands
 * by as soon as it learns (a refused commit or a checkpoint moved by the new holder): no retry
 * loop, no reader left open, no folding beside the new holder.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino } from 'pino';
import type { EventStore, RecordedEvent } from '../../src/events/event-store.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../../src/projections/projector.ts';
import { CheckpointConflictError, type ReadStore } from '../../src/projections/read-store.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { tempDir } from '../support/tmp.ts';

interface Tally {
  id: string;
  count: number;
  seq: number[];
  [k: string]: unknown;
}

const tally = (): Projector => ({
  name: 'tally',
  collections: [{ name: 'tallies', indexes: ['count'] }],
  handles: ['Counted'],
  apply: foldDocuments<Tally>(
    'tallies',
    (e) => e.stream,
    (doc, e: RecordedEvent) => ({ id: e.stream, count: (doc?.count ?? 0) + 1, seq: [...(doc?.seq ?? []), (e.data as { n: number }).n] }),
  ),
});
const counted = (n: number) => ({ id: randomUUID(), type: 'Counted', data: { n } });

/** One "process": its own connections to the shared files. */
interface Node {
  events: SqliteEventStore;
  reads: SqliteReadStore;
}

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const setup = () => {
  const tmp = tempDir();
  const nodes: Node[] = [];
  const node = (): Node => {
    const n = { events: openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 10 }), reads: openSqliteReadStore(join(tmp.dir, 'read.db')) };
    nodes.push(n);
    return n;
  };
  const close = async () => {
    for (const n of nodes) {
      await n.events.close();
      await n.reads.close();
    }
    tmp.remove();
  };
  return { node, close };
};

const LEASES = { leaseTtlMs: 400, leaseRenewMs: 100, followMs: 50, retryDelayMs: 50 };

const runner = (n: { events: EventStore; reads: ReadStore }, owner: string, extra: Partial<ConstructorParameters<typeof ProjectionRunner>[0]> = {}) =>
  new ProjectionRunner({ events: n.events, reads: n.reads, projectors: [tally()], batchSize: 16, owner, ...LEASES, ...extra });

const holderOf = async (reads: ReadStore) => (await reads.getLease('tally'))?.owner;

const test = suite('ProjectionRunner: leases across processes');

test('one runner holds the lease and folds; the other stands by, follows its checkpoints and moves its version', async () => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  const one = runner(a, 'one');
  await one.start();
  const two = runner(b, 'two');
  await two.start();
  assert.is(await holderOf(a.reads), 'one');
  const versionBefore = two.version('tally');
  const appended = await b.events.append('s', Array.from({ length: 40 }, (_, i) => counted(i)));
  // The standby's waitFor is released by the checkpoint the holder stores.
  await two.waitFor(appended.position, { timeoutMs: 10_000 });
  assert.equal((await b.reads.get<Tally>('tallies', 's'))?.seq, Array.from({ length: 40 }, (_, i) => i));
  assert.ok(two.version('tally') > versionBefore, 'the standby saw the read model move');
  const [status] = await two.status();
  assert.is(status?.checkpoint, appended.position);
  assert.is(status?.state, 'live');
  assert.equal(status?.lease, { owner: 'one', here: false });
  assert.equal((await one.status())[0]?.lease, { owner: 'one', here: true });
  await one.stop();
  await two.stop();
  await close();
});

test('a clean stop releases the lease: the standby takes over at once and carries on without gaps or repeats', async () => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  const one = runner(a, 'one', { leaseTtlMs: 60_000, leaseRenewMs: 100 });
  await one.start();
  const two = runner(b, 'two', { leaseTtlMs: 60_000, leaseRenewMs: 100 });
  await two.start();
  const first = await a.events.append('s', Array.from({ length: 30 }, (_, i) => counted(i)));
  await one.waitFor(first.position);
  await one.stop();
  assert.is(await holderOf(a.reads), undefined, 'released');
  // With a one-minute TTL only the release lets the standby in this soon.
  await until('the standby takes the lease', async () => (await holderOf(b.reads)) === 'two');
  const second = await b.events.append('s', Array.from({ length: 30 }, (_, i) => counted(30 + i)));
  await two.waitFor(second.position, { timeoutMs: 10_000 });
  assert.equal((await b.reads.get<Tally>('tallies', 's'))?.seq, Array.from({ length: 60 }, (_, i) => i));
  await two.stop();
  await close();
});

/**
 * A holder whose renewals stop reaching the store (a paused process, a partition) believes it
 * holds the lease while it lapses and the standby takes it over. It learns so in one of two ways,
 * by which comes first: its next commit is refused (it folded the new events before the new
 * holder committed), or it sees the stored checkpoint moved by another process (the new holder
 * committed before it had folded them). Either way it stands by: no retry loop, no reader left open.
 */
const lapsedLease = async (first: 'old holder folds first' | 'new holder commits first') => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  let deaf = false;
  let resumeAt = Infinity;
  let conflicts = 0;
  let open = 0;
  let oldCommitting = false;
  // Batches past this position wait for `released` before the old holder sees them.
  let holdAfter = Infinity;
  let released = false;
  const logged: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
  const deafReads = new Proxy(a.reads, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'renewLease') return async (...args: unknown[]) => (deaf ? true : (value as (...a: unknown[]) => Promise<boolean>).apply(target, args));
      if (prop === 'commitBatch') {
        return async (...args: unknown[]) => {
          // Paused: its commit reaches the store only after the new holder has committed.
          if (deaf) {
            oldCommitting = true;
            await until('the new holder commits', async () => ((await target.getCheckpoint('tally'))?.position ?? 0) >= resumeAt);
          }
          try {
            return await (value as (...a: unknown[]) => Promise<void>).apply(target, args);
          } catch (e) {
            if (e instanceof CheckpointConflictError) conflicts++;
            throw e;
          }
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  // The new holder commits only once the old one is inside its own commit (when that is the order asked for).
  const newReads = new Proxy(b.reads, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop === 'commitBatch' && first === 'old holder folds first') {
        return async (...args: unknown[]) => {
          if (deaf) await until('the old holder tries to commit', () => oldCommitting);
          return (value as (...a: unknown[]) => Promise<void>).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  const countingEvents = new Proxy(a.events, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'subscribe') {
        return (options: Parameters<EventStore['subscribe']>[0], handler: Parameters<EventStore['subscribe']>[1]) => {
          const sub = target.subscribe(options, async (batch) => {
            if (batch.some((e) => e.position > holdAfter)) await until('the old holder is let read on', () => released);
            return handler(batch);
          });
          open++;
          let closed = false;
          const done = () => (closed ? undefined : ((closed = true), open--));
          sub.done.then(done, done);
          return { ...sub, stop: async () => (await sub.stop(), done()) };
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const one = runner({ events: countingEvents, reads: deafReads }, 'one', { logger });
  await one.start();
  const two = runner({ events: b.events, reads: newReads }, 'two');
  await two.start();
  // Stopped whatever happens: a failed assertion must fail the run, not leave runners (and the run) going.
  try {
      const firstAppend = await a.events.append('s', [counted(0)]);
      await one.waitFor(firstAppend.position);
      assert.is(open, 1, 'one reader while holding');
      deaf = true;
      await until('the standby takes the lapsed lease', async () => (await holderOf(b.reads)) === 'two');
      resumeAt = (await a.events.headPosition()) + 20;
      if (first === 'new holder commits first') holdAfter = resumeAt - 20;
      const second = await b.events.append('s', Array.from({ length: 20 }, (_, i) => counted(1 + i)));
      assert.is(second.position, resumeAt);
      await two.waitFor(second.position, { timeoutMs: 10_000 });
      if (first === 'new holder commits first') {
        // Its reader is held up before the new events: it can only learn from the stored checkpoint.
        await until('the old holder stands by', () => logged.some((l) => l.includes('standing by')));
        released = true;
      }
      await until('the old holder closes its reader', () => open === 0);
      const conflictsThen = conflicts;
      if (first === 'old holder folds first') assert.is(conflictsThen, 1, 'its one commit is refused');
      else assert.is(conflictsThen, 0, 'it stood by without trying to commit');
      assert.equal((await one.status())[0]?.lease, { owner: 'two', here: false });
      // Standing by: it neither folds nor retries, and it follows the new holder's checkpoints.
      const third = await b.events.append('s', Array.from({ length: 20 }, (_, i) => counted(21 + i)));
      await one.waitFor(third.position, { timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 300));
      assert.is(conflicts, conflictsThen, 'no retries while standing by');
      assert.is(open, 0);
      assert.equal((await b.reads.get<Tally>('tallies', 's'))?.seq, Array.from({ length: 41 }, (_, i) => i));
  } finally {
    deaf = false;
    released = true;
    await one.stop();
    await two.stop();
    await close();
  }
};

test('a lapsed lease is taken over: the holder that lost it without noticing fails its one commit and stands by', () => lapsedLease('old holder folds first'));

test('a lapsed lease is taken over: the holder that lost it sees the new holder move the checkpoint and stands by', () => lapsedLease('new holder commits first'));

test('a follower (the api role) never takes a lease, and waits for the checkpoints the holder stores', async () => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  const follower = runner(b, 'api', { fold: false });
  await follower.start();
  const appended = await b.events.append('s', [counted(0), counted(1)]);
  await new Promise((r) => setTimeout(r, 250));
  assert.is(await holderOf(b.reads), undefined, 'nobody folds yet');
  assert.is((await b.reads.getCheckpoint('tally')), null);
  const waiting = follower.waitFor(appended.position, { timeoutMs: 10_000 });
  const holder = runner(a, 'projector');
  await holder.start();
  await waiting;
  assert.equal((await b.reads.get<Tally>('tallies', 's'))?.seq, [0, 1]);
  assert.is(await holderOf(b.reads), 'projector');
  await follower.stop();
  assert.is(await holderOf(b.reads), 'projector', 'stopping a follower changes no lease');
  await holder.stop();
  await close();
});

test('a checkpoint advanced by events that change nothing is stored soon, so followers waiting for it are released', async () => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  const holder = runner(a, 'projector');
  await holder.start();
  const follower = runner(b, 'api', { fold: false });
  await follower.start();
  // An event the tally ignores: the holder's checkpoint moves without any document write.
  const ignored = await a.events.append('other', [{ type: 'Ignored', data: {} }]);
  await holder.waitFor(ignored.position);
  await follower.waitFor(ignored.position, { timeoutMs: 10_000, projections: ['tally'] });
  assert.equal(await b.reads.getCheckpoint('tally'), { position: ignored.position });
  await follower.stop();
  await holder.stop();
  await close();
});

test('a follower knows which documents the holder wrote where the projector names them from the events, and nothing where it does not', async () => {
  const { node, close } = setup();
  const a = node();
  const b = node();
  const named: Projector = { ...tally(), documentsOf: { tallies: (e) => e.stream } };
  const holder = runner(a, 'projector', { projectors: [named] });
  await holder.start();
  const follower = runner(b, 'api', { fold: false, projectors: [named] });
  const blind = runner(node(), 'api', { fold: false });
  await follower.start();
  await blind.start();
  try {
  const first = await a.events.append('s1', [counted(0)]);
  for (const r of [follower, blind]) await r.waitFor(first.position, { timeoutMs: 10_000, projections: ['tally'] });
  const since = follower.version('tally');
  const blindSince = blind.version('tally');
  const second = await a.events.append('s2', [counted(1), counted(2)]);
  await a.events.append('other', [{ type: 'Ignored', data: {} }]);
  const third = await a.events.append('s3', [counted(3)]);
  for (const r of [follower, blind]) await r.waitFor(third.position, { timeoutMs: 10_000, projections: ['tally'] });
  assert.ok(follower.version('tally') > since, 'the follower saw the checkpoint move');
  assert.ok(second.position < third.position);
  // Before: every move seen from another process was "anything may have changed".
  assert.equal([...(follower.changedSince('tally', 'tallies', since) ?? ['not known'])].sort(), ['s2', 's3']);
  assert.is(follower.changedSince('tally', 'other-collection', since), undefined);
  assert.is(blind.changedSince('tally', 'tallies', blindSince), undefined, 'a projector that names nothing: not known');
  } finally {
    for (const r of [follower, blind, holder]) await r.stop();
    await close();
  }
});

test.run();
