import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TurnBatchedDestination, type LineSink } from '../../src/app/log-destination.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('log destination: one write per turn of the event loop');

/** A sink that keeps what it was handed, write by write, and what was written past it at exit. */
const recording = () => {
  const writes: string[] = [];
  const synced: string[] = [];
  let syncFlushes = 0;
  const sink: LineSink = {
    write: (chunk) => writes.push(chunk),
    flushSync: () => void syncFlushes++,
  };
  const destination = () => new TurnBatchedDestination(sink, (chunk) => synced.push(chunk));
  return { destination, writes, synced, syncFlushes: () => syncFlushes };
};
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const messages = (chunk: string) => chunk.trimEnd().split('\n').map((line) => (JSON.parse(line) as { msg: string }).msg);

test('the lines of one turn reach the sink as one write, in order; the next turn makes another', async () => {
  const { destination, writes } = recording();
  const logger = pino({ level: 'info' }, destination());
  for (let i = 0; i < 50; i++) logger.info({ i }, `request ${i}`);
  assert.equal(writes.length, 0, 'nothing is written before the turn ends');
  await nextTurn();
  assert.equal(writes.length, 1);
  assert.equal(messages(writes[0]!), Array.from({ length: 50 }, (_, i) => `request ${i}`));
  logger.warn('later');
  await nextTurn();
  assert.equal(writes.length, 2);
  assert.equal(messages(writes[1]!), ['later']);
  await nextTurn();
  assert.equal(writes.length, 2, 'a turn with no lines writes nothing');
});

test('logger.flush() hands on what is waiting at once', () => {
  const { destination, writes } = recording();
  const logger = pino({ level: 'info' }, destination());
  logger.info('one');
  logger.error('two');
  logger.flush();
  assert.equal(writes.length, 1);
  assert.equal(messages(writes[0]!), ['one', 'two']);
});

test('flushSync (an exiting process) has the sink write what it holds, then writes the waiting lines itself', () => {
  const { destination, writes, synced, syncFlushes } = recording();
  const turnBatched = destination();
  const logger = pino({ level: 'info' }, turnBatched);
  logger.info('three');
  logger.info('four');
  turnBatched.flushSync();
  assert.is(syncFlushes(), 1);
  // Not handed to the sink: an asynchronous sink would write them on a thread the exit does not wait for.
  assert.equal(writes, []);
  assert.equal(synced.map(messages), [['three', 'four']]);
  turnBatched.flushSync();
  assert.is(synced.length, 1, 'nothing waiting: nothing more written');
});

test("logger.flush(cb) hears back once the sink's own flush has", async () => {
  const writes: string[] = [];
  const sink: LineSink = { write: (chunk) => writes.push(chunk), flush: (cb) => setImmediate(() => cb()) };
  const logger = pino({ level: 'info' }, new TurnBatchedDestination(sink, () => assert.unreachable('no exit here')));
  logger.info('before the flush');
  await new Promise<void>((resolve, reject) => logger.flush((err) => (err ? reject(err) : resolve())));
  assert.equal(writes.map(messages), [['before the flush']]);
});

// The service's logger in a process of its own: what it logged in the turn the process ends in is
// still written, whether it exits or dies of an uncaught exception. The first line is waited for in the
// file itself: a write still under way on libuv's thread pool when the process exits may land after the
// exit's own lines, or not at all, as before. (logger.flush(cb) does not wait for it: sonic-boom without
// a minLength calls back at once, which let the exit overtake the first line now and then.)
const runChild = (file: string, ending: string) =>
  spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { serviceLogger } from ${JSON.stringify(new URL('../../src/app/log-destination.ts', import.meta.url).href)};
       import { readFileSync } from 'node:fs';
       const logger = serviceLogger('info', ${JSON.stringify(file)});
       logger.info('first');
       const end = () => { logger.info('second'); logger.info('third'); ${ending} };
       const whenWritten = () => (readFileSync(${JSON.stringify(file)}, 'utf8').endsWith('\\n') ? end() : setTimeout(whenWritten, 5));
       whenWritten();`,
    ],
    { encoding: 'utf8', timeout: 30_000 },
  );

test('the last turn is written when the process exits', () => {
  const tmp = tempDir('log-exit');
  try {
    const file = join(tmp.dir, 'service.log');
    const child = runChild(file, 'process.exit(3);');
    assert.is(child.status, 3, child.stderr);
    assert.equal(messages(readFileSync(file, 'utf8')), ['first', 'second', 'third']);
  } finally {
    tmp.remove();
  }
});

test('and when it dies of an uncaught exception', () => {
  const tmp = tempDir('log-throw');
  try {
    const file = join(tmp.dir, 'service.log');
    const child = runChild(file, "throw new Error('boom');");
    assert.is(child.status, 1);
    assert.match(child.stderr, 'boom');
    assert.equal(messages(readFileSync(file, 'utf8')), ['first', 'second', 'third']);
  } finally {
    tmp.remove();
  }
});

test.run();
