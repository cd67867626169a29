import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CATCH_UP_COMMIT_MS,
  CATCH_UP_PENDING_DOCS,
  PERSIST_IDLE_MS,
  commitNow,
  needsWrite,
} from '../../../src/projections/runner/commit-policy.ts';

const test = suite('runner commit policy');

test('a live batch (not full) commits at once, however small and young its window', () => {
  assert.ok(commitNow(false, 0, 0));
  assert.ok(commitNow(false, 1, 1));
});

test('full batches keep the window open until it is old enough or large enough', () => {
  assert.not.ok(commitNow(true, 1, 0));
  assert.not.ok(commitNow(true, CATCH_UP_PENDING_DOCS, CATCH_UP_COMMIT_MS));
  assert.ok(commitNow(true, 1, CATCH_UP_COMMIT_MS + 1), 'an old window commits');
  assert.ok(commitNow(true, CATCH_UP_PENDING_DOCS + 1, 0), 'a large window commits');
});

test('a commit without changes skips its transaction until the stored checkpoint lags too long', () => {
  assert.not.ok(needsWrite(0, 0));
  assert.not.ok(needsWrite(0, PERSIST_IDLE_MS));
  assert.ok(needsWrite(0, PERSIST_IDLE_MS + 1));
  assert.ok(needsWrite(1, 0), 'changed documents are always written');
});

test.run();
