import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BatchHandler, RecordedEvent, SubscribeOptions } from '../../../src/events/event-store.ts';
import { Feed } from '../../../src/projections/runner/feed.ts';

const event = (position: number): RecordedEvent => ({ id: `e${position}`, type: 'T', data: {}, metadata: {}, stream: 's', revision: position, position, recordedAt: new Date(0) });
const events = (...positions: number[]) => positions.map(event);

interface M {
  name: string;
  folded: number;
  stopped: boolean;
}
const member = (name: string, folded = 0): M => ({ name, folded, stopped: false });

/** A log whose batches the test hands out itself. */
const fakeLog = () => {
  const log = {
    options: undefined as SubscribeOptions | undefined,
    handler: undefined as BatchHandler | undefined,
    stops: 0,
    fail: (_: Error) => undefined as void,
    events: {
      subscribe: (options: SubscribeOptions, handler: BatchHandler) => {
        log.options = options;
        log.handler = handler;
        const done = new Promise<void>((_, reject) => (log.fail = reject));
        return { stop: async () => void log.stops++, done };
      },
    },
    push: (...positions: number[]) => log.handler!(events(...positions)),
  };
  return log;
};

/** Opens a feed whose folds are recorded as `name: positions (more)` and advance the member. */
const open = (members: M[], batchSize: number) => {
  const log = fakeLog();
  const folds: string[] = [];
  const failures: string[] = [];
  const feed = new Feed(members);
  feed.open({
    events: log.events,
    after: Math.min(...members.map((m) => m.folded)),
    batchSize,
    fold: async (m, batch, more) => {
      folds.push(`${m.name}: ${batch.map((e) => e.position).join(',')}${more ? ' (more)' : ''}`);
      m.folded = batch[batch.length - 1]!.position;
    },
    failed: (m, error) => void failures.push(`${m.name}: ${error.message}`),
  });
  return { log, feed, folds, failures };
};

const test = suite('runner feed');

test('reads once from the oldest member and hands each only what lies past its own position', async () => {
  const a = member('a', 0);
  const b = member('b', 2);
  const { log, folds } = open([a, b], 3);
  assert.equal(log.options, { after: 0, batchSize: 3 });
  await log.push(1, 2, 3);
  await log.push(4);
  assert.equal(folds, ['a: 1,2,3 (more)', 'b: 3 (more)', 'a: 4', 'b: 4']);
});

test("the members' folds of a batch start together, and the next batch waits for all of them", async () => {
  // Their commits are then asked in one turn, and the embedded store commits them in one transaction.
  const log = fakeLog();
  const started: string[] = [];
  const release: (() => void)[] = [];
  const a = member('a');
  const b = member('b');
  const feed = new Feed([a, b]);
  feed.open({
    events: log.events,
    after: 0,
    batchSize: 10,
    fold: (m, batch) => {
      started.push(`${m.name}: ${batch.map((e) => e.position).join(',')}`);
      return new Promise<void>((resolve) => release.push(() => ((m.folded = batch[batch.length - 1]!.position), resolve())));
    },
    failed: () => undefined,
  });
  const delivered = log.push(1, 2);
  await Promise.resolve();
  assert.equal(started, ['a: 1,2', 'b: 1,2'], 'b began before a ended');
  let done = false;
  void delivered.then(() => (done = true));
  release[0]!();
  await new Promise((r) => setImmediate(r));
  assert.is(done, false, 'the batch is not done while b folds');
  release[1]!();
  await delivered;
});

test('a member that has folded the whole batch, or has stopped, is skipped', async () => {
  const a = member('a', 5);
  const b = member('b', 0);
  const { log, folds } = open([a, b], 10);
  await log.push(4, 5);
  b.stopped = true;
  await log.push(6);
  assert.equal(folds, ['b: 4,5', 'a: 6']);
});

test('the last member to leave stops the reader, and nothing more is handed out', async () => {
  const a = member('a');
  const b = member('b');
  const { log, feed, folds } = open([a, b], 10);
  await feed.leave(a);
  assert.is(log.stops, 0);
  await log.push(1);
  assert.equal(folds, ['b: 1']);
  await feed.leave(b);
  assert.is(log.stops, 1);
  await log.push(2);
  assert.equal(folds, ['b: 1']);
});

test('a failing reader tells every member still on it', async () => {
  const a = member('a');
  const b = member('b');
  const c = member('c');
  const { log, feed, failures } = open([a, b, c], 10);
  await feed.leave(b);
  log.fail(new Error('log gone'));
  await new Promise((r) => setImmediate(r));
  assert.equal(failures, ['a: log gone', 'c: log gone']);
});

test.run();
