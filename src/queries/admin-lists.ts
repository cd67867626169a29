/**
 * Paged, searchable lists for the admin pages, read from the store a page at a time (keyset
 * paging: each page continues after, or before, the last document shown, never by skipping).
 * A search is a prefix of an indexed field, which the store answers as a range: the ReadStore
 * port has no text search, and a filter in memory would read the whole collection.
 */
import { API_KEYS, FILES, GROUPS, OBJECTS, REST_APIS, USERS, type ApiKeyDoc, type FileDoc, type GroupDoc, type ObjectDoc, type RestApiDoc, type UserDoc } from '../projections/read-models.ts';
import type { Doc, FieldCondition, FindQuery, ReadStore, Scalar } from '../projections/read-store.ts';

/** Where a page starts or ends: a document's sort key (when the list has one) and id. */
export interface Cursor {
  readonly key?: Scalar;
  readonly id: string;
}

export interface PageRequest {
  /** The page after this document (forwards); else `before`; else the first page. */
  readonly after?: Cursor;
  readonly before?: Cursor;
  readonly size: number;
}

export interface ListPage<T> {
  readonly items: readonly T[];
  /** Documents matching the search, on every page. */
  readonly total: number;
  /** How many matching documents come before the first one shown. */
  readonly offset: number;
  /** The page size asked for. */
  readonly size: number;
  readonly next?: Cursor;
  readonly prev?: Cursor;
}

type Where = Readonly<Record<string, FieldCondition>>;
type Range = { $gt?: Scalar; $gte?: Scalar; $lt?: Scalar; $lte?: Scalar };

interface Listing {
  readonly collection: string;
  readonly where: Where;
  /** A sort field before the id (which breaks its ties, ascending); without it the list is by id. */
  readonly key?: { readonly field: string; readonly dir: 'asc' | 'desc' };
}

// The highest code point: every string starting with a prefix sorts below prefix + this, in the
// stores' byte order of UTF-8 as in JavaScript's order of UTF-16.
const TOP = '\u{10FFFF}';

/** The range of strings starting with `prefix` (nothing to add for an empty one). */
export const prefixRange = (prefix: string): Range | undefined => (prefix === '' ? undefined : { $gte: prefix, $lt: prefix + TOP });

const below = (a: Scalar, b: Scalar) => (a as string | number) < (b as string | number);

/** Both conditions on one field: a range meets a range; anything else is replaced by `extra`. */
const both = (where: Where, field: string, extra: Range): Where => {
  const had = where[field];
  if (had === undefined || had === null || typeof had !== 'object' || '$in' in had) return { ...where, [field]: extra };
  const merged: Range = { ...had };
  for (const op of ['$gt', '$gte'] as const) {
    const v = extra[op];
    if (v === undefined) continue;
    const lower = merged.$gt ?? merged.$gte;
    if (lower === undefined || below(lower, v) || (lower === v && op === '$gt')) {
      delete merged.$gt;
      delete merged.$gte;
      merged[op] = v;
    }
  }
  for (const op of ['$lt', '$lte'] as const) {
    const v = extra[op];
    if (v === undefined) continue;
    const upper = merged.$lt ?? merged.$lte;
    if (upper === undefined || below(v, upper) || (upper === v && op === '$lt')) {
      delete merged.$lt;
      delete merged.$lte;
      merged[op] = v;
    }
  }
  return { ...where, [field]: merged };
};

const cursorOf = (l: Listing, doc: Doc): Cursor => (l.key ? { key: (doc[l.key.field] ?? null) as Scalar, id: doc.id } : { id: doc.id });

/** `forwards`: the list's own order; else its reverse. Conditions for "beyond the cursor's key" that way. */
const beyond = (asc: boolean, key: Scalar): Range => (asc ? { $gt: key } : { $lt: key });

