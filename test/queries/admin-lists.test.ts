import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openSqliteReadStore, type SqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import { filesProjector } from '../../src/projections/files-projector.ts';
import { FILES, type FileDoc } from '../../src/projections/read-models.ts';
import { pageFiles, type ListPage } from '../../src/queries/admin-lists.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('admin lists: files by name or digest prefix');

// The collections it declares; its decoder is used only when folding events, which this test does not do.
const filesSpec = filesProjector(undefined as never).collections.find((c) => c.name === FILES)!;

/** 40 files: digests starting "ab" (every third) or "cd"; names "ab-…", "AB-…" or "other-…"; creation times tied in threes. */
const files: FileDoc[] = Array.from({ length: 40 }, (_, i) => {
  const digest = (i % 3 === 0 ? 'ab' : 'cd') + i.toString(16).padStart(62, '0');
  const filename = [`ab-${i}.txt`, `AB-${i}.txt`, `other-${i}.txt`, `other-${i}.txt`][i % 4]!;
  const createdAt = new Date(Date.UTC(2026, 0, 1, 0, Math.floor(i / 3))).toISOString();
  return { id: `${digest}-${i + 1}`, digest, fileSize: i + 1, mimeType: 'text/plain', filename, createdAt, properties: {}, tags: {} };
});

/** Newest first, ties by id: the list's order. */
const listOrder = (a: FileDoc, b: FileDoc) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? -1 : 1);

const withStore = async (run: (reads: SqliteReadStore) => Promise<void>) => {
  const tmp = tempDir('svc-admin-lists');
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  try {
    await run(reads);
  } finally {
    await reads.close();
    tmp.remove();
  }
};

const names = (page: ListPage<FileDoc>) => page.items.map((f) => f.filename);

test('a files collection made before the filename index gets it when the projector declares its collections (as the runner does at start)', async () => {
  await withStore(async (reads) => {
    await reads.ensureCollection({ name: FILES, indexes: ['digest', 'createdAt'] });
    await reads.bulkWrite(files.map((doc) => ({ kind: 'put', collection: FILES, doc })));
    await reads.ensureCollection(filesSpec);
    const page = await pageFiles(reads, 'other-3', { size: 50 });
    assert.equal(names(page).sort(), ['other-3.txt', 'other-30.txt', 'other-31.txt', 'other-34.txt', 'other-35.txt', 'other-38.txt', 'other-39.txt']);
  });
});

test('a hex search pages through names and digests starting with it, forwards and back, with counts, each file once', async () => {
  await withStore(async (reads) => {
    await reads.ensureCollection(filesSpec);
    await reads.bulkWrite(files.map((doc) => ({ kind: 'put', collection: FILES, doc })));
    const expected = files.filter((f) => f.digest.startsWith('ab') || f.filename.startsWith('ab')).sort(listOrder);
    assert.ok(files.some((f) => f.digest.startsWith('ab') && f.filename.startsWith('ab')), 'some files match both ways');
    assert.ok(expected.length > 12, 'several pages');

    const forwards: ListPage<FileDoc>[] = [];
    for (let page = await pageFiles(reads, 'ab', { size: 4 }); ; page = await pageFiles(reads, 'ab', { size: 4, after: page.next! })) {
      forwards.push(page);
      if (!page.next) break;
    }
    assert.equal(forwards.flatMap((p) => p.items.map((f) => f.id)), expected.map((f) => f.id));
    forwards.forEach((p, i) => {
      assert.is(p.total, expected.length);
      assert.is(p.offset, 4 * i);
      assert.is(p.prev === undefined, i === 0, 'a Previous link except on the first page');
    });

    const backwards: ListPage<FileDoc>[] = [];
    for (let page = forwards.at(-1)!; page.prev; ) {
      page = await pageFiles(reads, 'ab', { size: 4, before: page.prev });
      backwards.unshift(page);
    }
    assert.equal(backwards.map(names), forwards.slice(0, -1).map(names));

    // Upper case: the digest in either case, the name only as typed (no "AB-…" here matches "ab").
    assert.equal((await pageFiles(reads, 'AB', { size: 50 })).items.map((f) => f.id).sort(), files.filter((f) => f.digest.startsWith('ab') || f.filename.startsWith('AB')).map((f) => f.id).sort());
  });
});

test('a search that is not hex is by name only; no search lists every file', async () => {
  await withStore(async (reads) => {
    await reads.ensureCollection(filesSpec);
    await reads.bulkWrite(files.map((doc) => ({ kind: 'put', collection: FILES, doc })));
    assert.equal(names(await pageFiles(reads, 'AB-1', { size: 50 })).sort(), ['AB-1.txt', 'AB-13.txt', 'AB-17.txt']);
    assert.equal(names(await pageFiles(reads, 'cd0', { size: 50 })).length, files.filter((f) => f.digest.startsWith('cd0')).length);
    const all = await pageFiles(reads, '', { size: 50 });
    assert.equal([all.total, all.items.length], [40, 40]);
    assert.equal(all.items.map((f) => f.id), [...files].sort(listOrder).map((f) => f.id));
  });
});

test.run();
