import type { EventStore } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES } from '../domain/objects/events.ts';
import type { Projector } from '../projections/projector.ts';
import type { ReadStore } from '../projections/read-store.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { MemoryDocs } from '../projections/batch-docs.ts';
import type { Schema } from '../domain/schema.ts';
import { REF_FACT, type CollectionDef, type FactDef } from '../domain/reporting/collection.ts';
import { DomainError } from '../domain/errors.ts';
import { collectionNames, projectionName } from '../projections/reporting/collection-fold.ts';
import { OBJECTS, type ObjectDoc, type RowDoc } from '../projections/read-models.ts';
import type { ObjectInfo } from '../projections/reporting/object-info.ts';
import { latestSnapshot, loadSnapshot, type ParsedSnapshots } from '../projections/reporting/snapshots.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';

export interface ReportingDeps {
  readonly reads: ReadStore;
  readonly events: EventStore;
  /** State and lag of a projection, where it can be known. */
  readonly statusOf: (projection: string) => Promise<{ readonly state: string; readonly lag: number } | undefined>;
  readonly schema: Schema;
  readonly collections: readonly CollectionDef[];
  /** The fold of each collection, by collection name. */
  readonly folds: ReadonlyMap<string, Projector>;
  /** Snapshots of `reads` parsed for earlier answers. */
  readonly parsedSnapshots: ParsedSnapshots;
  readonly clock: () => number;
}

export class UnknownCollectionError extends Error {
  constructor(readonly collection: string) {
    super(`Unknown collection: ${collection}`);
  }
}

const find = (deps: ReportingDeps, name: string): CollectionDef => {
  const c = deps.collections.find((x) => x.name === name);
  if (!c) throw new UnknownCollectionError(name);
  return c;
};

const PREFIX = '/api/reporting/v0';

export const listCollections = (deps: ReportingDeps) => ({
  collections: [...deps.collections]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((c) => ({ name: c.name, description: c.description, categories: c.categories, info: `${PREFIX}/collection/${c.name}` })),
});

/** `ready`, or `updating` while the collection's projection lags behind the log or is not live. */
export const collectionStatus = async (deps: ReportingDeps, name: string): Promise<'ready' | 'updating'> => {
  const status = await deps.statusOf(projectionName(name));
  return status && status.state === 'live' && status.lag === 0 ? 'ready' : 'updating';
};

export const runnerStatus = (runner: ProjectionRunner) => async (projection: string) => (await runner.status()).find((p) => p.name === projection);

export const collectionDetail = async (deps: ReportingDeps, name: string) => {
  const c = find(deps, name);
  return {
    name: c.name,
    description: c.description,
    categories: c.categories,
    status: await collectionStatus(deps, name),
    facts: [REF_FACT, ...c.facts.map(({ name: n, type, description }) => ({ name: n, type, description }))],
    data: `${PREFIX}/collection-data/${c.name}`,
  };
};

/** Replays the log into the collection's fold, from the newest snapshot at or before `at` to the last event at or before it. */
export const replayCollectionAt = async (deps: ReportingDeps, name: string, at: Date): Promise<MemoryDocs> => {
  const fold = deps.folds.get(name)!;
  const snapshot = await latestSnapshot(deps.reads, fold.name, at);
  const docs = snapshot ? await loadSnapshot(deps.reads, deps.parsedSnapshots, snapshot) : new MemoryDocs();
  for await (const event of deps.events.readAll({ after: snapshot?.position ?? 0, until: at, types: OBJECT_EVENT_TYPES })) {
    await fold.apply(event, docs);
  }
  return docs;
};

interface RowSource {
  rows(): Promise<RowDoc[]>;
  infos(refs: readonly string[]): Promise<Map<string, ObjectInfo>>;
}

const liveSource = (deps: ReportingDeps, name: string): RowSource => {
  const names = collectionNames(name);
  return {
    rows: () => deps.reads.find<RowDoc>(names.rows, { sort: [['id', 'asc']] }),
    infos: (refs) => deps.reads.getMany<ObjectInfo>(names.objects, refs),
  };
};

const memorySource = (docs: MemoryDocs, name: string): RowSource => {
  const names = collectionNames(name);
  const rows = docs.collections.get(names.rows) ?? new Map();
  const objects = (docs.collections.get(names.objects) ?? new Map()) as Map<string, ObjectInfo>;
  return {
    rows: async () => [...(rows.values() as Iterable<RowDoc>)].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    infos: async (refs) => new Map(refs.flatMap((r) => (objects.has(r) ? [[r, objects.get(r)!] as const] : []))),
  };
};

/** Whether any fact source follows a link: its value is read from another object. */
const readsThroughLinks = (f: FactDef): boolean => 'attribute' in f.source && f.source.linked !== undefined;