/** Up to `n` documents after (forwards) or before (backwards) `from`, in that direction's order. */
const fetch = async <T extends Doc>(reads: ReadStore, l: Listing, from: Cursor | undefined, n: number, forwards: boolean): Promise<T[]> => {
  const idDir = forwards ? 'asc' : 'desc';
  if (!l.key) {
    const where = from ? both(l.where, 'id', forwards ? { $gt: from.id } : { $lt: from.id }) : l.where;
    return reads.find<T>(l.collection, { where, sort: [['id', idDir]], limit: n });
  }
  const { field, dir } = l.key;
  const keyDir = forwards ? dir : dir === 'asc' ? 'desc' : 'asc';
  const sort: FindQuery['sort'] = [[field, keyDir], ['id', idDir]];
  if (!from) return reads.find<T>(l.collection, { where: l.where, sort, limit: n });
  const key = from.key ?? null;
  // Ties on the key first (by id), then the keys beyond it: two range queries, as the port has no "or".
  const sameKey = key === null ? { ...l.where, [field]: null } : both(l.where, field, { $gte: key, $lte: key });
  const ties = await reads.find<T>(l.collection, { where: both(sameKey, 'id', forwards ? { $gt: from.id } : { $lt: from.id }), sort: [['id', idDir]], limit: n });
  if (ties.length >= n || key === null) return ties;
  const rest = await reads.find<T>(l.collection, { where: both(l.where, field, beyond(keyDir === 'asc', key)), sort, limit: n - ties.length });
  return [...ties, ...rest];
};

/** Matching documents before `doc` in the list's order. */
const countBefore = async (reads: ReadStore, l: Listing, doc: Doc): Promise<number> => {
  if (!l.key) return reads.count(l.collection, { where: both(l.where, 'id', { $lt: doc.id }) });
  const { field, dir } = l.key;
  const key = (doc[field] ?? null) as Scalar;
  if (key === null) return reads.count(l.collection, { where: { ...l.where, [field]: null, id: { $lt: doc.id } } });
  const [earlierKeys, ties] = await Promise.all([
    reads.count(l.collection, { where: both(l.where, field, beyond(dir !== 'asc', key)) }),
    reads.count(l.collection, { where: both(both(l.where, field, { $gte: key, $lte: key }), 'id', { $lt: doc.id }) }),
  ]);
  return earlierKeys + ties;
};

/** What a page is read from: a listing, or the documents matching either of two. */
interface Source<T extends Doc> {
  fetch(from: Cursor | undefined, n: number, forwards: boolean): Promise<T[]>;
  count(): Promise<number>;
  countBefore(doc: Doc): Promise<number>;
}

const sourceOf = <T extends Doc>(reads: ReadStore, l: Listing): Source<T> => ({
  fetch: (from, n, forwards) => fetch<T>(reads, l, from, n, forwards),
  count: () => reads.count(l.collection, { where: l.where }),
  countBefore: (doc) => countBefore(reads, l, doc),
});

/** Where both hold; ranges only (a range meets a range on the same field). */
const meet = (a: Where, b: Where): Where => Object.entries(b).reduce<Where>((w, [field, c]) => (w[field] === undefined ? { ...w, [field]: c } : both(w, field, c as Range)), a);

/** The list's order (its key, then the id; a missing key first, as the stores sort it): negative when `x` comes first. */
const order = (l: Listing, x: Doc, y: Doc): number => {
  if (l.key) {
    const a = (x[l.key.field] ?? null) as Scalar;
    const b = (y[l.key.field] ?? null) as Scalar;
    if (a !== b) {
      const asc = a === null ? -1 : b === null ? 1 : below(a, b) ? -1 : 1;
      return l.key.dir === 'asc' ? asc : -asc;
    }
  }
  return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
};

/**
 * Documents matching `a` or `b` (same collection and order; the port has no "or"): each page merges
 * a page of each, and counts are by inclusion-exclusion with the documents matching both.
 */
const eitherOf = <T extends Doc>(reads: ReadStore, a: Listing, b: Listing): Source<T> => {
  const inBoth = { ...a, where: meet(a.where, b.where) };
  return {
    fetch: async (from, n, forwards) => {
      const [fromA, fromB] = await Promise.all([fetch<T>(reads, a, from, n, forwards), fetch<T>(reads, b, from, n, forwards)]);
      const seen = new Set<string>();
      return [...fromA, ...fromB]
        .sort((x, y) => (forwards ? order(a, x, y) : order(a, y, x)))
        .filter((doc) => !seen.has(doc.id) && !!seen.add(doc.id))
        .slice(0, n);
    },
    count: async () => {
      const [na, nb, both] = await Promise.all([a, b, inBoth].map((l) => reads.count(l.collection, { where: l.where })));
      return na! + nb! - both!;
    },
    countBefore: async (doc) => {
      const [na, nb, both] = await Promise.all([a, b, inBoth].map((l) => countBefore(reads, l, doc)));
      return na! + nb! - both!;
    },
  };
};

