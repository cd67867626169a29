import type { ReadStore } from '../projections/read-store.ts';
import { OBJECTS, OBJECT_LINKS, type LinkDoc, type ObjectDoc, USERS, type UserDoc, WORK_UNITS, type WorkUnitDoc } from '../projections/read-models.ts';
import type { Schema } from '../domain/schema.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';
import { linkedRefs, serialiseObject, type LinkTarget, type SlugMemo } from './serialise-object.ts';
import { collectionChanges, collectionVersion, type VersionedProjections } from '../projections/versioned-cache.ts';
import { SizedVersionedCache } from '../projections/sized-cache.ts';

// Heap bytes, roughly: strings count twice their length (UTF-16 at worst), each object and value a fixed overhead.
const stringsBytes = (o: object): number => {
  let n = 64;
  for (const x of Object.values(o)) n += typeof x === 'string' ? 2 * x.length + 16 : Array.isArray(x) ? 16 + 24 * x.length : 16;
  return n;
};
const linkTargetBytes = (t: LinkTarget | null): number => (t ? stringsBytes(t) + 32 * t.labels.length : 64);
/** A document and the plain answer kept with it (ObjectAnswerMemo: about as long as the document): twice the document. */
const docBytes = (doc: ObjectDoc | null): number => {
  if (!doc) return 64;
  let n = stringsBytes(doc) + 32 * doc.labels.length;
  for (const code in doc.attributes) for (const v of doc.attributes[code]!) n += 48 + stringsBytes(v);
  return 2 * n;
};

/**
 * What links show of the objects they point to (title and behaviour) by ref, `null` for a ref with
 * no object; valid for one version of the objects read model (see VersionedCache), bounded in bytes.
 */
export class LinkTargetCache extends SizedVersionedCache<string, LinkTarget | null> {
  constructor(currentVersion: () => number, maxBytes: number, changedSince?: (version: number) => ReadonlySet<string> | undefined) {
    super(currentVersion, maxBytes, linkTargetBytes, changedSince);
  }
}

/** Object documents by ref (`null`: no such object), valid for one version of the objects read model, bounded in bytes. */
export class ObjectDocCache extends SizedVersionedCache<string, ObjectDoc | null> {
  constructor(currentVersion: () => number, maxBytes: number, changedSince?: (version: number) => ReadonlySet<string> | undefined) {
    super(currentVersion, maxBytes, docBytes, changedSince);
  }
}

/** Link targets of each document object (for one schema): documents from the cache are served again and again, unchanged. */
export type LinkedRefsMemo = WeakMap<ObjectDoc, readonly string[]>;

/**
 * The JSON text of each document object's plain (`sources=NONE`) serialisation, with what it was
 * made from besides the document: its link targets (the objects link titles are read from: the
 * cache's values, replaced when their objects change) and which of them the caller could read
 * (`seen`), the access it was last served to, and the version of the objects read model at which
 * the targets were looked up. One answer per document, so it lives and goes with the document
 * cache's entries. While that version stands, the same access object (a principal's, kept while
 * the users read model stands) is served the text without a look-up; after a move, the text is
 * served again if every target is the one it was made from.
 */
export type ObjectAnswerMemo = WeakMap<ObjectDoc, ObjectAnswer>;
type ObjectAnswer = {
  readonly seen: string;
  readonly json: string;
  readonly access: ReadAccess;
  readonly targets: readonly (LinkTarget | undefined)[];
  /** The link target cache's version when the targets were looked up; -1 with no cache. */
  readonly version: number;
};

export interface ObjectQueryDeps {
  readonly reads: ReadStore;
  readonly schema: Schema;
  readonly baseUrl: string;
  /** Titles of link targets; without it every serialisation reads them from the read store. */
  readonly linkTargets?: LinkTargetCache;
  /** Objects asked for by ref; without it every request reads the object from the read store. */
  readonly docs?: ObjectDocCache;
  /** Link targets of documents served before; without it they are found again each time. */
  readonly linkedRefs?: LinkedRefsMemo;
  /** Slugs of titles served before (for object URLs). */
  readonly slugs?: SlugMemo;
  /** Plain serialisations made before; without it each is made and encoded again. */
  readonly answers?: ObjectAnswerMemo;
}