/**
 * Rows the principal may read, with the `objects` dictionary of every ref used as a fact value.
 * Who may read what is decided on the objects' labels as they are now (also for a past `at`: an
 * object since relabelled confidential is hidden from the past too). A ref value whose object the
 * principal may not read (or that is gone) is null, so every ref left in `rows` is a key of
 * `objects`; a fact read through links from an object the principal may not read is null too.
 */
const answer = async (deps: ReportingDeps, c: CollectionDef, source: RowSource, access: ReadAccess) => {
  const all = await source.rows();
  const mentioned = new Set<string>();
  for (const row of all) {
    mentioned.add(row.id);
    for (const t of row.linkedTo) mentioned.add(t);
    c.facts.forEach((f, i) => {
      const v = row.values[i + 1];
      if (f.type === 'ref' && typeof v === 'string') mentioned.add(v);
      if (f.type === 'refList' && Array.isArray(v)) for (const r of v) mentioned.add(String(r));
    });
  }
  const current = access.all ? undefined : await deps.reads.getMany<ObjectDoc>(OBJECTS, [...mentioned]);
  const readable = (ref: string) => access.all || (current!.has(ref) && canRead(access, current!.get(ref)!.labels));

  const refs = new Set<string>();
  const labelRefs = new Set<string>();
  const rows = all
    .filter((r) => readable(r.id))
    .map((row) => {
      const hiddenLinks = row.linkedTo.some((t) => !readable(t));
      return row.values.map((v, i) => {
        if (i === 0) return v;
        const f = c.facts[i - 1]!;
        if (hiddenLinks && readsThroughLinks(f)) return null;
        if (f.type === 'ref' && typeof v === 'string') return readable(v) ? (refs.add(v), v) : null;
        if (f.type === 'refList' && Array.isArray(v)) return v.map(String).filter((r) => readable(r) && refs.add(r));
        if (f.type === 'labelList' && Array.isArray(v)) for (const r of v) labelRefs.add(String(r));
        return v;
      });
    });
  // The rows' own objects are looked up with the ref values: each row shows its object's title.
  const infos = await source.infos([...new Set([...refs, ...rows.map((values) => values[0] as string)])]);
  const objects: Record<string, { title: string; parent?: string; behaviour?: string }> = {};
  for (const ref of [...refs].sort()) {
    const info = infos.get(ref);
    if (!info) continue;
    const parent = info.parent && readable(info.parent) ? info.parent : undefined;
    objects[ref] = { title: info.title, ...(parent ? { parent } : {}), ...(info.behaviour ? { behaviour: info.behaviour } : {}) };
  }
  // A ref whose object the fold does not know (no title to give) is null too, never dangling.
  const known = (v: unknown) => (typeof v === 'string' && !(v in objects) ? null : v);
  const shown = rows.map((values) => {
    const out = values.map((v, i) => {
      if (i === 0) return v;
      const f = c.facts[i - 1]!;
      if (f.type === 'ref') return known(v);
      if (f.type === 'refList' && Array.isArray(v)) return v.filter((r) => r in objects);
      return v;
    });
    // Haplo's second column: the title of the row's object.
    out.splice(1, 0, infos.get(values[0] as string)?.title ?? null);
    return out;
  });
  for (const ref of [...labelRefs].sort()) {
    const label = deps.schema.byRef(ref);
    if (label) objects[ref] = { title: label.name };
  }
  return { columns: ['ref', 'objectTitle', ...c.facts.map((f) => f.name)], rows: shown, objects };
};

/**
 * A caller whose access reads no label of the schema (and not everything) may read nothing of any
 * collection: that is "no permission" (403), unlike a caller who may read some labels but finds no
 * rows carrying them ("no data", 200 with no rows).
 */
const mayReadSomething = (deps: ReportingDeps, access: ReadAccess): boolean => access.all || [...access.labels].some((l) => deps.schema.labels.has(l));

/** Collection data now, or as it was at `at` (an `at` in the future answers as now). */
export const collectionData = async (deps: ReportingDeps, name: string, at: Date | undefined, access: ReadAccess) => {
  const c = find(deps, name);
  if (!mayReadSomething(deps, access)) {
    throw new DomainError('forbidden', 'svc:api:reporting:not-permitted', `The API key's user may read no objects, so nothing of collection ${name}`);
  }
  const now = deps.clock();
  const status = await collectionStatus(deps, name);
  if (!at || at.getTime() >= now) {
    return { name, status, at: new Date(now).toISOString(), ...(await answer(deps, c, liveSource(deps, name), access)) };
  }
  const docs = await replayCollectionAt(deps, name, at);
  return { name, status, at: at.toISOString(), ...(await answer(deps, c, memorySource(docs, name), access)) };
};

