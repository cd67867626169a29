import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BatchDocs } from '../../src/projections/batch-docs.ts';
import { openSqliteReadStore } from '../../src/projections/adapters/sqlite-read-store.ts';
import type { ReadStore } from '../../src/projections/read-store.ts';
import { tempDir } from '../support/tmp.ts';

const test = suite('BatchDocs');

const withStore = async (body: (reads: ReadStore) => Promise<void>) => {
  const tmp = tempDir();
  const reads = openSqliteReadStore(join(tmp.dir, 'read.db'));
  try {
    for (const name of ['a', 'b', 'a__rebuild', 'b__rebuild']) await reads.ensureCollection({ name });
    await body(reads);
  } finally {
    await reads.close();
    tmp.remove();
  }
};

const commit = async (reads: ReadStore, docs: BatchDocs, position: number) => {
  await reads.bulkWrite(docs.ops());
  docs.written();
  return position;
};

test('eviction drops the least recently written documents across collections', () =>
  withStore(async (reads) => {
    const docs = new BatchDocs(reads, (c) => c, true);
    // Interleaved: a0 b0 a1 b1 ... then a0 rewritten last.
    for (let i = 0; i < 40; i++) {
      docs.put('a', { id: `a${i}`, text: 'x'.repeat(100) });
      docs.put('b', { id: `b${i}`, text: 'x'.repeat(100) });
    }
    docs.put('a', { id: 'a0', text: 'y'.repeat(100) });
    await commit(reads, docs, 1);
    docs.evict(docs.cachedBytes / 2);
    assert.not.ok(docs.complete);
    // The newer half of both collections stays, and the rewritten a0.
    for (let i = 21; i < 40; i++) {
      assert.ok(docs.peek('a', `a${i}`), `a${i} kept`);
      assert.ok(docs.peek('b', `b${i}`), `b${i} kept`);
    }
    assert.equal(docs.peek('a', 'a0'), { id: 'a0', text: 'y'.repeat(100) });
    for (let i = 1; i < 15; i++) {
      assert.is(docs.peek('a', `a${i}`), undefined, `a${i} dropped`);
      assert.is(docs.peek('b', `b${i}`), undefined, `b${i} dropped`);
    }
    assert.is(docs.size, [...Array(40).keys()].filter((i) => docs.peek('a', `a${i}`)).length + [...Array(40).keys()].filter((i) => docs.peek('b', `b${i}`)).length);
    // A dropped document is read back from the store.
    assert.equal(await docs.get('b', 'b1'), { id: 'b1', text: 'x'.repeat(100) });
    assert.equal(docs.peek('b', 'b1'), { id: 'b1', text: 'x'.repeat(100) });
  }));

test('peek answers from memory only: null for a document a complete cache does not hold', () =>
  withStore(async (reads) => {
    const complete = new BatchDocs(reads, (c) => c, true);
    assert.is(complete.peek('a', 'nope'), null);
    complete.put('a', { id: 'x' });
    complete.delete('a', 'gone');
    assert.equal(complete.peek('a', 'x'), { id: 'x' });
    assert.is(complete.peek('a', 'gone'), null);
    await reads.bulkWrite([{ kind: 'put', collection: 'a', doc: { id: 'stored' } }]);
    const partial = new BatchDocs(reads);
    assert.is(partial.peek('a', 'stored'), undefined);
    assert.equal(await partial.get('a', 'stored'), { id: 'stored' });
    assert.equal(partial.peek('a', 'stored'), { id: 'stored' });
    assert.is(await partial.get('a', 'absent'), null);
    assert.is(partial.peek('a', 'absent'), null);
  }));

