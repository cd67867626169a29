/**
 * Plain Object API answers are encoded once per document and kept with it (issue 15, target 4):
 * kept text is served again, never across callers who may read different link targets, and never
 * after the objects read model has moved; over HTTP the text is the same JSON as the encoded value.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../support/service.ts';
import { createObject, createReader, patchObject, type Reader } from '../support/fixtures.ts';
import { loadSchema } from '../../src/app/load-schema.ts';
import { createObjectQueryCaches, getObject, getObjectJson, type ObjectQueryDeps, type ObjectQueryCaches } from '../../src/queries/object-api.ts';
import type { ReadAccess } from '../../src/domain/users/users.ts';

const TITLE = 'dc:attribute:title';
const COMMON = 'svc:label:common';
const SECRET = 'svc:label:confidential';
const link = (ref: string) => ({ type: 'link', ref });

interface Ctx {
  svc: TestService;
  caches: ObjectQueryCaches;
  deps: ObjectQueryDeps;
  dept: string;
  project: string;
  all: Reader;
  limited: Reader;
}

const ALL: ReadAccess = { all: true, labels: new Set() };
const LIMITED: ReadAccess = { all: false, labels: new Set([COMMON]) };

const test = suite<Ctx>('object answers kept as JSON text', {} as Ctx);

test.before(async (ctx) => {
  ctx.svc = await startTestService();
  const { svc } = ctx;
  ctx.caches = createObjectQueryCaches(svc.runner);
  ctx.deps = { reads: svc.engines.reads, schema: loadSchema(svc.config.schemaFile), baseUrl: svc.config.baseUrl, ...ctx.caches };
  ctx.dept = (await createObject(svc, 'svc:type:department', { [TITLE]: 'Secret Department' }, [SECRET])).ref;
  ctx.project = (await createObject(svc, 'phd:type:project', { [TITLE]: 'Open Project', 'svc:attribute:department': link(ctx.dept) }, [COMMON])).ref;
  ctx.all = await createReader(svc, { readAll: true });
  ctx.limited = await createReader(svc, { readLabels: [COMMON] });
});
test.after(async (ctx) => {
  await ctx.svc?.stop();
});

test('a plain answer is the encoded serialisation, kept with its document and served again', async (ctx) => {
  const text = await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL);
  assert.equal(JSON.parse(text), await getObject(ctx.deps, ctx.project, 'NONE', ALL));
  const doc = ctx.caches.docs.get(ctx.project);
  assert.ok(doc, 'the document is in the document cache');
  assert.is(ctx.caches.answers.get(doc!)?.json, text, 'the answer is kept with its document');
  assert.is(await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL), text);
});

test('callers who may read different link targets never get each other\'s answer', async (ctx) => {
  for (let round = 0; round < 2; round++) {
    const full = JSON.parse(await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL));
    assert.is(full.attributes['svc:attribute:department'][0].title, 'Secret Department');
    const limited = await getObjectJson(ctx.deps, ctx.project, 'NONE', LIMITED);
    assert.not.ok(limited.includes('Secret Department'), limited);
    assert.equal(JSON.parse(limited).attributes['svc:attribute:department'], [link(ctx.dept)]);
  }
});

test('the caller an answer was last served to gets it again without its link targets being looked up', async (ctx) => {
  const access: ReadAccess = { all: false, labels: new Set([COMMON]) };
  const first = await getObjectJson(ctx.deps, ctx.project, 'NONE', access);
  const lookups = () => ctx.caches.linkTargets.hits + ctx.caches.linkTargets.misses;
  const before = lookups();
  assert.is(await getObjectJson(ctx.deps, ctx.project, 'NONE', access), first);
  assert.is(lookups(), before, 'no link target looked up for the same access');
  // Another access (even with the same labels) is checked against the link targets again.
  const other: ReadAccess = { all: false, labels: new Set([COMMON]) };
  assert.is(await getObjectJson(ctx.deps, ctx.project, 'NONE', other), first);
  assert.ok(lookups() > before, 'another access looks its link targets up');
  assert.not.ok((await getObjectJson(ctx.deps, ctx.project, 'NONE', access)).includes('Secret Department'));
  assert.ok((await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL)).includes('Secret Department'));
  assert.not.ok((await getObjectJson(ctx.deps, ctx.project, 'NONE', access)).includes('Secret Department'));
});

test('answers with sources are made afresh, and kept ones go when the objects move', async (ctx) => {
  const withSources = JSON.parse(await getObjectJson(ctx.deps, ctx.project, 'std:username', ALL));
  assert.equal(withSources.sources, ['std:username']);
  assert.equal(JSON.parse(await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL)).sources, []);
  assert.is((await patchObject(ctx.svc, ctx.dept, { attributes: { [TITLE]: 'Renamed Department' } })).status, 200);
  const after = JSON.parse(await getObjectJson(ctx.deps, ctx.project, 'NONE', ALL));
  assert.is(after.attributes['svc:attribute:department'][0].title, 'Renamed Department');
});

test('a write to another object leaves the kept document and answer; one to a link target shows at once', async (ctx) => {
  const other = (await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Other Department' }, [COMMON])).ref;
  const person = (await createObject(ctx.svc, 'svc:type:person', { [TITLE]: 'Ada Researcher' }, [COMMON])).ref;
  const project = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Kept Project', 'phd:attribute:researcher': link(person) }, [COMMON])).ref;
  const reads = ctx.svc.engines.reads;
  const objectReads: string[] = [];
  const get = reads.get.bind(reads);
  const getMany = reads.getMany.bind(reads);
  reads.get = (async (collection: string, id: string) => {
    objectReads.push(id);
    return get(collection, id);
  }) as typeof reads.get;
  reads.getMany = (async (collection: string, ids: readonly string[]) => {
    objectReads.push(...ids);
    return getMany(collection, ids);
  }) as typeof reads.getMany;
  try {
    const access: ReadAccess = { all: false, labels: new Set([COMMON]) };
    const first = await getObjectJson(ctx.deps, project, 'NONE', access);
    assert.ok(first.includes('Ada Researcher'));
    for (let i = 0; i < 3; i++) {
      assert.is((await patchObject(ctx.svc, other, { attributes: { [TITLE]: `Other Department ${i}` } })).status, 200);
      objectReads.length = 0;
      assert.is(await getObjectJson(ctx.deps, project, 'NONE', access), first);
      // Before: the objects read model moved, so the caches were emptied and both read again.
      assert.equal(objectReads, [], `read again after a write to another object: ${objectReads.join(' ')}`);
    }
    // The researcher renamed: the project's document is kept, its answer is not.
    assert.is((await patchObject(ctx.svc, person, { attributes: { [TITLE]: 'Ada Renamed' } })).status, 200);
    objectReads.length = 0;
    const renamed = await getObjectJson(ctx.deps, project, 'NONE', access);
    assert.ok(renamed.includes('Ada Renamed'), renamed);
    assert.equal(objectReads, [person]);
    // Relabelled out of the caller's reach: its title goes from the answer.
    assert.is((await patchObject(ctx.svc, person, { labels: { add: [SECRET], remove: [COMMON] } })).status, 200);
    const hidden = await getObjectJson(ctx.deps, project, 'NONE', access);
    assert.not.ok(hidden.includes('Ada Renamed'), hidden);
    assert.ok((await getObjectJson(ctx.deps, project, 'NONE', ALL)).includes('Ada Renamed'));
    // The project itself changed: read again.
    assert.is((await patchObject(ctx.svc, project, { attributes: { [TITLE]: 'Kept Project, renamed' } })).status, 200);
    objectReads.length = 0;
    assert.ok((await getObjectJson(ctx.deps, project, 'NONE', access)).includes('Kept Project, renamed'));
    assert.equal(objectReads, [project]);
  } finally {
    reads.get = get;
    reads.getMany = getMany;
  }
});

test('over HTTP: the same JSON as the pretty answer, as application/json, per caller', async (ctx) => {
  const path = `/api/v0-object/ref/${ctx.project}?sources=NONE`;
  for (const reader of [ctx.all, ctx.limited, ctx.all]) {
    const plain = await reader.get(path);
    assert.is(plain.status, 200);
    assert.match(plain.contentType, /^application\/json; charset=utf-8/);
    const pretty = await reader.get(`${path}&output=pretty`);
    assert.is(pretty.status, 200);
    assert.equal(plain.body, pretty.body);
    assert.is(plain.body.kind, 'svc:api-v0:object:serialised');
    assert.is(JSON.stringify(plain.body.object).includes('Renamed Department'), reader === ctx.all);
  }
});

test.run();
