import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES } from '../domain/objects/events.ts';
import type { Pause, Projector } from '../projections/projector.ts';
import type { ReadStore } from '../projections/read-store.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import { MemoryDocs } from '../projections/batch-docs.ts';
import type { Schema } from '../domain/schema.ts';
import { REF_FACT, type CollectionDef } from '../domain/reporting/collection.ts';
import { DomainError } from '../domain/errors.ts';
import { collectionNames, projectionName } from '../projections/reporting/collection-fold.ts';
import type { RowDoc } from '../projections/read-models.ts';
import type { AnswerCache, Slices } from './answer-cache.ts';
import type { ReplayLimiter } from './replay-limit.ts';
import type { InfoSummary, LiveInfos } from './live-infos.ts';
import { byId, type LiveRows } from './live-rows.ts';
import { collectionMembers, membersKept, mentionedRefs, type Lookup, type MembersState } from './collection-members.ts';
import type { LiveMembers } from './live-members.ts';
import { describeObject, type ObjectInfo } from '../projections/reporting/object-info.ts';
import { eachDoc, LazyDocMap } from '../projections/reporting/lazy-docs.ts';
import { sortPaused } from './paused-sort.ts';
import { latestSnapshot, loadSnapshot, type ParsedSnapshots, type SnapshotMeta } from '../projections/reporting/snapshots.ts';
import { UnreadableChunkError, type Inflate } from '../projections/reporting/snapshot-chunks.ts';
import type { ReadAccess } from '../domain/users/users.ts';

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
  /** Decompresses snapshot chunks (off the event loop where a thread is given; on it otherwise). */
  readonly inflate?: Inflate;
  readonly clock: () => number;
  /** The version of a projection (ProjectionRunner.version): answers are kept for one version. Without it nothing is kept. */
  readonly versionOf?: (projection: string) => number;
  /** Serialised answers of this process. */
  readonly answers?: AnswerCache;
  /** Bounds the replays for `at` answers running and waiting at once. */
  readonly replays?: ReplayLimiter;
  /** Descriptions of the objects the rows name as they are now (their labels decide who reads what), kept between versions. */
  readonly liveInfos: LiveInfos;
  /** The rows of live answers, kept between versions. */
  readonly liveRows: LiveRows;
  /** What the last live answer per collection and access was made of, kept between versions. */
  readonly liveMembers?: LiveMembers;
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

/**
 * Long answers (10,000 rows take tens of milliseconds to read, filter and serialise) give the event
 * loop back whenever a slice of their work has run this long, so the requests queued behind them
 * (an object GET takes under a millisecond) wait for one slice, not for the whole answer. Two
 * answers being made at once put two slices ahead of a request: with 4 ms slices, object GET p99
 * beside two collection-data readers was 10.4-17.5 ms, with 2 ms 8.7-9.3 ms (1 ms gained no more),
 * and the answers themselves were no slower.
 */
const SLICE_MS = 2;
const slicer = (): Pause => {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
};

/** A collection fold's state as at an instant, and the last position of the log it has folded. */
export interface PastState {
  readonly docs: MemoryDocs;
  /**
   * Its snapshot's position, or the last event replayed onto it: every object event up to this
   * position and none after it, so instants that give the same position give the same state.
   */
  readonly position: number;
}

/**
 * Events read ahead of loading a past state (see PastRead): many times what a snapshot interval
 * (SVC_SNAPSHOT_INTERVAL, 2,000 events by default) leaves to replay, few enough to hold at once.
 */
const READ_AHEAD = 10_000;

/**
 * Where a past state is replayed from and the events to replay onto it, read before anything is
 * loaded: the last of them gives the state's position (PastState), so an answer kept for that state
 * is found without loading or replaying it. Nearby instants replayed about a thousand events each
 * (at 1M events, about 30 ms a time) only to find the answer kept for the first of them.
 */
interface PastRead {
  readonly snapshot: SnapshotMeta | null;
  /** The object events after the snapshot recorded at or before the instant: the first READ_AHEAD of them at most. */
  readonly events: readonly RecordedEvent[];
  /** The state's position, when `events` holds all of them (a log without snapshots may not fit). */
  readonly position: number | undefined;
}

const readPast = async (deps: ReportingDeps, name: string, at: Date): Promise<PastRead> => {
  const snapshot = await latestSnapshot(deps.reads, deps.folds.get(name)!.name, at);
  const after = snapshot?.position ?? 0;
  const events: RecordedEvent[] = [];
  for await (const event of deps.events.readAll({ after, until: at, types: OBJECT_EVENT_TYPES, maxCount: READ_AHEAD + 1 })) events.push(event);
  if (events.length > READ_AHEAD) return { snapshot, events: events.slice(0, READ_AHEAD), position: undefined };
  return { snapshot, events, position: events.length > 0 ? events[events.length - 1]!.position : after };
};