/** What Object API answers keep between requests; made once per service at start-up. */
export type ObjectQueryCaches = Required<Pick<ObjectQueryDeps, 'linkTargets' | 'docs' | 'linkedRefs' | 'slugs' | 'answers'>>;

/** What SVC_OBJECT_CACHE defaults to. */
export const OBJECT_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * `maxBytes` bounds the documents (with the answers kept beside them) and link targets together:
 * three quarters for documents, a quarter for link targets.
 */
export const createObjectQueryCaches = (runner: VersionedProjections, maxBytes = OBJECT_CACHE_BYTES): ObjectQueryCaches => {
  // Both keyed by ref and made from that object's document alone: a move of the objects read model
  // drops what it changed (everything, where this process does not know what that was).
  const objectsVersion = collectionVersion(runner, OBJECTS);
  const changed = collectionChanges(runner, OBJECTS);
  return {
    linkTargets: new LinkTargetCache(objectsVersion, Math.floor(maxBytes / 4), changed),
    docs: new ObjectDocCache(objectsVersion, maxBytes - Math.floor(maxBytes / 4), changed),
    linkedRefs: new WeakMap(),
    slugs: new Map(),
    answers: new WeakMap(),
  };
};

/** Why a query could not be answered; the HTTP layer maps kinds to statuses. */
export class ObjectQueryError extends Error {
  constructor(readonly kind: string, message: string) {
    super(message);
  }
}

interface SourceDef {
  readonly name: string;
  readonly sort: number;
  readonly depends?: string;
}

/**
 * Sources in the order they run (and are listed in `sources`), by Haplo's standard names: only the
 * `haplo:` namespace becomes `svc:`, so `std:` names are what Haplo clients send.
 */
export const SOURCES: readonly SourceDef[] = [
  { name: 'std:workunit', sort: 1000 },
  { name: 'std:workflow', sort: 1100, depends: 'std:workunit' },
  { name: 'std:username', sort: 2000 },
];

/** `svc:` spellings accepted too (this service listed its sources under them before). */
const SOURCE_ALIASES: ReadonlyMap<string, string> = new Map(SOURCES.map((s) => [s.name.replace(/^std:/, 'svc:'), s.name]));

/** Haplo reads a `sources` value this long as if it were NONE. */
const SOURCES_MAX_LENGTH = 1023;

const badQuery = (message: string) => new ObjectQueryError('svc:api-v0:object:bad-query', message);

export const parseSources = (param: string | undefined): string[] => {
  if (!param) {
    throw new ObjectQueryError(
      'svc:api-v0:object:sources-not-specified',
      'Sources must be specified as parameter. Use ?sources=NONE for basic object serialisation, ?sources=ALL for everything (discouraged), or ?sources=source1,source2,... to specify exact sources required.',
    );
  }
  if (param === 'NONE' || param.length > SOURCES_MAX_LENGTH) return [];
  if (param === 'ALL') return SOURCES.map((s) => s.name);
  // Names no source provides are ignored, as Haplo's serialiser does.
  const names = new Set(param.split(',').map((s) => s.trim()).map((s) => SOURCE_ALIASES.get(s) ?? s));
  const used = SOURCES.filter((s) => names.has(s.name));
  for (const def of used) {
    if (def.depends && !names.has(def.depends)) {
      throw new ObjectQueryError('svc:api-v0:generic:exception', `Source ${def.name} depends on ${def.depends} which has not been used.`);
    }
  }
  return used.map((s) => s.name);
};

const noSuchObject = (ref: string) => new ObjectQueryError('svc:api-v0:object:no-such-object', `Object ${ref} does not exist`);

/** The object at `ref` (deleted ones included), null if there is none; from the cache where it has it. */
const objectDoc = async (deps: ObjectQueryDeps, ref: string): Promise<ObjectDoc | null> => {
  const cache = deps.docs;
  if (!cache) return deps.reads.get<ObjectDoc>(OBJECTS, ref);
  const hit = cache.get(ref);
  if (hit !== undefined) return hit;
  // Read before loading: a change committed meanwhile leaves what was loaded stale, never served.
  const version = cache.version();
  const doc = await deps.reads.get<ObjectDoc>(OBJECTS, ref);
  cache.set(ref, doc, version);
  return doc;
};

