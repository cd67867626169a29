import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RebuildProgress } from '../../../src/projections/rebuild.ts';
import { statusOf, type Observed } from '../../../src/projections/runner/status.ts';

const progress = (phase: RebuildProgress['phase'], error?: string) => ({
  projection: 'p',
  processed: 0,
  position: 0,
  head: 0,
  eventsPerSecond: 0,
  etaSeconds: null,
  phase,
  ...(error ? { error } : {}),
});
const run = (over: Partial<Observed> = {}): Observed => ({ projector: { name: 'p' }, checkpoint: 10, stopped: false, feed: {}, ...over });

const test = suite('runner status');

test('reads checkpoint, head and lag; live at the head, catching up behind it', () => {
  assert.equal(statusOf(run(), 10, false), { name: 'p', state: 'live', checkpoint: 10, head: 10, lag: 0 });
  assert.equal(statusOf(run(), 25, false), { name: 'p', state: 'catching-up', checkpoint: 10, head: 25, lag: 15 });
  assert.is(statusOf(run({ checkpoint: 30 }), 25, false).lag, 0, 'a head read before the last commit never shows a negative lag');
});

test('without a reader it is starting', () => {
  assert.is(statusOf(run({ feed: undefined }), 10, false).state, 'starting');
});

test('a standby (folded by another process) reads live or catching up from the stored checkpoint, and names the lease holder', () => {
  const standby = statusOf(run({ feed: undefined, standby: true }), 10, false, { owner: 'node-2', here: false });
  assert.equal(standby, { name: 'p', state: 'live', checkpoint: 10, head: 10, lag: 0, lease: { owner: 'node-2', here: false } });
  assert.is(statusOf(run({ feed: undefined, standby: true }), 12, false, null).state, 'catching-up');
  assert.is(statusOf(run({ feed: undefined, standby: true }), 12, false, null).lease, null);
});

test('a rebuild under way shows, from this process or from a stored rebuild checkpoint; an ended one does not', () => {
  assert.is(statusOf(run(), 10, true).state, 'rebuilding');
  assert.is(statusOf(run({ rebuild: progress('building') }), 10, false).state, 'rebuilding');
  assert.is(statusOf(run({ rebuild: progress('done') }), 10, false).state, 'live');
  const failed = statusOf(run({ rebuild: progress('building', 'disk full') }), 10, false);
  assert.is(failed.state, 'live');
  assert.is(failed.rebuild?.error, 'disk full');
});

test('failed wins over rebuilding and shows the error; stopped wins over everything', () => {
  const failed = statusOf(run({ failed: new Error('boom'), rebuild: progress('building') }), 10, true);
  assert.is(failed.state, 'failed');
  assert.is(failed.lastError, 'boom');
  assert.is(statusOf(run({ stopped: true, failed: new Error('boom') }), 10, true).state, 'stopped');
});

test.run();
