import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedEvent } from '../../../src/events/event-store.ts';
import { openSqliteEventStore, type SqliteEventStore } from '../../../src/events/adapters/sqlite-event-store.ts';
import { foldDocuments, type Projector } from '../../../src/projections/projector.ts';
import { ProjectionRunner } from '../../../src/projections/runner.ts';
import { openSqliteReadStore, type SqliteReadStore } from '../../../src/projections/adapters/sqlite-read-store.ts';
import { collectGarbage } from '../../support/gc.ts';
import { tempDir } from '../../support/tmp.ts';

interface Note {
  id: string;
  count: number;
  text: string;
  [k: string]: unknown;
}

/** One document per stream, about 1 KB of JSON each. */
const notes = (name: string): Projector => ({
  name,
  collections: [{ name: `${name}_docs`, indexes: [] }],
  handles: ['Noted'],
  apply: foldDocuments<Note>(
    `${name}_docs`,
    (e) => e.stream,
    (doc, e: RecordedEvent) => ({ id: e.stream, count: (doc?.count ?? 0) + 1, text: (e.data as { text: string }).text }),
  ),
});

const noted = () => ({ id: randomUUID(), type: 'Noted', data: { text: 'x'.repeat(1000) } });

interface Ctx {
  events: SqliteEventStore;
  reads: SqliteReadStore;
  remove(): void;
}
const setup = (): Ctx => {
  const tmp = tempDir();
  return {
    events: openSqliteEventStore(join(tmp.dir, 'events.db'), { pollIntervalMs: 20 }),
    reads: openSqliteReadStore(join(tmp.dir, 'read.db')),
    remove: tmp.remove,
  };
};

const test = suite('ProjectionRunner document cache');

test('the documents kept across commits stay within the bound in bytes, shared by the projections, and misses read the store', async () => {
  const c = setup();
  const bound = 64 * 1024;
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [notes('a'), notes('b')], batchSize: 50, cacheBytes: bound });
  try {
    await runner.start();
    // 600 documents of about 1 KB per projection: about 20 times what each may keep.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 600; i += 100) {
        await c.events.appendMany(Array.from({ length: 100 }, (_, k) => ({ stream: `s${i + k}`, events: [noted()] })));
      }
      await runner.waitFor(await c.events.headPosition(), { timeoutMs: 60_000 });
      const held = runner.cachedBytes();
      assert.ok(held > 0, 'some documents are kept');
      assert.ok(held <= bound, `${held} bytes kept, bound ${bound}`);
    }
    // The second round read back the documents the cache had dropped: every count is 2.
    for (const name of ['a', 'b']) {
      const docs = await c.reads.find<Note>(`${name}_docs`, {});
      assert.is(docs.length, 600);
      assert.ok(docs.every((d) => d.count === 2), `${name}: every document folded twice`);
    }
  } finally {
    await runner.stop();
    await c.events.close();
    await c.reads.close();
    c.remove();
  }
});


test('documents dropped from the cache are not held by anything else of the runner', async () => {
  const c = setup();
  const bound = 32 * 1024;
  // Every document the fold makes, weakly: a document the runner still reaches stays alive.
  const made: WeakRef<Note>[] = [];
  const base = notes('a');
  const watched: Projector = {
    ...base,
    apply: foldDocuments<Note>('a_docs', (e) => e.stream, (doc, e: RecordedEvent) => {
      const next = { id: e.stream, count: (doc?.count ?? 0) + 1, text: (e.data as { text: string }).text };
      made.push(new WeakRef(next));
      return next;
    }),
  };
  const runner = new ProjectionRunner({ events: c.events, reads: c.reads, projectors: [watched], batchSize: 50, cacheBytes: bound });
  try {
    await runner.start();
    for (let i = 0; i < 1000; i += 100) {
      await c.events.appendMany(Array.from({ length: 100 }, (_, k) => ({ stream: `s${i + k}`, events: [noted()] })));
      await runner.waitFor(await c.events.headPosition(), { timeoutMs: 60_000 });
    }
    assert.is(made.length, 1000);
    // WeakRefs made in this job stay set until it ends: let it end before collecting.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage()();
    const alive = made.filter((r) => r.deref() !== undefined).length;
    // About 1 KB each: the cache's share keeps a few dozen; the rest must be collectable.
    assert.ok(alive <= 2 * (bound / 1000), `${alive} of 1000 documents still reachable (bound ${bound} bytes)`);
  } finally {
    await runner.stop();
    await c.events.close();
    await c.reads.close();
    c.remove();
  }
});

test.run();
