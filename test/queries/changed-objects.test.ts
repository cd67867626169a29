/**
 * The objects a stretch of the log is about: read from the store once per stretch, since a live
 * answer's rows and then its descriptions follow the same stretch one after the other.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { ChangedObjects, MAX_DELTA_EVENTS } from '../../src/queries/changed-objects.ts';
import { changed, created, text } from '../projections/object-events.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('changed objects');

test('refs of a stretch, read once for the same stretch and again for another; undefined past the bound', async () => {
  const tmp = tempDir();
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  try {
    for (const e of [created('a00000000001', 'svc:type:person', { 'dc:attribute:title': [text('A')] }), created('b00000000002', 'svc:type:person', { 'dc:attribute:title': [text('B')] }), changed('a00000000001', { 'dc:attribute:title': [text('A2')] })]) {
      await events.append(e.stream!, [{ type: e.type, data: e.data }]);
    }
    let reads = 0;
    const readAll = events.readAll.bind(events);
    events.readAll = (options) => {
      reads++;
      return readAll(options);
    };
    const changes = new ChangedObjects(events);
    const head = await events.headPosition();
    assert.equal(await changes.since(0, head), new Set(['a00000000001', 'b00000000002']));
    assert.equal(await changes.since(0, head), new Set(['a00000000001', 'b00000000002']));
    assert.is(reads, 1, 'the same stretch is read once');
    assert.equal(await changes.since(head - 1, head), new Set(['a00000000001']));
    assert.equal(await changes.since(0, 1), new Set(['a00000000001']));
    assert.is(reads, 3);
    for (let i = 0; i < MAX_DELTA_EVENTS; i++) await events.append('many', [{ type: changed('b00000000002', {}).type, data: changed('b00000000002', { 'dc:attribute:title': [text(`B${i}`)] }).data }]);
    assert.is(await changes.since(0, await events.headPosition()), undefined);
  } finally {
    await events.close();
    tmp.remove();
  }
});

test.run();