/**
 * Replays the log into the collection's fold, from the newest snapshot at or before `at` to the last
 * event at or before it, from the snapshot and events readPast found. A snapshot written
 * by a newer version (a cluster upgraded one process at a time) in a format this one cannot read is
 * passed over: the replay starts from the log's start.
 */
const replayCollectionAt = async (deps: ReportingDeps, name: string, at: Date, { snapshot: found, events: ahead }: PastRead, pause: Pause): Promise<PastState> => {
  const fold = deps.folds.get(name)!;
  const loaded = found
    ? await loadSnapshot(deps.reads, deps.parsedSnapshots, found, fold.derived, pause, deps.inflate).catch((e: unknown) => {
        if (e instanceof UnreadableChunkError) return undefined;
        throw e;
      })
    : undefined;
  const docs = loaded ?? new MemoryDocs();
  let position = loaded ? found!.position : 0;
  const apply = async (event: RecordedEvent) => {
    const applied = fold.apply(event, docs);
    if (applied) await applied;
    position = event.position;
    await pause();
  };
  // The events read ahead follow the snapshot: from the log's start (a snapshot passed over) they do not.
  if (loaded || !found) for (const event of ahead) await apply(event);
  // The log up to `at` is a prefix of it (recorded times grow with positions): the last event read is
  // the last one at or before `at`. Nothing is left past what was read ahead, unless it did not all fit.
  for await (const event of deps.events.readAll({ after: position, until: at, types: OBJECT_EVENT_TYPES })) await apply(event);
  return { docs, position };
};

interface RowSource {
  rows(pause: Pause): Promise<readonly RowDoc[]>;
  infos(refs: readonly string[], pause: Pause): Promise<Lookup<InfoSummary>>;
}

/**
 * A live answer: from the state of the last one for the same access where one is kept, so that
 * after a write only the rows and objects it touched are made again (membersKept). The rows not in
 * that state name objects the kept summaries may not hold yet: only theirs are looked for.
 */
const liveAnswer = async (deps: ReportingDeps, c: CollectionDef, access: ReadAccess, pause: Pause): Promise<Slices> => {
  const key = `${c.name}\u0000${accessKey(access)}`;
  const rows = await deps.liveRows.rows(c.name, pause);
  const kept = deps.liveMembers?.get(key);
  const before = kept?.state.rows;
  const fresh = before ? rows.filter((r, i) => before[i] !== r) : rows;
  let { infos, position } = await deps.liveInfos.summariesAt(c.name, [...(await mentionedRefs(c, fresh, pause))], pause);
  let previous: { previous: MembersState; changed: ReadonlySet<string> } | undefined;
  if (kept && infos === kept.infos && position !== undefined && kept.position <= position) {
    const changed = position === kept.position ? new Set<string>() : await deps.liveInfos.changedSince(kept.position, position);
    if (changed) previous = { previous: kept.state, changed };
  }
  if (kept && !previous) ({ infos, position } = await deps.liveInfos.summariesAt(c.name, [...(await mentionedRefs(c, rows, pause))], pause));
  const made = await membersKept({ collection: c, schema: deps.schema, rows, infos, current: infos, access, pause, entries: deps.liveInfos.entries, rowTexts: deps.liveRows.texts, ...previous });
  if (position !== undefined) deps.liveMembers?.put(key, { state: made.state, infos, position });
  return made.slices;
};

const memorySource = (docs: MemoryDocs, name: string): RowSource => {
  const names = collectionNames(name);
  const rows = docs.collections.get(names.rows) ?? new Map();
  const objects = docs.collections.get(names.objects) ?? new Map();
  // Described as they are asked for (an answer describes only what it shows), from the fold
  // documents' text where they are not parsed yet: their attributes are never read here.
  const describe: Lookup<InfoSummary> =
    objects instanceof LazyDocMap
      ? { get: (ref) => objects.part(ref, describeObject, (doc) => doc as ObjectInfo) }
      : { get: (ref) => objects.get(ref) as ObjectInfo | undefined };
  return {
    rows: async (pause) => {
      const all: RowDoc[] = [];
      await eachDoc(rows, (doc) => all.push(doc as RowDoc), pause);
      return sortPaused(all, byId, pause);
    },
    infos: async () => describe,
  };
};

/**
 * Rows of a past instant the principal may read, with the `objects` dictionary of every ref used as a fact value, as
 * the JSON members `"columns":…,"rows":…,"objects":…` (the answer without its braces and its name,
 * status and time, which change without the rows changing).
 *
 * Who may read what is decided on the objects' labels as they are now (also for a past `at`: an
 * object since relabelled confidential is hidden from the past too), as the collection's live fold
 * knows them: the same labels as the objects read model's (both fold every object event), and the
 * same version as the rows, so the answer is one projection's. A ref value whose object the
 * principal may not read (or that is gone) is null, so every ref left in `rows` is a key of
 * `objects`; a fact read through links from an object the principal may not read is null too.
 *
 * Row texts and dictionary entries are kept with the documents they were made from, as live ones
 * are: answers from one kept fold state (the same instant for another access, or a nearby one) share
 * its documents, and take each text whose inputs are the same instead of making it again. With them,
 * warm answers over 10,000 rows at 1M events took 142-192 ms instead of 175-264.
 */