/** An object the principal may read, or the no-such-object error (which also hides unreadable ones). */
export const readableObject = async (deps: ObjectQueryDeps, ref: string, access: ReadAccess): Promise<ObjectDoc> => {
  const doc = await objectDoc(deps, ref);
  if (!doc || !canRead(access, doc.labels)) throw noSuchObject(ref);
  return doc;
};

const linkTargetOf = (doc: ObjectDoc): LinkTarget =>
  doc.behaviour ? { title: doc.title, labels: doc.labels, behaviour: doc.behaviour } : { title: doc.title, labels: doc.labels };

/** Title and behaviour of the objects at `refs` (those that exist), from the cache where it has them. */
const loadLinkTargets = async (deps: ObjectQueryDeps, refs: readonly string[]): Promise<Map<string, LinkTarget>> => {
  const cache = deps.linkTargets;
  if (!cache) return deps.reads.getMany<ObjectDoc>(OBJECTS, refs);
  const found = new Map<string, LinkTarget>();
  const missing: string[] = [];
  for (const ref of refs) {
    const hit = cache.get(ref);
    if (hit === undefined) missing.push(ref);
    else if (hit !== null) found.set(ref, hit);
  }
  if (missing.length > 0) {
    // Read before loading: a change committed meanwhile leaves what was loaded stale, never served.
    const version = cache.version();
    const docs = await deps.reads.getMany<ObjectDoc>(OBJECTS, missing);
    for (const ref of missing) {
      const doc = docs.get(ref);
      const target = doc ? linkTargetOf(doc) : null;
      cache.set(ref, target, version);
      if (target) found.set(ref, target);
    }
  }
  return found;
};

const linkedRefsOf = (deps: ObjectQueryDeps, doc: ObjectDoc): readonly string[] => {
  const memo = deps.linkedRefs;
  if (!memo) return linkedRefs(doc, deps.schema);
  let refs = memo.get(doc);
  if (!refs) memo.set(doc, (refs = linkedRefs(doc, deps.schema)));
  return refs;
};

/** Serialises objects with their sources, fetching what the sources need in a few batched reads. */
export const serialiseMany = async (deps: ObjectQueryDeps, docs: readonly ObjectDoc[], sources: readonly string[], access: ReadAccess) => {
  const linkTargets = docs.length === 1 ? linkedRefsOf(deps, docs[0]!) : [...new Set(docs.flatMap((d) => linkedRefsOf(deps, d)))];
  // Targets the caller may not read are dropped here, so that nothing of them (title, behaviour, username) is shown.
  const linked = new Map([...(await loadLinkTargets(deps, linkTargets))].filter(([, t]) => canRead(access, t.labels)));
  let usernames: Map<string, string> | undefined;
  if (sources.includes('std:username')) {
    const profiles = [...new Set([...linked.keys(), ...docs.map((d) => d.ref)])];
    const users = profiles.length ? await deps.reads.find<UserDoc>(USERS, { where: { profileRef: { $in: profiles } } }) : [];
    usernames = new Map(users.map((u) => [u.profileRef!, u.username]));
  }
  return Promise.all(
    docs.map(async (doc) => {
      const workUnits = sources.includes('std:workunit')
        ? await deps.reads.find<WorkUnitDoc>(WORK_UNITS, { where: { ref: doc.ref }, sort: [['createdAt', 'asc']] })
        : undefined;
      return serialiseObject(doc, {
        schema: deps.schema,
        baseUrl: deps.baseUrl,
        linked,
        sources,
        ...(deps.slugs ? { slugs: deps.slugs } : {}),
        ...(usernames ? { usernames } : {}),
        ...(workUnits ? { workUnits } : {}),
      });
    }),
  );
};

export const getObject = async (deps: ObjectQueryDeps, ref: string, sourcesParam: string | undefined, access: ReadAccess) => {
  const sources = parseSources(sourcesParam);
  const doc = await readableObject(deps, ref, access);
  const [object] = await serialiseMany(deps, [doc], sources, access);
  return object!;
};

