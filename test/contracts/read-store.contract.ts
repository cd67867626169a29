import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BatchTooLargeError,
  CheckpointConflictError,
  LeaseLostError,
  UnknownFieldError,
  type BatchLimit,
  type Doc,
  type FindQuery,
  type ReadStore,
  type SwitchPlan,
  writeOpBytes,
} from '../../src/projections/read-store.ts';

/** What the contract may set on a store it opens (engine options of the same name). */
export interface StoreOptions {
  readonly maxBatch?: BatchLimit;
  readonly switchLeaseMs?: number;
}

export interface ReadStoreFixture {
  readonly store: ReadStore;
  /** Another store on the same data, as another process would open it; closed by close() unless closed before. */
  another(options?: StoreOptions): Promise<ReadStore>;
  close(): Promise<void>;
}

const rejects = async (p: Promise<unknown>, type: new (...a: never[]) => Error) => {
  try {
    await p;
  } catch (e) {
    assert.instance(e, type);
    return;
  }
  assert.unreachable(`expected ${type.name}`);
};

const people: Doc[] = [
  { id: 'p1', name: 'Ada', age: 36, active: true, dept: { code: 'maths' } },
  { id: 'p2', name: 'Brian', age: 52, active: false, dept: { code: 'cs' } },
  { id: 'p3', name: 'Cleo', age: 29, active: true, dept: { code: 'cs' } },
  { id: 'p4', name: 'Dev', age: null, active: true, dept: { code: 'maths' } },
];