const pastAnswer = async (deps: ReportingDeps, c: CollectionDef, source: RowSource, access: ReadAccess, pause: Pause): Promise<Slices> => {
  const all = await source.rows(pause);
  const mentioned = await mentionedRefs(c, all, pause);
  // Labels now, descriptions (titles, parents) as they were then.
  const ids = [...mentioned];
  const infos = await source.infos(ids, pause);
  const current = access.all ? infos : await deps.liveInfos.summaries(c.name, ids, pause);
  return collectionMembers({ collection: c, schema: deps.schema, rows: all, infos, current, access, pause, entries: deps.liveInfos.entries, rowTexts: deps.liveRows.texts });
};

/**
 * A caller whose access reads no label of the schema (and not everything) may read nothing of any
 * collection: that is "no permission" (403), unlike a caller who may read some labels but finds no
 * rows carrying them ("no data", 200 with no rows).
 */
const mayReadSomething = (deps: ReportingDeps, access: ReadAccess): boolean => access.all || [...access.labels].some((l) => deps.schema.labels.has(l));

/** What decides which rows and values a caller sees: the cache keeps one answer per distinct access. */
const accessKey = (access: ReadAccess) => (access.all ? '*' : JSON.stringify([...access.labels].sort()));

/** An answer of collection-data: its name, status and time, and the rest as JSON bytes (see `answer`). */
export interface CollectionAnswer {
  readonly name: string;
  readonly status: 'ready' | 'updating';
  readonly at: string;
  /** `"columns":…,"rows":…,"objects":…`: the JSON object's other members. */
  readonly members: Slices;
}

/** The whole JSON document of an answer, as slices: the kept members are not copied per request. */
export const answerJson = (a: CollectionAnswer): Slices => [
  Buffer.from(`{"name":${JSON.stringify(a.name)},"status":${JSON.stringify(a.status)},"at":${JSON.stringify(a.at)},`),
  ...a.members,
  Buffer.from('}'),
];

/**
 * Collection data now, or as it was at `at` (an `at` in the future answers as now). Answers are kept
 * serialised (when `deps.answers` is given) for the version of the collection's projection they
 * were made from, one per distinct access; replays for `at` run under `deps.replays`' limit.
 */
export const collectionAnswer = async (deps: ReportingDeps, name: string, at: Date | undefined, access: ReadAccess): Promise<CollectionAnswer> => {
  const c = find(deps, name);
  if (!mayReadSomething(deps, access)) {
    throw new DomainError('forbidden', 'svc:api:reporting:not-permitted', `The API key's user may read no objects, so nothing of collection ${name}`);
  }
  const now = deps.clock();
  const status = await collectionStatus(deps, name);
  const past = at && at.getTime() < now ? at : undefined;
  // Now and at a past instant alike, the answer is the projection's at one version: a past answer
  // takes today's labels from it, and an event recorded at or before `at` that was still being
  // appended would move it too.
  const projection = projectionName(name);
  const version = () => deps.versionOf?.(projection) ?? -1;
  const compute = async () => {
    const pause = slicer();
    if (!past) return liveAnswer(deps, c, access, pause);
    const replay = async () => {
      const read = version();
      const ahead = await readPast(deps, name, past);
      // Replayed first only where the events read ahead did not all fit, to learn its position.
      let state: PastState | undefined;
      const position = ahead.position ?? (state = await replayCollectionAt(deps, name, past, ahead, pause)).position;
      const made = async () => pastAnswer(deps, c, memorySource((state ?? (await replayCollectionAt(deps, name, past, ahead, pause))).docs, name), access, pause);
      // Instants between the same two object events have one state, so one answer: asked for
      // nearby instants (a second apart, a day apart in a quiet stretch), it is made once, and found
      // by the state's position before anything is loaded or replayed.
      const key = `${name}\u0000@${position}\u0000${accessKey(access)}`;
      return deps.answers ? deps.answers.through(key, version, made, read) : made();
    };
    return deps.replays ? deps.replays.run(replay) : replay();
  };
  const key = `${name}\u0000${past ? past.toISOString() : 'now'}\u0000${accessKey(access)}`;
  const members = deps.answers ? await deps.answers.through(key, version, compute) : await compute();
  return { name, status, at: (past ?? new Date(now)).toISOString(), members };
};

/** Collection data as a value (the command line's CSV and JSON output). */
export const collectionData = async (deps: ReportingDeps, name: string, at: Date | undefined, access: ReadAccess) => {
  const a = await collectionAnswer(deps, name, at, access);
  const { columns, rows, objects } = JSON.parse(`{${Buffer.concat(a.members).toString()}}`) as { columns: string[]; rows: unknown[][]; objects: Record<string, { title: string; parent?: string; behaviour?: string }> };
  return { name: a.name, status: a.status, at: a.at, columns, rows, objects };
};
