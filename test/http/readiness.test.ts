import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { ProjectionStatus } from '../../src/projections/runner.ts';
import { checkReadiness, type ReadinessDeps } from '../../src/http/readiness.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('Readiness: engines answer, projections live within the lag');

const status = (name: string, lag: number, state: ProjectionStatus['state'] = lag === 0 ? 'live' : 'catching-up'): ProjectionStatus => ({
  name,
  state,
  checkpoint: 100 - lag,
  head: 100,
  lag,
});

/** Real embedded engines in a fresh directory, and a fixed projection status. */
const withEngines = async (fn: (deps: ReadinessDeps, engines: { closeReads(): Promise<void> }) => Promise<void>, projections: ProjectionStatus[] = [status('objects', 0)]) => {
  const tmp = tempDir('svc-readiness');
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  let readsOpen = true;
  try {
    await fn({ events, reads, status: async () => projections, maxLag: 10, timeoutMs: 5_000 }, {
      closeReads: async () => {
        readsOpen = false;
        await reads.close();
      },
    });
  } finally {
    await events.close();
    if (readsOpen) await reads.close();
    tmp.remove();
  }
};

test('ready when both engines answer and every projection is within the lag', async () => {
  await withEngines(async (deps) => {
    const r = await checkReadiness(deps);
    assert.is(r.ready, true);
    assert.equal(r.failed, []);
    assert.equal(r.checks, { eventStore: { ok: true }, readStore: { ok: true }, projections: { ok: true, maxLag: 10 } });
  }, [status('objects', 0), status('users', 10)]);
});

test('a projection further behind than the lag, a failed one and a stopped one are not ready, and are named', async () => {
  await withEngines(async (deps) => {
    const r = await checkReadiness(deps);
    assert.is(r.ready, false);
    assert.equal(r.failed, ['projections']);
    assert.equal(r.checks.projections, {
      ok: false,
      maxLag: 10,
      behind: [
        { name: 'users', state: 'catching-up', lag: 11 },
        { name: 'files', state: 'failed', lag: 0 },
        { name: 'work_units', state: 'stopped', lag: 0 },
      ],
    });
    assert.is(r.checks.eventStore.ok, true);
    assert.is(r.checks.readStore.ok, true);
  }, [status('objects', 0), status('users', 11), status('files', 0, 'failed'), status('work_units', 0, 'stopped'), status('rest_apis', 3, 'rebuilding')]);
});

test('a closed (unreachable) read store fails the read store check; projections are then not checked', async () => {
  let asked = 0;
  const warned: string[] = [];
  await withEngines(async (deps, engines) => {
    await engines.closeReads();
    const r = await checkReadiness({
      ...deps,
      status: async () => {
        asked++;
        return [];
      },
      warn: (fields) => warned.push(JSON.stringify(fields)),
    });
    assert.is(r.ready, false);
    assert.equal(r.failed, ['readStore', 'projections']);
    assert.equal(r.checks.readStore, { ok: false, error: 'error' });
    assert.equal(r.checks.projections, { ok: false, error: 'not checked', maxLag: 10 });
    assert.is(r.checks.eventStore.ok, true);
  });
  assert.is(asked, 0);
  // The engine's own message goes to the log only.
  assert.is(warned.length, 1);
  assert.match(warned[0]!, '"check":"readStore"');
});

test('an engine that never answers fails its check after the timeout', async () => {
  await withEngines(async (deps) => {
    const r = await checkReadiness({ ...deps, events: { headPosition: () => new Promise<number>(() => undefined) }, timeoutMs: 50 });
    assert.is(r.ready, false);
    assert.equal(r.failed, ['eventStore', 'projections']);
    assert.equal(r.checks.eventStore, { ok: false, error: 'timeout' });
  });
});

test('a status read that fails is a failed projections check, not an exception', async () => {
  await withEngines(async (deps) => {
    const r = await checkReadiness({ ...deps, status: () => Promise.reject(new Error('boom')) });
    assert.is(r.ready, false);
    assert.equal(r.failed, ['projections']);
    assert.equal(r.checks.projections, { ok: false, error: 'error', maxLag: 10 });
  });
});

test.run();
