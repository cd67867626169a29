/**
 * The instant the `reporting` benchmark asks `at` answers for lies half a snapshot interval past the
 * middle of its history, between two events: at the middle itself (a position the runner takes a
 * snapshot at) an answer replays nothing, and the figures were the best case.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateHistory, historyPlan, MID_PAST_SNAPSHOT } from '../../bench/domain-support.ts';

test('the `at` instant is MID_PAST_SNAPSHOT events past the middle of the history, between two events', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-history-instant-'));
  try {
    const plan = historyPlan(0.02);
    const history = await generateHistory(plan, dir);
    const db = new Database(join(dir, 'events.db'), { readonly: true });
    try {
      const count = (sql: string) => (db.prepare(sql).get(history.midMs) as { n: number }).n;
      assert.is(count('SELECT count(*) AS n FROM events WHERE recorded_at <= ?'), plan.events / 2 + MID_PAST_SNAPSHOT + 1);
      assert.is(count('SELECT count(*) AS n FROM events WHERE recorded_at = ?'), 0, 'no event is recorded at the instant itself');
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
