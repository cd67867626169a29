import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteEventStore } from '../../src/events/adapters/sqlite-event-store.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { objectsProjector } from '../../src/projections/objects-projector.ts';
import { rebuildProjections, type RebuildProgress } from '../../src/projections/rebuild.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { OBJECTS, OBJECT_LINKS } from '../../src/projections/read-models.ts';
import { changed, created, link, text } from './object-events.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('Rebuild: indexes of the rebuilt copies');

const indexesOf = (file: string, table: string): string[] => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`).all(table) as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
};

test('the copies are folded without secondary indexes and switched in with all of them, answering queries on indexed fields', async () => {
  const tmp = tempDir();
  const file = join(tmp.dir, 'read.db');
  const events = openSqliteEventStore(join(tmp.dir, 'events.db'));
  const reads = openSqliteReadStore(file);
  try {
    await events.append(created('dept00000001', 'svc:type:department', { 'dc:attribute:title': [text('Department')] }).stream!, [
      { type: 'ObjectCreated', data: created('dept00000001', 'svc:type:department', { 'dc:attribute:title': [text('Department')] }).data },
    ]);
    for (let i = 0; i < 30; i++) {
      const ref = `pers${String(i).padStart(8, '0')}`;
      const e = created(ref, 'svc:type:person', { 'dc:attribute:title': [text(`Person ${i}`)], 'svc:attribute:department': [link('dept00000001')] });
      await events.append(e.stream!, [{ type: e.type, data: e.data }]);
      const c = changed(ref, { 'dc:attribute:title': [text(`Person ${i} renamed`)] });
      await events.append(c.stream!, [{ type: c.type, data: c.data }]);
    }
    const projector = objectsProjector(eventDecoder(domainCodecs));
    // The live collections as a service keeps them (with their indexes) before the rebuild.
    for (const spec of projector.collections) await reads.ensureCollection(spec);
    const whileBuilding: string[][] = [];
    const progress: RebuildProgress[] = [];
    const done = await rebuildProjections({
      events,
      reads,
      projectors: [projector],
      batchSize: 10,
      onProgress: (p) => {
        progress.push(p);
        if (p.phase === 'building') whileBuilding.push([...indexesOf(file, `${OBJECTS}__rebuild`), ...indexesOf(file, `${OBJECT_LINKS}__rebuild`)]);
      },
    });
    assert.is(done.phase, 'done');
    assert.ok(whileBuilding.length >= 3, `${whileBuilding.length} pages seen`);
    assert.equal(whileBuilding, whileBuilding.map(() => []));
    // Every declared index, on the switched-in collections.
    const objectIndexes = indexesOf(file, OBJECTS);
    for (const field of ['objectType', 'title', 'creationDate', 'behaviour']) assert.ok(objectIndexes.some((n) => n.endsWith(`__${field}`)), `${field} in ${objectIndexes}`);
    const linkIndexes = indexesOf(file, OBJECT_LINKS);
    assert.ok(linkIndexes.length >= 5, `${linkIndexes}`);
    const people = await reads.find(OBJECTS, { where: { objectType: 'svc:type:person' } });
    assert.is(people.length, 30);
    assert.is((await reads.find(OBJECTS, { where: { title: 'Person 3 renamed' } })).length, 1);
    assert.is((await reads.find(OBJECT_LINKS, { where: { to: 'dept00000001' } })).length, 30);
  } finally {
    await events.close();
    await reads.close();
    tmp.remove();
  }
});

test.run();
