/**
 * The Object API's caches (documents with the answers kept beside them, link targets) are bounded
 * by the bytes they hold, not by their number (issue 15, target 5): large objects no longer let a
 * count of entries hold megabytes.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createObjectQueryCaches } from '../../src/queries/object-api.ts';
import type { ObjectDoc } from '../../src/projections/read-models.ts';
import type { VersionedProjections } from '../../src/projections/versioned-cache.ts';

const test = suite('Object API caches bounded in bytes');

let version = 1;
const runner: VersionedProjections = { projectors: [{ name: 'objects', collections: [{ name: 'objects' }] }], version: () => version };
const bigDoc = (i: number) =>
  ({
    id: `ref${i}`,
    ref: `ref${i}`,
    title: `Object ${i}`,
    labels: ['svc:label:common'],
    attributes: { 'dc:attribute:title': [{ type: 'text', value: `${i} ${'x'.repeat(4000)}` }] },
  }) as unknown as ObjectDoc;

test('documents of about 16 KB each (with their answers) under a 256 KB bound: the newest kept, the oldest dropped, never past the bound', () => {
  const caches = createObjectQueryCaches(runner, 256 * 1024);
  for (let i = 0; i < 200; i++) caches.docs.set(`ref${i}`, bigDoc(i), caches.docs.version());
  // Before: up to 2,000 documents whatever their size (all 200 kept, 3.2 MB counted so).
  assert.ok(caches.docs.size <= 12, `${caches.docs.size} documents kept`);
  assert.ok(caches.docs.size >= 6, `${caches.docs.size} documents kept`);
  assert.ok(caches.docs.bytes <= 192 * 1024, `${caches.docs.bytes} bytes`);
  assert.is(caches.docs.get('ref199')?.title, 'Object 199');
  assert.is(caches.docs.get('ref0'), undefined);
});

test('link targets share the bound; a moved version empties both', () => {
  const caches = createObjectQueryCaches(runner, 256 * 1024);
  for (let i = 0; i < 2000; i++) caches.linkTargets.set(`ref${i}`, { title: `Target ${i} ${'y'.repeat(200)}`, labels: ['svc:label:common'] }, caches.linkTargets.version());
  assert.ok(caches.linkTargets.bytes <= 64 * 1024, `${caches.linkTargets.bytes} bytes`);
  assert.ok(caches.linkTargets.size > 0 && caches.linkTargets.size < 200, `${caches.linkTargets.size} targets`);
  caches.docs.set('ref1', bigDoc(1), caches.docs.version());
  version++;
  assert.is(caches.docs.get('ref1'), undefined);
  assert.is(caches.docs.bytes, 0);
  assert.is(caches.linkTargets.get('ref1999'), undefined);
  assert.is(caches.linkTargets.bytes, 0);
});

test('one document larger than a quarter of its share is not kept', () => {
  const caches = createObjectQueryCaches(runner, 16 * 1024);
  caches.docs.set('huge', bigDoc(7), caches.docs.version());
  assert.is(caches.docs.size, 0);
});

test.run();