/** One behaviour contract for every ReadStore adapter. */
export const readStoreContract = (name: string, open: () => Promise<ReadStoreFixture>) => {
  const test = suite<{ fx: ReadStoreFixture }>(`ReadStore contract: ${name}`, {} as { fx: ReadStoreFixture });
  test.before(async (ctx) => {
    ctx.fx = await open();
    await ctx.fx.store.ensureCollection({ name: 'people', indexes: ['name', 'age', 'active', 'dept.code'] });
    await ctx.fx.store.bulkWrite(people.map((doc) => ({ kind: 'put', collection: 'people', doc })));
  });
  test.after(async (ctx) => {
    await ctx.fx?.close();
  });

  test('ensureCollection is idempotent and collections are listed', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'people', indexes: ['name', 'age', 'active', 'dept.code'] });
    assert.ok((await ctx.fx.store.listCollections()).includes('people'));
    assert.is(await ctx.fx.store.count('people'), 4);
  });

  test('get and getMany return whole documents; a missing id is null', async (ctx) => {
    assert.equal(await ctx.fx.store.get('people', 'p1'), people[0]);
    assert.is(await ctx.fx.store.get('people', 'nope'), null);
    const many = await ctx.fx.store.getMany('people', ['p2', 'zz', 'p3']);
    assert.equal([...many.keys()].sort(), ['p2', 'p3']);
    assert.equal(many.get('p3'), people[2]);
  });

  test('find by indexed fields: equality, booleans, nested paths, null, $in and ranges', async (ctx) => {
    const ids = (docs: Doc[]) => docs.map((d) => d.id);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { name: 'Brian' } })), ['p2']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { active: false } })), ['p2']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { 'dept.code': 'cs' }, sort: [['name', 'asc']] })), ['p2', 'p3']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { age: null } })), ['p4']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { name: { $in: ['Ada', 'Dev'] } }, sort: [['name', 'asc']] })), ['p1', 'p4']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { age: { $gte: 29, $lt: 52 } }, sort: [['age', 'desc']] })), ['p1', 'p3']);
    assert.equal(ids(await ctx.fx.store.find('people', { where: { id: 'p3' } })), ['p3']);
    assert.is(await ctx.fx.store.count('people', { where: { active: true } }), 3);
  });

  test('find sorts and limits', async (ctx) => {
    const r = await ctx.fx.store.find('people', { where: { active: true }, sort: [['name', 'desc']], limit: 2 });
    assert.equal(r.map((d) => d.name), ['Dev', 'Cleo']);
  });

  test('findJson answers what find does, each document as JSON.stringify writes it, with its id', async (ctx) => {
    const { store } = ctx.fx;
    const queries: FindQuery[] = [{}, { where: { active: true }, sort: [['name', 'desc']], limit: 2 }, { where: { id: { $gt: 'p2' } }, sort: [['id', 'asc']] }];
    for (const query of queries) {
      const docs = await store.find('people', query);
      assert.equal(await store.findJson('people', query), docs.map((d) => [d.id, JSON.stringify(d)]));
    }
    // A document whose id is not its first member comes back as it was written.
    await store.ensureCollection({ name: 'texts' });
    const doc = { n: [1, 'two', { three: null }], id: 'x\t"y"', s: 'é\u2028' };
    await store.upsert('texts', doc);
    const [[id, json]] = (await store.findJson('texts')) as [[string, string]];
    assert.is(id, doc.id);
    assert.equal(JSON.parse(json), doc);
    assert.equal(await store.findJson('texts', { where: { id: 'none' } }), []);
  });

  test('an index declared later on a collection that has documents is made and usable (a read model growing an index at start)', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'grown', indexes: ['a'] });
    await ctx.fx.store.bulkWrite([{ id: 'x', a: 1, b: 'Bee' }, { id: 'y', a: 2, b: 'Bear' }, { id: 'z', a: 3, b: 'Cat' }].map((doc) => ({ kind: 'put', collection: 'grown', doc })));
    await ctx.fx.store.ensureCollection({ name: 'grown', indexes: ['a', 'b'] });
    const found = await ctx.fx.store.find('grown', { where: { b: { $gte: 'Be', $lt: 'Be\u{10FFFF}' } }, sort: [['a', 'desc']] });
    assert.equal(found.map((d) => d.id), ['y', 'x']);
  });

  test('a compound index: equality on its first fields, sorted by the next, ties by id; declaring it again is idempotent', async (ctx) => {
    const spec = { name: 'links', indexes: ['to', 'attribute', 'created'], compoundIndexes: [['to', 'attribute', 'created', 'id']] };
    await ctx.fx.store.ensureCollection(spec);
    await ctx.fx.store.ensureCollection(spec);
    await ctx.fx.store.bulkWrite(
      [
        { id: 'c', to: 'p', attribute: 'a', created: 2 },
        { id: 'b', to: 'p', attribute: 'a', created: 1 },
        { id: 'a', to: 'p', attribute: 'a', created: 2 },
        { id: 'd', to: 'p', attribute: 'b', created: 0 },
        { id: 'e', to: 'q', attribute: 'a', created: 0 },
      ].map((doc) => ({ kind: 'put', collection: 'links', doc })),
    );
    const r = await ctx.fx.store.find('links', { where: { to: 'p', attribute: 'a' }, sort: [['created', 'asc']] });
    assert.equal(r.map((d) => d.id), ['b', 'a', 'c']);
  });

  test('find refuses fields that are not declared indexes', async (ctx) => {
    await rejects(ctx.fx.store.find('people', { where: { shoeSize: 9 } }), UnknownFieldError);
    await rejects(ctx.fx.store.find('people', { sort: [['shoeSize', 'asc']] }), UnknownFieldError);
  });

  test('upsert replaces, delete removes, bulkWrite applies in order', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'scratch', indexes: ['v'] });
    await ctx.fx.store.upsert('scratch', { id: 'a', v: 1 });
    await ctx.fx.store.upsert('scratch', { id: 'a', v: 2 });
    assert.equal(await ctx.fx.store.get('scratch', 'a'), { id: 'a', v: 2 });
    await ctx.fx.store.delete('scratch', 'a');
    assert.is(await ctx.fx.store.get('scratch', 'a'), null);
    await ctx.fx.store.bulkWrite([
      { kind: 'put', collection: 'scratch', doc: { id: 'b', v: 1 } },
      { kind: 'delete', collection: 'scratch', id: 'b' },
      { kind: 'put', collection: 'scratch', doc: { id: 'c', v: 3 } },
      { kind: 'put', collection: 'scratch', doc: { id: 'c', v: 4 } },
    ]);
    assert.is(await ctx.fx.store.get('scratch', 'b'), null);
    assert.equal(await ctx.fx.store.find('scratch', { where: { v: 4 } }), [{ id: 'c', v: 4 }]);
    await ctx.fx.store.dropCollection('scratch');
    assert.not.ok((await ctx.fx.store.listCollections()).includes('scratch'));
  });

  test('commitBatch writes changes and the checkpoint together, guarded by the expected checkpoint', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'counts', indexes: [] });
    assert.is(await ctx.fx.store.getCheckpoint('counter'), null);
    await ctx.fx.store.commitBatch('counter', [{ kind: 'put', collection: 'counts', doc: { id: 'x', n: 1 } }], null, { position: 10 });
    assert.equal(await ctx.fx.store.getCheckpoint('counter'), { position: 10 });
    await rejects(
      ctx.fx.store.commitBatch('counter', [{ kind: 'put', collection: 'counts', doc: { id: 'x', n: 99 } }], { position: 5 }, { position: 20 }),
      CheckpointConflictError,
    );
    await rejects(
      ctx.fx.store.commitBatch('counter', [{ kind: 'put', collection: 'counts', doc: { id: 'y', n: 1 } }], null, { position: 20 }),
      CheckpointConflictError,
    );
    assert.equal(await ctx.fx.store.get('counts', 'x'), { id: 'x', n: 1 });
    assert.is(await ctx.fx.store.get('counts', 'y'), null);
    assert.equal(await ctx.fx.store.getCheckpoint('counter'), { position: 10 });
    await ctx.fx.store.commitBatch('counter', [{ kind: 'delete', collection: 'counts', id: 'x' }], { position: 10 }, { position: 11 });
    assert.is(await ctx.fx.store.get('counts', 'x'), null);
    await ctx.fx.store.deleteCheckpoint('counter');
    assert.is(await ctx.fx.store.getCheckpoint('counter'), null);
  });

  test('swapIn renames rebuilt collections over the live ones and moves the checkpoints', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'model', indexes: ['k'] });
    await ctx.fx.store.commitBatch('modeller', [{ kind: 'put', collection: 'model', doc: { id: '1', k: 'old' } }], null, { position: 5 });
    await ctx.fx.store.ensureCollection({ name: 'model__rebuild', indexes: ['k'] });
    await ctx.fx.store.commitBatch('rebuild:modeller', [{ kind: 'put', collection: 'model__rebuild', doc: { id: '1', k: 'rebuilt' } }], null, { position: 9 });
    await ctx.fx.store.swapIn([['model__rebuild', 'model']], 'modeller', { position: 9 }, 'rebuild:modeller');
    assert.equal(await ctx.fx.store.find('model', { where: { k: 'rebuilt' } }), [{ id: '1', k: 'rebuilt' }]);
    assert.equal(await ctx.fx.store.getCheckpoint('modeller'), { position: 9, generation: 1 });
    assert.is(await ctx.fx.store.getCheckpoint('rebuild:modeller'), null);
    assert.not.ok((await ctx.fx.store.listCollections()).includes('model__rebuild'));
    assert.equal(await ctx.fx.store.find('model', { where: { k: 'old' } }), [], 'the renamed collection keeps its indexes');
    // The freed name can be used again for the next rebuild.
    await ctx.fx.store.ensureCollection({ name: 'model__rebuild', indexes: ['k'] });
    await ctx.fx.store.upsert('model__rebuild', { id: '2', k: 'newer' });
    assert.equal(await ctx.fx.store.find('model__rebuild', { where: { k: 'newer' } }), [{ id: '2', k: 'newer' }]);
    assert.equal(await ctx.fx.store.find('model', { where: { k: 'rebuilt' } }), [{ id: '1', k: 'rebuilt' }]);
    await ctx.fx.store.dropCollection('model__rebuild');
  });

  /** A live collection `name` at position 5 and its rebuilt copy at 9, as a rebuild leaves them before its switch. */
  const rebuilt = async (store: ReadStore, name: string): Promise<SwitchPlan> => {
    await store.ensureCollection({ name, indexes: ['k'] });
    await store.commitBatch(name, [{ kind: 'put', collection: name, doc: { id: '1', k: 'live' } }], null, { position: 5 });
    await store.ensureCollection({ name: `${name}__rebuild`, indexes: ['k'] });
    await store.commitBatch(`rebuild:${name}`, [{ kind: 'put', collection: `${name}__rebuild`, doc: { id: '1', k: 'rebuilt' } }], null, { position: 9 });
    return { renames: [[`${name}__rebuild`, name]], projection: name, checkpoint: { position: 9 }, retired: `rebuild:${name}` };
  };

  test('a commit racing a switch never lands in the switched-in collection: once begun, the switch fences both checkpoints', async (ctx) => {
    const store = ctx.fx.store;
    const plan = await rebuilt(store, 'raced');
    await store.beginSwitch(plan);
    // A live runner folded an event before the switch and commits now, in the middle of it.
    await rejects(store.commitBatch('raced', [{ kind: 'put', collection: 'raced', doc: { id: '2', k: 'stale' } }], { position: 5 }, { position: 6 }), CheckpointConflictError);
    await rejects(store.commitBatch('rebuild:raced', [{ kind: 'put', collection: 'raced__rebuild', doc: { id: '3', k: 'late' } }], { position: 9 }, { position: 10 }), CheckpointConflictError);
    await store.finishSwitch('raced');
    assert.equal(await store.find('raced', {}), [{ id: '1', k: 'rebuilt' }], 'only the rebuilt documents');
    assert.equal(await store.getCheckpoint('raced'), { position: 9, generation: 1 });
    assert.is(await store.getCheckpoint('rebuild:raced'), null);
    // The live runner's next try, from where it was, still conflicts; from the stored checkpoint it lands.
    await rejects(store.commitBatch('raced', [{ kind: 'put', collection: 'raced', doc: { id: '2', k: 'stale' } }], { position: 5 }, { position: 6 }), CheckpointConflictError);
    await store.commitBatch('raced', [{ kind: 'put', collection: 'raced', doc: { id: '2', k: 'fresh' } }], { position: 9, generation: 1 }, { position: 10 });
    assert.equal(await store.getCheckpoint('raced'), { position: 10, generation: 1 }, 'a commit keeps the generation');
    await store.finishSwitch('raced');
    assert.equal(await store.getCheckpoint('raced'), { position: 10, generation: 1 }, 'finishing when nothing is under way does nothing');
  });

  test('a switch to the position the live runner is at still fences it, by the generation', async (ctx) => {
    const store = ctx.fx.store;
    const plan = await rebuilt(store, 'level');
    await store.commitBatch('level', [], { position: 5 }, { position: 9 });
    assert.equal(await store.getCheckpoint('level'), { position: 9 });
    // What a runner passes back: the checkpoint it read, its generation (0 when absent) included.
    const before = { position: 9, generation: 0 };
    await store.swapIn(plan.renames, plan.projection, plan.checkpoint, plan.retired);
    // Same position, but the runner's folded documents came from the collection just replaced.
    await rejects(store.commitBatch('level', [{ kind: 'put', collection: 'level', doc: { id: '1', k: 'stale' } }], before, { position: 10 }), CheckpointConflictError);
    assert.equal(await store.find('level', {}), [{ id: '1', k: 'rebuilt' }]);
  });

  test('a switch begun by another store waits in getCheckpoint until that store finishes it', async (ctx) => {
    const store = ctx.fx.store;
    const other = await ctx.fx.another();
    const plan = await rebuilt(store, 'waited');
    await other.beginSwitch(plan);
    let answered: unknown = 'pending';
    const reading = store.getCheckpoint('waited').then((c) => (answered = c));
    const readingRetired = store.getCheckpoint('rebuild:waited');
    // Several polls of the reader go by while the switch stays under way.
    await new Promise((r) => setTimeout(r, 200));
    assert.is(answered, 'pending', 'no checkpoint is answered while the switch is under way');
    await other.finishSwitch('waited');
    assert.equal(await reading, { position: 9, generation: 1 });
    assert.is(await readingRetired, null);
    assert.equal(await store.find('waited', {}), [{ id: '1', k: 'rebuilt' }]);
  });

  test('a switch whose process died between its halves is finished by the next reader once its lease lapsed', async (ctx) => {
    const store = ctx.fx.store;
    const dying = await ctx.fx.another({ switchLeaseMs: 0 });
    const plan = await rebuilt(store, 'orphaned');
    await dying.beginSwitch(plan);
    await dying.close();
    assert.equal(await store.getCheckpoint('orphaned'), { position: 9, generation: 1 });
    assert.is(await store.getCheckpoint('rebuild:orphaned'), null);
    assert.equal(await store.find('orphaned', {}), [{ id: '1', k: 'rebuilt' }]);
    assert.not.ok((await store.listCollections()).includes('orphaned__rebuild'));
  });

  test('a switch refuses a collection that does not exist, and marks nothing', async (ctx) => {
    const store = ctx.fx.store;
    await store.ensureCollection({ name: 'kept', indexes: [] });
    await store.commitBatch('kept', [], null, { position: 3 });
    try {
      await store.beginSwitch({ renames: [['kept__missing', 'kept']], projection: 'kept', checkpoint: { position: 4 }, retired: 'rebuild:kept' });
      assert.unreachable('beginSwitch should refuse');
    } catch (e) {
      assert.match((e as Error).message, /kept__missing/);
    }
    await store.commitBatch('kept', [], { position: 3 }, { position: 4 });
    assert.equal(await store.getCheckpoint('kept'), { position: 4 });
  });

  test('maxBatch: a transaction past the limit in operations or bytes writes nothing and says so', async (ctx) => {
    assert.ok(ctx.fx.store.maxBatch.ops > 0 && ctx.fx.store.maxBatch.bytes > 0);
    const limit = { ops: 3, bytes: 200 };
    const small = await ctx.fx.another({ maxBatch: limit });
    assert.equal(small.maxBatch, limit);
    await small.ensureCollection({ name: 'bounded', indexes: [] });
    const put = (id: string, text = '') => ({ kind: 'put', collection: 'bounded', doc: { id, text } }) as const;
    const tooLarge = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        assert.instance(e, BatchTooLargeError);
        assert.equal((e as BatchTooLargeError).limit, limit);
        return;
      }
      assert.unreachable('expected BatchTooLargeError');
    };
    await tooLarge(small.bulkWrite([put('a'), put('b'), put('c'), put('d')]));
    await tooLarge(small.commitBatch('bounded', [put('a'), put('b'), put('c'), { kind: 'delete', collection: 'bounded', id: 'd' }], null, { position: 1 }));
    // {"id":"a","text":"xx…"}: 20 bytes of JSON around the text.
    await tooLarge(small.bulkWrite([put('a', 'x'.repeat(100)), put('b', 'x'.repeat(100))]));
    await tooLarge(small.commitBatch('bounded', [put('a', 'é'.repeat(100))], null, { position: 1 }));
    assert.is(await small.count('bounded'), 0, 'nothing written');
    assert.is(await small.getCheckpoint('bounded'), null, 'the checkpoint did not move');
    // Exactly at the limit is accepted.
    await small.bulkWrite([put('a', 'x'.repeat(60)), put('b', 'x'.repeat(60)), { kind: 'delete', collection: 'bounded', id: 'z' }]);
    await small.commitBatch('bounded', [put('c', 'x'.repeat(180))], null, { position: 1 });
    assert.is(await small.count('bounded'), 3);
    assert.equal(await small.getCheckpoint('bounded'), { position: 1 });
  });

  test('bytes at the top level of a document are kept as bytes: every write and read path, replaced and removed with the rest', async (ctx) => {
    const { store } = ctx.fx;
    await store.ensureCollection({ name: 'blobs', indexes: ['kind'] });
    const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
    const a = { id: 'a', kind: 'chunk', z: bytes(1000, 1), small: bytes(0, 0), note: { nested: [1, 'two'] } };
    const b = { id: 'b', kind: 'chunk', z: bytes(70_000, 2) };
    await store.bulkWrite([{ kind: 'put', collection: 'blobs', doc: a }]);
    await store.upsert('blobs', b);
    await store.commitBatch('blobs', [{ kind: 'put', collection: 'blobs', doc: { id: 'c', kind: 'other', z: bytes(3, 3) } }], null, { position: 1 });
    // Read back as Buffers (Uint8Arrays) with the same bytes; the other fields as they were.
    const same = (got: Doc | null | undefined, want: Record<string, unknown>) => {
      assert.ok(got, 'found');
      assert.equal(Object.keys(got!).sort(), Object.keys(want).sort());
      for (const [key, value] of Object.entries(want)) {
        if (value instanceof Uint8Array) {
          assert.instance(got![key], Uint8Array, key);
          assert.ok(Buffer.from(value).equals(got![key] as Uint8Array), `${key}: same bytes`);
        } else assert.equal(got![key], value, key);
      }
    };
    same(await store.get('blobs', 'a'), a);
    same((await store.getMany('blobs', ['b', 'a'])).get('b'), b);
    const found = await store.find('blobs', { where: { kind: 'chunk' } });
    assert.equal(found.map((d) => d.id), ['a', 'b']);
    same(found[0], a);
    same(found[1], b);
    // A put without them replaces them; a delete removes the document with them.
    await store.bulkWrite([{ kind: 'put', collection: 'blobs', doc: { id: 'a', kind: 'chunk' } }, { kind: 'delete', collection: 'blobs', id: 'b' }]);
    assert.equal(await store.get('blobs', 'a'), { id: 'a', kind: 'chunk' });
    assert.is(await store.get('blobs', 'b'), null);
    same(await store.get('blobs', 'c'), { id: 'c', kind: 'other', z: bytes(3, 3) });
    // They count for their length against the bound of a transaction (not a text encoding of them).
    assert.is(writeOpBytes({ kind: 'put', collection: 'blobs', doc: b }), Buffer.byteLength('{"id":"b","kind":"chunk","z":null}') + 70_000);
    const small = await ctx.fx.another({ maxBatch: { ops: 10, bytes: 80_000 } });
    await small.bulkWrite([{ kind: 'put', collection: 'blobs', doc: b }]);
    same(await small.get('blobs', 'b'), b);
  });

  test('increment adds atomically, creating the document from its initial fields; concurrent increments all count', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'tallies', indexes: ['n', 'until'] });
    const first = await ctx.fx.store.increment('tallies', 't1', 'n', 1, { client: 'a', until: 100 });
    assert.equal(first, { id: 't1', client: 'a', until: 100, n: 1 });
    // The initial fields are used only when the document is created.
    const second = await ctx.fx.store.increment('tallies', 't1', 'n', 2, { client: 'b', until: 999 });
    assert.equal(second, { id: 't1', client: 'a', until: 100, n: 3 });
    const counts = await Promise.all(Array.from({ length: 20 }, () => ctx.fx.store.increment('tallies', 't2', 'n', 1, { until: 5 })));
    assert.equal(counts.map((d) => d.n).sort((a, b) => Number(a) - Number(b)), Array.from({ length: 20 }, (_, i) => i + 1), 'each increment sees its own count');
    assert.equal(await ctx.fx.store.get('tallies', 't2'), { id: 't2', until: 5, n: 20 });
    assert.equal((await ctx.fx.store.find('tallies', { where: { n: { $gte: 3 } } })).map((d) => d.id), ['t1', 't2'], 'the incremented field stays queryable');
    await ctx.fx.store.dropCollection('tallies');
  });

  test('leases: acquired when free, renewed by their owner only, refused to others while held, released', async (ctx) => {
    const store = ctx.fx.store;
    assert.is(await store.getLease('lease-a'), null);
    assert.ok(await store.acquireLease('lease-a', 'one', 10_000));
    const held = await store.getLease('lease-a');
    assert.is(held?.owner, 'one');
    assert.is(held?.name, 'lease-a');
    assert.ok(held!.remainingMs > 0 && held!.remainingMs <= 10_000, `remaining ${held?.remainingMs}`);
    assert.not.ok(await store.acquireLease('lease-a', 'two', 10_000), 'held by another');
    assert.not.ok(await store.renewLease('lease-a', 'two', 10_000), 'only the owner renews');
    assert.ok(await store.renewLease('lease-a', 'one', 10_000));
    assert.ok(await store.acquireLease('lease-a', 'one', 10_000), 'acquiring a lease one holds renews it');
    // Leases are independent of each other.
    assert.ok(await store.acquireLease('lease-b', 'two', 10_000));
    await store.releaseLease('lease-a', 'two');
    assert.is((await store.getLease('lease-a'))?.owner, 'one', 'only the owner releases');
    await store.releaseLease('lease-a', 'one');
    assert.is(await store.getLease('lease-a'), null);
    assert.not.ok(await store.renewLease('lease-a', 'one', 10_000), 'a released lease is not renewed');
    assert.ok(await store.acquireLease('lease-a', 'two', 10_000), 'a released lease is free at once');
    await store.releaseLease('lease-a', 'two');
    await store.releaseLease('lease-b', 'two');
  });

  test('leases: a lapsed lease is taken over, and its old owner can no longer renew it', async (ctx) => {
    const store = ctx.fx.store;
    assert.ok(await store.acquireLease('lease-c', 'old', 50));
    // Waits past the time to live: lapsing is a lower bound, so this cannot be early.
    await new Promise((r) => setTimeout(r, 200));
    assert.is(await store.getLease('lease-c'), null, 'lapsed');
    assert.ok(await store.acquireLease('lease-c', 'new', 10_000), 'taken over');
    assert.not.ok(await store.renewLease('lease-c', 'old', 10_000), 'the old owner lost it');
    assert.is((await store.getLease('lease-c'))?.owner, 'new');
    // An owner whose lease lapsed but was not taken may still renew it.
    assert.ok(await store.acquireLease('lease-d', 'slow', 50));
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(await store.renewLease('lease-d', 'slow', 10_000));
    assert.is((await store.getLease('lease-d'))?.owner, 'slow');
    await store.releaseLease('lease-c', 'new');
    await store.releaseLease('lease-d', 'slow');
  });

  test('leases: of many owners racing for a free lease, exactly one holds it', async (ctx) => {
    const store = ctx.fx.store;
    const owners = Array.from({ length: 12 }, (_, i) => `racer-${i}`);
    const won = await Promise.all(owners.map((o) => store.acquireLease('lease-race', o, 10_000)));
    assert.is(won.filter(Boolean).length, 1, `winners: ${won.join(',')}`);
    const winner = owners[won.indexOf(true)]!;
    assert.is((await store.getLease('lease-race'))?.owner, winner);
    const renewed = await Promise.all(owners.map((o) => store.renewLease('lease-race', o, 10_000)));
    assert.equal(renewed.map((r, i) => (r ? owners[i] : null)).filter(Boolean), [winner]);
    await store.releaseLease('lease-race', winner);
  });

  test('a fenced view writes while its owner holds the lease (lapsed or not), and nothing once another owner took it', async (ctx) => {
    const store = ctx.fx.store;
    const other = await ctx.fx.another();
    await store.ensureCollection({ name: 'fenced', indexes: ['n'] });
    assert.ok(await store.acquireLease('fence-a', 'holder', 50));
    assert.ok(await store.acquireLease('fence-b', 'holder', 10_000));
    const view = store.fenced(['fence-a', 'fence-b'], 'holder');
    await view.upsert('fenced', { id: 'f1', n: 1 });
    await view.bulkWrite([{ kind: 'put', collection: 'fenced', doc: { id: 'f2', n: 2 } }]);
    await view.commitBatch('fence-proj', [{ kind: 'put', collection: 'fenced', doc: { id: 'f3', n: 3 } }], null, { position: 1 });
    await new Promise((r) => setTimeout(r, 200));
    assert.is(await store.getLease('fence-a'), null, 'lapsed');
    await view.upsert('fenced', { id: 'f1', n: 10 });
    assert.equal(await other.get('fenced', 'f1'), { id: 'f1', n: 10 }, 'a lapsed lease nobody took still fences nothing out');

    // Another process takes one of the two over: every kind of write through the view is refused.
    assert.ok(await other.acquireLease('fence-a', 'thief', 10_000));
    await rejects(view.upsert('fenced', { id: 'f1', n: 99 }), LeaseLostError);
    await rejects(view.delete('fenced', 'f2'), LeaseLostError);
    await rejects(view.bulkWrite([{ kind: 'put', collection: 'fenced', doc: { id: 'f4', n: 4 } }]), LeaseLostError);
    await rejects(view.commitBatch('fence-proj', [{ kind: 'put', collection: 'fenced', doc: { id: 'f5', n: 5 } }], { position: 1 }, { position: 2 }), LeaseLostError);
    await rejects(view.dropCollection('fenced'), LeaseLostError);
    await rejects(view.ensureCollection({ name: 'fenced_more' }), LeaseLostError);
    await rejects(view.swapIn([['fenced', 'fenced_live']], 'fence-proj', { position: 2 }, 'fence-retired'), LeaseLostError);
    assert.equal(
      (await other.find('fenced', { sort: [['n', 'asc']] })).map((d) => d.id),
      ['f2', 'f3', 'f1'],
      'nothing changed',
    );
    assert.equal(await other.getCheckpoint('fence-proj'), { position: 1 });
    assert.not.ok((await other.listCollections()).includes('fenced_more'));
    // The store itself, and a view of the new owner, write as before; reads through the old view still work.
    const thiefView = other.fenced(['fence-a'], 'thief');
    await thiefView.upsert('fenced', { id: 'f6', n: 6 });
    assert.equal(await view.get('fenced', 'f6'), { id: 'f6', n: 6 });
    await store.delete('fenced', 'f6');
    await other.releaseLease('fence-a', 'thief');
    await store.releaseLease('fence-b', 'holder');
    // Released: no longer held by the holder either.
    await rejects(view.upsert('fenced', { id: 'f7', n: 7 }), LeaseLostError);
    await store.dropCollection('fenced');
    await store.deleteCheckpoint('fence-proj');
  });

  return test;
};