/** One page of a listing, with the cursors of its neighbours and its place in the whole. */
export const listPage = <T extends Doc>(reads: ReadStore, l: Listing, req: PageRequest): Promise<ListPage<T>> => pageOf(l, sourceOf<T>(reads, l), req);

/** One page of the documents matching either listing (in `a`'s order). */
export const listEitherPage = <T extends Doc>(reads: ReadStore, a: Listing, b: Listing, req: PageRequest): Promise<ListPage<T>> =>
  pageOf(a, eitherOf<T>(reads, a, b), req);

const pageOf = async <T extends Doc>(l: Listing, source: Source<T>, req: PageRequest): Promise<ListPage<T>> => {
  const backwards = !req.after && req.before !== undefined;
  const got = await source.fetch(req.after ?? req.before, req.size + 1, !backwards);
  const more = got.length > req.size;
  const items = backwards ? got.slice(0, req.size).reverse() : got.slice(0, req.size);
  const first = items[0];
  const last = items[items.length - 1];
  const [total, offset] = await Promise.all([source.count(), first ? source.countBefore(first) : Promise.resolve(0)]);
  const next = backwards ? (last ? cursorOf(l, last) : undefined) : more && last ? cursorOf(l, last) : undefined;
  const prev = backwards ? (more && first ? cursorOf(l, first) : undefined) : offset > 0 && first ? cursorOf(l, first) : undefined;
  return { items, total, offset, size: req.size, ...(next ? { next } : {}), ...(prev ? { prev } : {}) };
};

const byId = (collection: string, prefix: string): Listing => {
  const range = prefixRange(prefix);
  return { collection, where: range ? { id: range } : {} };
};

/** REST APIs by URL; `q`: the URL starts with it. */
export const pageRestApis = (reads: ReadStore, q: string, req: PageRequest) => listPage<RestApiDoc>(reads, byId(REST_APIS, q), req);

/** Users by user name; `q`: the user name starts with it. */
export const pageUsers = (reads: ReadStore, q: string, req: PageRequest) => listPage<UserDoc>(reads, byId(USERS, q), req);

/** Groups by code; `q`: the code starts with it. */
export const pageGroups = (reads: ReadStore, q: string, req: PageRequest) => listPage<GroupDoc>(reads, byId(GROUPS, q), req);

/** API keys by user name; `q`: the user name starts with it. */
export const pageApiKeys = (reads: ReadStore, q: string, req: PageRequest) => {
  const range = prefixRange(q);
  return listPage<ApiKeyDoc>(reads, { collection: API_KEYS, where: range ? { username: range } : {}, key: { field: 'username', dir: 'asc' } }, req);
};

/** Store objects by title; `q`: the title starts with it; `type`: of that type only. */
export const pageObjects = (reads: ReadStore, search: { q: string; type: string }, req: PageRequest) => {
  const range = prefixRange(search.q);
  const where: Record<string, FieldCondition> = {};
  if (range) where.title = range;
  if (search.type) where.objectType = search.type;
  return listPage<ObjectDoc>(reads, { collection: OBJECTS, where, key: { field: 'title', dir: 'asc' } }, req);
};

const HEX = /^[0-9a-f]+$/i;

/**
 * Stored files, newest first; `q`: the filename starts with it as typed (names are case-sensitive)
 * or, when it could be the start of a digest (hex), the digest does, in either case.
 */
export const pageFiles = (reads: ReadStore, q: string, req: PageRequest) => {
  const listing = (where: Where): Listing => ({ collection: FILES, where, key: { field: 'createdAt', dir: 'desc' } });
  const name = prefixRange(q);
  if (!name) return listPage<FileDoc>(reads, listing({}), req);
  const byName = listing({ filename: name });
  // The id is `<digest>-<size>`: a hex prefix of it is a prefix of the digest.
  return HEX.test(q) ? listEitherPage<FileDoc>(reads, listing({ id: prefixRange(q.toLowerCase())! }), byName, req) : listPage<FileDoc>(reads, byName, req);
};
