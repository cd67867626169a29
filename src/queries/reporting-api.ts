import type { EventStore } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES } from '../domain/objects/events.ts';
import type { Projector } from '../projections/projector.ts';
import type { ReadStore } from '../projections/read-store.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { MemoryDocs } from '../projections/batch-docs.ts';
import type { Schema } from '../domain/schema.ts';
import { REF_FACT, type CollectionDef } from '../domain/reporting/collection.ts';
import { collectionNames, projectionName } from '../projections/reporting/collection-fold.ts';
import { type RowDoc } from '../projections/read-models.ts';
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

/**
 * Rows the principal may read, with the `objects` dictionary of every ref used as a fact value.
 * Referenced objects the principal may not read are left out of the dictionary.
 */
const answer = async (deps: ReportingDeps, c: CollectionDef, source: RowSource, access: ReadAccess) => {
  const rows = (await source.rows()).filter((r) => canRead(access, r.labels));
  const refs = new Set<string>();
  const labelRefs = new Set<string>();
  c.facts.forEach((f, i) => {
    for (const row of rows) {
      const v = row.values[i + 1];
      if (f.type === 'ref' && typeof v === 'string') refs.add(v);
      if (f.type === 'refList' && Array.isArray(v)) for (const r of v) refs.add(String(r));
      if (f.type === 'labelList' && Array.isArray(v)) for (const r of v) labelRefs.add(String(r));
    }
  });
  const infos = await source.infos([...refs]);
  const objects: Record<string, { title: string; parent?: string; behaviour?: string }> = {};
  for (const ref of [...refs].sort()) {
    const info = infos.get(ref);
    if (!info || !canRead(access, info.labels)) continue;
    objects[ref] = { title: info.title, ...(info.parent ? { parent: info.parent } : {}), ...(info.behaviour ? { behaviour: info.behaviour } : {}) };
  }
  for (const ref of [...labelRefs].sort()) {
    const label = deps.schema.byRef(ref);
    if (label) objects[ref] = { title: label.name };
  }
  return { columns: ['ref', ...c.facts.map((f) => f.name)], rows: rows.map((r) => r.values), objects };
};

/** Collection data now, or as it was at `at` (an `at` in the future answers as now). */
export const collectionData = async (deps: ReportingDeps, name: string, at: Date | undefined, access: ReadAccess) => {
  const c = find(deps, name);
  const now = deps.clock();
  const status = await collectionStatus(deps, name);
  if (!at || at.getTime() >= now) {
    return { name, status, at: new Date(now).toISOString(), ...(await answer(deps, c, liveSource(deps, name), access)) };
  }
  const docs = await replayCollectionAt(deps, name, at);
  return { name, status, at: at.toISOString(), ...(await answer(deps, c, memorySource(docs, name), access)) };
};

