import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CheckpointConflictError, UnknownFieldError, type Doc, type ReadStore } from '../../src/projections/read-store.ts';

export interface ReadStoreFixture {
  readonly store: ReadStore;
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

  test('renameCollection swaps a rebuilt collection in, replacing the old one with its indexes', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'live', indexes: ['k'] });
    await ctx.fx.store.upsert('live', { id: '1', k: 'old' });
    await ctx.fx.store.ensureCollection({ name: 'live_next', indexes: ['k'] });
    await ctx.fx.store.upsert('live_next', { id: '1', k: 'new' });
    await ctx.fx.store.renameCollection('live_next', 'live');
    assert.equal(await ctx.fx.store.find('live', { where: { k: 'new' } }), [{ id: '1', k: 'new' }]);
    assert.equal(await ctx.fx.store.find('live', { where: { k: 'old' } }), []);
    const names = await ctx.fx.store.listCollections();
    assert.ok(names.includes('live'));
    assert.not.ok(names.includes('live_next'));
    // The freed name can be used again for the next rebuild.
    await ctx.fx.store.ensureCollection({ name: 'live_next', indexes: ['k'] });
    await ctx.fx.store.upsert('live_next', { id: '2', k: 'newer' });
    assert.equal(await ctx.fx.store.find('live_next', { where: { k: 'newer' } }), [{ id: '2', k: 'newer' }]);
    assert.equal(await ctx.fx.store.find('live', { where: { k: 'new' } }), [{ id: '1', k: 'new' }]);
  });

  test('swapIn renames rebuilt collections over the live ones and moves the checkpoints', async (ctx) => {
    await ctx.fx.store.ensureCollection({ name: 'model', indexes: ['k'] });
    await ctx.fx.store.commitBatch('modeller', [{ kind: 'put', collection: 'model', doc: { id: '1', k: 'old' } }], null, { position: 5 });
    await ctx.fx.store.ensureCollection({ name: 'model__rebuild', indexes: ['k'] });
    await ctx.fx.store.commitBatch('rebuild:modeller', [{ kind: 'put', collection: 'model__rebuild', doc: { id: '1', k: 'rebuilt' } }], null, { position: 9 });
    await ctx.fx.store.swapIn([['model__rebuild', 'model']], 'modeller', { position: 9 }, 'rebuild:modeller');
    assert.equal(await ctx.fx.store.find('model', { where: { k: 'rebuilt' } }), [{ id: '1', k: 'rebuilt' }]);
    assert.equal(await ctx.fx.store.getCheckpoint('modeller'), { position: 9 });
    assert.is(await ctx.fx.store.getCheckpoint('rebuild:modeller'), null);
    assert.not.ok((await ctx.fx.store.listCollections()).includes('model__rebuild'));
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

  return test;
};