/** The store, counting the documents read from it one by one. */
const countingGets = (reads: ReadStore) => {
  const asked: string[] = [];
  const store = new Proxy(reads, {
    get(target, key, receiver) {
      if (key === 'get') return (collection: string, id: string) => (asked.push(`${collection}/${id}`), target.get(collection, id));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, asked };
};

test('a cache that began whole still knows, once it has dropped documents, which ones do not exist', () =>
  withStore(async (reads) => {
    const { store, asked } = countingGets(reads);
    const docs = new BatchDocs(store, (c) => c, true);
    for (let i = 0; i < 40; i++) docs.put('a', { id: `a${i}`, text: 'x'.repeat(100) });
    docs.delete('a', 'a0');
    docs.put('b', { id: 'b0' });
    await commit(reads, docs, 1);
    docs.evict(docs.cachedBytes / 2);
    assert.not.ok(docs.complete);
    // Never written, in a collection it holds, one it held, and one it never saw: none, from memory.
    for (const [c, id] of [['a', 'never'], ['b', 'never'], ['c', 'never'], ['a', 'a0']] as const) {
      assert.is(docs.peek(c, id), null, `${c}/${id}`);
      assert.is(await docs.get(c, id), null, `${c}/${id}`);
    }
    assert.equal(asked, []);
    // Dropped: only the store knows.
    const dropped = [...Array(40).keys()].map((i) => `a${i}`).filter((id) => docs.peek('a', id) === undefined);
    assert.ok(dropped.length >= 15, `${dropped.length} dropped`);
    for (const id of dropped) assert.equal(await docs.get('a', id), { id, text: 'x'.repeat(100) });
    assert.equal(asked, dropped.map((id) => `a/${id}`));

    // A cache that began from a stored state cannot know: every miss asks the store.
    const { store: resumed, asked: askedResumed } = countingGets(reads);
    const partial = new BatchDocs(resumed, (c) => c, false);
    partial.put('a', { id: 'new', text: 'x'.repeat(100) });
    await commit(reads, partial, 2);
    partial.evict(0);
    assert.is(partial.peek('a', 'never'), undefined);
    assert.is(await partial.get('a', 'never'), null);
    assert.equal(askedResumed, ['a/never']);
  }));

test('writes are listed once each, in the order first written, under physical and own names', () =>
  withStore(async (reads) => {
    const docs = new BatchDocs(reads, (c) => `${c}__rebuild`, true, true);
    docs.put('a', { id: '1', v: 1 });
    docs.put('b', { id: '2', v: 1 });
    docs.put('a', { id: '1', v: 2 });
    docs.delete('b', '2');
    docs.put('a', { id: '3', v: 1 });
    assert.is(docs.pending, 3);
    assert.ok(docs.pendingBytes > 0);
    assert.equal(docs.ops(), [
      { kind: 'put', collection: 'a__rebuild', doc: { id: '1', v: 2 } },
      { kind: 'delete', collection: 'b__rebuild', id: '2' },
      { kind: 'put', collection: 'a__rebuild', doc: { id: '3', v: 1 } },
    ]);
    assert.equal(docs.takeChanges(), [
      { kind: 'put', collection: 'a', doc: { id: '1', v: 2 } },
      { kind: 'delete', collection: 'b', id: '2' },
      { kind: 'put', collection: 'a', doc: { id: '3', v: 1 } },
    ]);
    assert.equal(docs.takeChanges(), []);
    await commit(reads, docs, 1);
    assert.is(docs.pending, 0);
    assert.is(docs.pendingBytes, 0);
    docs.put('a', { id: '3', v: 2 });
    assert.equal(docs.ops(), [{ kind: 'put', collection: 'a__rebuild', doc: { id: '3', v: 2 } }]);
    assert.equal(docs.documents('a'), [{ id: '1', v: 2 }, { id: '3', v: 2 }]);
  }));

test('a document dropped and read back while its change is untaken is listed once, as it is now', () =>
  withStore(async (reads) => {
    const docs = new BatchDocs(reads, (c) => c, true);
    docs.put('a', { id: 'old', v: 1 });
    for (let i = 0; i < 20; i++) docs.put('a', { id: `n${i}`, text: 'x'.repeat(200) });
    await commit(reads, docs, 1);
    docs.evict(docs.cachedBytes / 2);
    assert.is(docs.peek('a', 'old'), undefined);
    const read = await docs.get<{ id: string; v: number }>('a', 'old');
    docs.put('a', { id: 'old', v: read!.v + 1 });
    const changes = docs.takeChanges();
    assert.is(changes.length, 21);
    assert.equal(changes[0], { kind: 'put', collection: 'a', doc: { id: 'old', v: 2 } });
  }));

test.run();