/**
 * `getObject`'s answer as JSON text. A plain one (no sources) is encoded once per document and
 * kept while the document is: most reads ask for the same few objects between two writes.
 */
export const getObjectJson = async (deps: ObjectQueryDeps, ref: string, sourcesParam: string | undefined, access: ReadAccess): Promise<string> => {
  const sources = parseSources(sourcesParam);
  const doc = await readableObject(deps, ref, access);
  const memo = deps.answers;
  if (!memo || sources.length > 0) return JSON.stringify((await serialiseMany(deps, [doc], sources, access))[0]);
  const kept = memo.get(doc);
  const version = deps.linkTargets?.version() ?? -1;
  if (kept?.access === access && version >= 0 && kept.version === version) return kept.json;
  // Callers differ only in which link targets they may read (the others show no title).
  const refs = linkedRefsOf(deps, doc);
  const found = await loadLinkTargets(deps, refs);
  const targets = refs.map((r) => found.get(r));
  let seen = '';
  for (const target of targets) seen += target && canRead(access, target.labels) ? '1' : '0';
  const same = kept !== undefined && kept.seen === seen && kept.targets.every((t, i) => t === targets[i]);
  const json = same ? kept.json : JSON.stringify((await serialiseMany(deps, [doc], sources, access))[0]);
  memo.set(doc, { seen, json, access, targets, version });
  return json;
};

export interface LinkedQuery {
  readonly type?: string;
  readonly attribute?: string;
  readonly qualifier?: string;
  readonly results?: string;
  readonly sources?: string;
  readonly start?: string;
}

const PAGE = { refs: 256, objects: 24 } as const;

/** Objects linking to `ref` (haplo-behaviour.md §5.2), readable by the principal, oldest first, paged. */
export const getLinked = async (deps: ObjectQueryDeps, ref: string, query: LinkedQuery, access: ReadAccess) => {
  await readableObject(deps, ref, access);
  if (query.attribute !== undefined && !deps.schema.attributes.has(query.attribute)) throw badQuery(`Unknown attribute: ${query.attribute}`);
  if (query.qualifier !== undefined && !deps.schema.qualifiers.has(query.qualifier)) throw badQuery(`Unknown qualifier: ${query.qualifier}`);
  if (query.type !== undefined && !deps.schema.types.has(query.type)) throw badQuery(`Unknown type: ${query.type}`);
  const results = query.results ?? 'refs';
  if (results !== 'refs' && results !== 'objects') throw badQuery(`Unknown results option: ${results}`);
  const sources = results === 'objects' ? parseSources(query.sources) : [];
  const start = query.start === undefined ? 0 : Number(query.start);
  if (!/^\d+$/.test(query.start ?? '0') || !Number.isSafeInteger(start)) throw badQuery('start is not a number');

  const links = await deps.reads.find<LinkDoc>(OBJECT_LINKS, {
    where: { to: ref, ...(query.attribute ? { attribute: query.attribute } : {}) },
    sort: [['fromCreated', 'asc']],
  });
  const candidates = [
    ...new Set(
      links
        .filter((l) => query.qualifier === undefined || l.qualifier === query.qualifier)
        .filter((l) => query.type === undefined || deps.schema.isKindOf(l.fromType, query.type))
        .map((l) => l.from),
    ),
  ];
  const docs = await deps.reads.getMany<ObjectDoc>(OBJECTS, candidates);
  const readable = candidates.filter((r) => {
    const d = docs.get(r);
    return d !== undefined && !d.deleted && canRead(access, d.labels);
  });
  const count = readable.length;
  if (start > 0 && start >= count) throw badQuery(`Requested start after end of results, count=${count}`);
  const page = readable.slice(start, start + PAGE[results]);
  const summary = { count, start, end: start + page.length, more: start + page.length < count };
  if (results === 'refs') return { kind: 'svc:api-v0:object:store-query-results', results: summary, refs: page };
  return { kind: 'svc:api-v0:object:store-query-results', results: summary, objects: await serialiseMany(deps, page.map((r) => docs.get(r)!), sources, access) };
};
