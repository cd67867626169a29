import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryDocs } from '../../src/projections/batch-docs.ts';
import { attempt, type HeldDocs } from '../../src/projections/held-docs.ts';
import type { DocAccess } from '../../src/projections/projector.ts';
import type { Doc } from '../../src/projections/read-store.ts';

const test = suite('projections: steps over documents at hand (attempt)');

/** Documents behind a wait (as a read store): nothing at hand until fetched once; every call logged. */
class FarDocs implements DocAccess {
  readonly docs = new MemoryDocs();
  readonly log: string[] = [];
  private readonly near = new Set<string>();

  peek<T extends Doc = Doc>(collection: string, id: string): T | null | undefined {
    return this.near.has(`${collection}/${id}`) ? this.docs.peek<T>(collection, id) : undefined;
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    this.log.push(`get ${collection}/${id}`);
    await new Promise((r) => setImmediate(r));
    this.near.add(`${collection}/${id}`);
    return this.docs.peek<T>(collection, id);
  }

  put(collection: string, doc: Doc): void {
    this.log.push(`put ${collection}/${doc.id}`);
    this.docs.put(collection, doc);
  }

  delete(collection: string, id: string): void {
    this.log.push(`delete ${collection}/${id}`);
    this.docs.delete(collection, id);
  }
}

/** Adds `n` to counter `a` and copies the sum to `b`, reading back its own write. */
const addAndCopy = (docs: HeldDocs, n: number): number => {
  const a = (docs.get<Doc & { v: number }>('c', 'a')?.v ?? 0) + n;
  docs.put('c', { id: 'a', v: a });
  const written = docs.get<Doc & { v: number }>('c', 'a')!.v;
  docs.put('c', { id: 'b', v: written });
  docs.delete('c', 'gone');
  return written;
};

test('with every document at hand, the step runs once and its result comes without a promise', () => {
  const docs = new MemoryDocs();
  docs.put('c', { id: 'a', v: 1 });
  docs.put('c', { id: 'gone' });
  const result = attempt(docs, addAndCopy, 2);
  assert.not.instance(result, Promise);
  assert.is(result, 3);
  assert.equal(docs.peek('c', 'a'), { id: 'a', v: 3 });
  assert.equal(docs.peek('c', 'b'), { id: 'b', v: 3 });
  assert.is(docs.peek('c', 'gone'), null);
});

test('a document not at hand is fetched and the step run again; a dropped run writes nothing', async () => {
  const docs = new FarDocs();
  docs.docs.put('c', { id: 'a', v: 1 });
  docs.docs.put('c', { id: 'x', v: 10 });
  let runs = 0;
  const step = (held: HeldDocs, n: number) => {
    runs++;
    const x = held.get<Doc & { v: number }>('c', 'x')!.v;
    held.put('c', { id: 'y', v: x });
    return addAndCopy(held, n) + x;
  };
  const result = attempt(docs, step, 2);
  assert.instance(result, Promise);
  assert.is(await result, 13);
  // x, then a, then b (read back from the run's own write, never fetched), then `gone` is never read.
  assert.is(runs, 3);
  assert.equal(docs.log, ['get c/x', 'get c/a', 'put c/y', 'put c/a', 'put c/b', 'delete c/gone']);
  assert.equal(docs.docs.peek('c', 'y'), { id: 'y', v: 10 });
  assert.equal(docs.docs.peek('c', 'a'), { id: 'a', v: 3 });
});

test('a document that does not exist is fetched once, as null', async () => {
  const docs = new FarDocs();
  let runs = 0;
  const result = await attempt(
    docs,
    (held) => {
      runs++;
      return held.get('c', 'none');
    },
    undefined,
  );
  assert.is(result, null);
  assert.is(runs, 2);
  assert.equal(docs.log, ['get c/none']);
});

test("a step's own error ends it, and nothing it wrote reaches the documents", async () => {
  const near = new MemoryDocs();
  const failing = (held: HeldDocs) => {
    held.put('c', { id: 'a', v: 1 });
    held.get('c', 'a');
    throw new Error('bad event');
  };
  assert.throws(() => attempt(near, failing, undefined), /bad event/);
  assert.is(near.peek('c', 'a'), null);

  const far = new FarDocs();
  const failingLater = (held: HeldDocs) => {
    held.put('c', { id: 'a', v: 1 });
    held.get('c', 'x');
    throw new Error('bad event');
  };
  const ended = await Promise.resolve(attempt(far, failingLater, undefined)).then(
    () => 'resolved',
    (e: Error) => e.message,
  );
  assert.is(ended, 'bad event');
  assert.equal(far.log, ['get c/x']);
});

test('documents of a DocAccess that cannot peek are fetched, each once per step', async () => {
  const docs = new FarDocs();
  docs.docs.put('c', { id: 'a', v: 5 });
  const blind: DocAccess = { get: (c, id) => docs.get(c, id), put: (c, d) => docs.put(c, d), delete: (c, id) => docs.delete(c, id) };
  assert.is(await attempt(blind, addAndCopy, 1), 6);
  assert.equal(docs.log, ['get c/a', 'put c/a', 'put c/b', 'delete c/gone']);
});

test.run();
