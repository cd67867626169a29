import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import { pagedDocs } from './paged-docs.ts';
import type { Projector, RebuildTarget } from './projector.ts';
import type { BatchLimit, LeaseStore, ReadStore } from './read-store.ts';
import { windowFull } from './runner/commit-policy.ts';
import { PARTS_PER_WORKER, rangesOf, unlessAborted, type OwnerShare, type SharedParts, type StreamPart, type StreamRange } from './stream-share.ts';

export const REBUILD_SUFFIX = '__rebuild';
export const rebuildCheckpoint = (projection: string) => `rebuild:${projection}`;
/** The lease held by whoever runs a projection's rebuild (a projector's worker or the CLI): one at a time. */
export const rebuildLease = (projection: string) => `rebuild:${projection}`;

/**
 * A rebuild's lease lasts this many projection lease TTLs. One step of a rebuild holds the store's
 * write lock for as long as it takes, and neither its worker nor the thread renewing for it can renew
 * meanwhile: switching in the objects projection over 2M events took 9 s, indexing its copy, on an
 * otherwise idle machine. Taking a rebuild over is never urgent (the live projection keeps serving);
 * taking over one still running starts minutes of work over.
 */
export const REBUILD_LEASE_TTLS = 6;
export const rebuildLeaseTtl = (leaseTtlMs: number) => REBUILD_LEASE_TTLS * leaseTtlMs;

/**
 * Renews `owner`'s rebuild leases of `names` every `renewMs` until the returned function is called,
 * from a thread other than the one rebuilding: a rebuild's synchronous steps (indexing a large copy,
 * a long commit) can outlast the lease, and the thread doing them cannot renew meanwhile. Only
 * renews: a lease not yet taken, released, or taken over by another owner is left as it is.
 */
export const keepRebuildLeases = (leases: LeaseStore, names: readonly string[], owner: string, ttlMs: number, renewMs: number): (() => void) => {
  const timer = setInterval(() => {
    // A renewal refused (the store busy past its timeout) is tried again at the next tick.
    for (const name of names) leases.renewLease(rebuildLease(name), owner, ttlMs).catch(() => undefined);
  }, renewMs);
  return () => clearInterval(timer);
};

export interface RebuildProgress {
  /** The projection rebuilt, or the names of all of them joined by ", ". */
  readonly projection: string;
  /** Events read from the log by this run. */
  readonly processed: number;
  readonly position: number;
  readonly head: number;
  readonly eventsPerSecond: number;
  /** Seconds left at the current rate; null until it can be estimated. */
  readonly etaSeconds: number | null;
  readonly phase: 'building' | 'switching' | 'done' | 'interrupted';
}

export type RebuildRecord = RebuildProgress & { readonly error?: string };

export class RebuildInProgressError extends Error {
  constructor(readonly projection: string) {
    super(`Projection ${projection} is already being rebuilt`);
  }
}

/**
 * Each projection's last rebuild as every process sees it: requested (building, nothing read
 * yet), its progress, and how it ended. Written by whoever runs the rebuild.
 */
export const REBUILDS = 'projection_rebuilds';
export const rebuildsSpec = { name: REBUILDS, indexes: [] };

/** A rebuild asked for or running, not ended (a crashed one stays under way until it is resumed). */
export const rebuildUnderway = (r: RebuildRecord | undefined): boolean => !!r && !r.error && (r.phase === 'building' || r.phase === 'switching');

export const readRebuilds = async (reads: ReadStore, projections: readonly string[]): Promise<Map<string, RebuildRecord>> => {
  const docs = await reads.getMany<{ id: string; progress: RebuildRecord }>(REBUILDS, projections);
  return new Map([...docs].map(([name, doc]) => [name, doc.progress]));
};

const writeRebuild = (reads: ReadStore, name: string, progress: RebuildRecord) =>
  reads.upsert(REBUILDS, { id: name, progress: { ...progress, projection: name }, updatedAt: new Date().toISOString() });

/**
 * Records that `name` is to be rebuilt: the holder of its lease picks the request up. Refused while
 * one is under way (requested, running, or left half-done by a crash and not yet resumed).
 */
export const requestRebuild = async (events: EventStore, reads: ReadStore, name: string): Promise<RebuildProgress> => {
  const [current] = [...(await readRebuilds(reads, [name])).values()];
  if (rebuildUnderway(current) || (await reads.getLease(rebuildLease(name)))) throw new RebuildInProgressError(name);
  const requested: RebuildProgress = { projection: name, processed: 0, position: 0, head: await events.headPosition(), eventsPerSecond: 0, etaSeconds: null, phase: 'building' };
  await writeRebuild(reads, name, requested);
  return requested;
};

/** A rebuild that failed before it could record its own failure (its worker did not start): it is not retried until asked again. */
export const recordRebuildFailure = async (reads: ReadStore, name: string, message: string): Promise<void> => {
  const current = (await readRebuilds(reads, [name])).get(name);
  if (!rebuildUnderway(current)) return;
  await writeRebuild(reads, name, { ...current!, error: message });
};

export interface RebuildOptions {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly projectors: readonly Projector[];
  /** Events read from the log per page. */
  readonly batchSize?: number;
  readonly onProgress?: (progress: RebuildProgress) => void;
  /** Stops after the page in progress (and commits it); the next run resumes from there. */
  readonly signal?: AbortSignal;
  /**
   * A stop by `signal` is not the operator's: the stored record stays "building", so the next
   * holder of the projection resumes it (a service shutting down).
   */
  readonly resumeAfterStop?: boolean;
  /** Longest time folded documents stay uncommitted (what an interruption without a signal can lose). */
  readonly commitEveryMs?: number;
  /** The most one commit may carry; the read store's own bound (ReadStore.maxBatch) by default. */
  readonly maxBatch?: BatchLimit;
  /** Name on the rebuild leases; a random one by default. */
  readonly owner?: string;
  /** The projection leases' TTL (SVC_LEASE_TTL_MS): a rebuild's lease lasts REBUILD_LEASE_TTLS times that. */
  readonly leaseTtlMs?: number;
  readonly leaseRenewMs?: number;
  /**
   * Bytes of folded documents (as JSON; the heap holds about three times that) kept in memory
   * across all projections. Past it the rebuild commits and drops the documents least recently
   * written, which are read back from the store when an event needs them: memory is bounded by
   * this, not by the length of the log.
   */
  readonly cacheBytes?: number;
  /** The streams of one of `projectors` (folded by stream) shared with helpers running beside it (helpRebuild). */
  readonly share?: OwnerShare;
}

export const DEFAULT_REBUILD_CACHE_BYTES = 48 * 2 ** 20;

/**
 * Megabytes a rebuild worker's old generation may grow to before V8 collects it whole (see
 * withOldSpaceFloor). Its folds keep the documents they read, which are promoted and then replaced
 * as events change them: by default V8 kept the limit a little above the few tens of megabytes
 * alive, and each worker of a fresh service's catch-up over 1M events collected its whole heap
 * 108-153 times. 96 MB halved that with the process's peak where it was; from 112 MB the garbage
 * held showed in the peak, which the catch-up must keep within 600 MB (the README's table, measured
 * on Node 20; Node 24's V8 collects such a heap less often by itself and gains less). Fixed,
 * whatever the log's length.
 */
export const REBUILD_OLD_SPACE_FLOOR_MB = 96;

/**
 * Megabytes of a rebuild worker's young generation (its semi-spaces and the space for large new
 * objects): what Node 20 and 22 give a worker thread by default. Node 24's V8 (13.6) allows one
 * 192 MB, and a fold's documents, which survive a scavenge or two before the next event replaces
 * them, grew each worker's new space to 128 MB, kept as the pages V8 pools for reuse: `svc rebuild
 * all` over a 1M-event log peaked at 738 MB of resident set on Node 24 against 489-527 MB on Node
 * 20 and 22, and 553 MB with this bound (one run each; 24 MB: 530 MB, for 5% more time).
 */
export const REBUILD_YOUNG_GENERATION_MB = 48;

/**
 * What a process (or worker thread) given over to rebuilds needs besides its document cache: a
 * heap that holds the cache (about three times its JSON) and what a page of the log and a commit
 * take, and a read store page cache as large as the document cache (the rebuild writes mostly new
 * pages; what it reads back is what it dropped). With the V8 heap bounded, its garbage is
 * collected instead of the heap growing to several times what is alive.
 *
 * The bound is not where the heap stays: V8 grows it in steps it sizes by the bound, and a tight
 * one makes the steps small. Given the whole default cache, at 4x (288 MB) a 1M-event rebuild in
 * one worker collected its whole heap 187 times, about once a second, for about 20% of its time;
 * at 8x (480 MB) 142-163 times, while its heap never went past 300 MB either way and the process's
 * peak resident set moved by 6-13 MB. In two pairs of `npm run bench -- rebuild` runs (two workers,
 * each bounded by its share) the rebuild took 13% less time on average (17% less CPU); a fresh
 * service's catch-up, which runs the same workers, showed no gain beyond the machine's noise.
 */
export const rebuildMemory = (cacheBytes: number) => ({
  /** A worker thread's `resourceLimits`: both generations bounded, whatever Node's defaults. */
  heap: { maxOldGenerationSizeMb: Math.ceil((8 * cacheBytes) / 2 ** 20) + 96, maxYoungGenerationSizeMb: REBUILD_YOUNG_GENERATION_MB },
  pageCacheBytes: Math.max(16 * 2 ** 20, cacheBytes),
});
/**
 * Relative CPU cost of rebuilding a projection, from rebuilds of the app's projections one at a time
 * over a 1M-event log (wall seconds): a projection that snapshots (a collection fold: 51 and 64 s)
 * costs 4; the objects projection, folded stream by stream (33 s), 2.5; the others (users, work
 * units, REST APIs, files: about half a second each) a quarter. Counting the objects projection as
 * one of the small ones put it beside a collection fold and three small ones (88 s against 67 s).
 */
const rebuildCost = (p: Projector) => (p.afterBatch ? 4 : p.byStream ? 2.5 : 0.25);

/**
 * Relative memory a rebuild's documents need: a collection fold keeps what it reads of every
 * object (27 MB of JSON for one of the app's at 1M events), the objects projection folded stream by
 * stream writes and drops its documents as it goes, the others hold little.
 */
const rebuildState = (p: Projector) => (p.afterBatch ? 4 : p.byStream ? 1 : 0.25);

/** A group's part in sharing the streams of a projection folded by stream (stream-share.ts). */
export type GroupShare = { readonly role: 'owner'; readonly projection: string; readonly workers: number } | { readonly role: 'helper'; readonly projection: string };

export interface RebuildGroup<P extends Projector> {
  readonly projectors: P[];
  readonly cost: number;
  readonly state: number;
  readonly share?: GroupShare;
}

/**
 * Projections shared out among at most `workers` rebuilds that run side by side (each reads the log
 * itself, which costs little beside the folds), balanced by CPU cost: the costliest first, each to
 * the group with the least so far. `state` says how much of the document cache the group's
 * documents need (see rebuildState). With two workers or more, the streams of the first projection
 * folded by stream are shared among all of them (its owner's group and a helper in every other,
 * each charged an even share of its cost; each takes parts of them once its own projections are
 * done), so that projection alone still keeps every worker busy; every other group holds at least
 * one projection.
 */
export const rebuildGroups = <P extends Projector>(projectors: readonly P[], workers: number): RebuildGroup<P>[] => {
  const shared = workers > 1 ? projectors.find((p) => p.byStream) : undefined;
  const count = Math.max(1, Math.min(workers, shared ? Math.max(workers, projectors.length) : projectors.length));
  const groups = Array.from({ length: count }, () => ({ projectors: [] as P[], cost: 0, state: 0, share: undefined as GroupShare | undefined }));
  const byCost = projectors.map((p, i) => ({ p, i, cost: rebuildCost(p) })).sort((a, b) => b.cost - a.cost || a.i - b.i);
  for (const { p, cost } of byCost) {
    const lightest = groups.reduce((min, g) => (g.cost < min.cost ? g : min));
    lightest.projectors.push(p);
    if (p !== shared || count === 1) {
      lightest.cost += cost;
      lightest.state += rebuildState(p);
      continue;
    }
    for (const g of groups) {
      g.cost += cost / count;
      g.state += rebuildState(p) / count;
      g.share = g === lightest ? { role: 'owner', projection: p.name, workers: count } : { role: 'helper', projection: p.name };
    }
  }
  // Each group in the order the projections were given (the order they are listed and switched in).
  for (const g of groups) g.projectors.sort((a, b) => projectors.indexOf(a) - projectors.indexOf(b));
  return groups.filter((g) => g.projectors.length > 0 || g.share).map(({ share, ...g }) => (share ? { ...g, share } : g));
};

/**
 * One progress for rebuilds running side by side over the same log: done up to where the slowest
 * is, at the rate of the slowest, ending when the last ends (interrupted if any was).
 */
export const combinedProgress = (parts: readonly RebuildProgress[]): RebuildProgress => {
  const position = Math.min(...parts.map((p) => p.position));
  const head = Math.max(...parts.map((p) => p.head));
  const etas = parts.map((p) => p.etaSeconds);
  const running = parts.filter((p) => p.phase === 'building' || p.phase === 'switching');
  const phase: RebuildProgress['phase'] =
    running.length > 0 ? (running.some((p) => p.phase === 'building') ? 'building' : 'switching') : parts.some((p) => p.phase === 'interrupted') ? 'interrupted' : 'done';
  return {
    projection: parts.map((p) => p.projection).join(', '),
    processed: Math.max(...parts.map((p) => p.processed)),
    position,
    head,
    eventsPerSecond: Math.min(...parts.map((p) => p.eventsPerSecond)),
    etaSeconds: etas.some((e) => e === null) ? null : Math.max(...(etas as number[])),
    phase,
  };
};

/** What an overfull cache is cut down to: room for a while before the next cut. */
const EVICT_TO = 0.7;
const MAX_PENDING_DOCS = 300_000;
/** Least time between two progress records written to the store. */
const RECORD_EVERY_MS = 500;

const target: RebuildTarget = { physical: (c) => `${c}${REBUILD_SUFFIX}` };

interface Build {
  readonly projector: Projector;
  readonly checkpoint: string;
  /** The rebuild checkpoint as stored. */
  stored: number;
  /** The generation the projection gets when this copy is switched in (one rebuild of it runs at a time). */
  readonly generation: number;
  docs: BatchDocs;
  readonly handles: ReadonlySet<string> | undefined;
}

/** Takes every projection's rebuild lease, or none. */
const takeLeases = async (reads: ReadStore, names: readonly string[], owner: string, ttlMs: number): Promise<void> => {
  const taken: string[] = [];
  for (const name of names) {
    if (await reads.acquireLease(rebuildLease(name), owner, ttlMs)) {
      taken.push(name);
      continue;
    }
    for (const t of taken) await reads.releaseLease(rebuildLease(t), owner);
    throw new RebuildInProgressError(name);
  }
};

/**
 * Blue/green rebuild of one or more projections in one pass over the log: each is folded into
 * fresh copies of its collections (with its own checkpoint, so an interrupted run resumes) while
 * the live ones keep serving, then switched in atomically. A rebuild from the start keeps its
 * documents in memory (up to `cacheBytes`, then the least recently written are dropped and read
 * back when needed) and writes each once per commit, however many events touched it. The live
 * projection, wherever it runs, finds its checkpoint moved and carries on from the rebuilt
 * position: nothing is missed, nothing applied twice. One rebuild of a projection runs at a time
 * across every process (a lease, renewed while it runs); its progress is recorded in the store.
 * The copies get their indexes once folded, before the switch: an index kept up to date through
 * every write of a rebuild whose documents do not all fit in memory (each rewritten many times)
 * was most of its cost, where building it once sorts each document once.
 */
export const rebuildProjections = async (options: RebuildOptions): Promise<RebuildProgress> => {
  const { events, reads, projectors } = options;
  const owner = options.owner ?? `rebuild-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const ttlMs = rebuildLeaseTtl(options.leaseTtlMs ?? 10_000);
  const renewMs = options.leaseRenewMs ?? 3_000;
  const names = projectors.map((p) => p.name);
  await reads.ensureCollection(rebuildsSpec);
  await takeLeases(reads, names, owner, ttlMs);
  // Every write of the rebuild is refused once another process has taken one of its leases over (it
  // lapsed while this one could not renew): the two never write the same copies.
  const fenced = reads.fenced(names.map(rebuildLease), owner);
  let last: RebuildProgress | undefined;
  const switched = new Set<string>();
  try {
    return await rebuild({ ...options, reads: fenced }, owner, ttlMs, renewMs, (p) => (last = p), switched);
  } catch (error) {
    const message = (error as Error).message;
    const at: RebuildProgress = last ?? { projection: names.join(', '), processed: 0, position: 0, head: 0, eventsPerSecond: 0, etaSeconds: null, phase: 'building' };
    // Through the fence (after a take-over the record is the new holder's), and not over a projection
    // already switched in, which was rebuilt whatever happened to the others.
    for (const name of names) if (!switched.has(name)) await writeRebuild(fenced, name, { ...at, error: message }).catch(() => undefined);
    throw error;
  } finally {
    // Helpers waiting for a part that a failure kept from being offered go on with their own work.
    options.share?.offer(null);
    for (const name of names) await reads.releaseLease(rebuildLease(name), owner).catch(() => undefined);
  }
};

const rebuild = async (
  options: RebuildOptions,
  owner: string,
  ttlMs: number,
  renewMs: number,
  seen: (p: RebuildProgress) => void,
  switched: Set<string>,
): Promise<RebuildProgress> => {
  const { events, reads, projectors } = options;
  const batchSize = options.batchSize ?? 2000;
  const commitEveryMs = options.commitEveryMs ?? 60_000;
  const limit = options.maxBatch ?? reads.maxBatch;
  const measure = Number.isFinite(limit.bytes);
  const cacheBytes = options.cacheBytes ?? DEFAULT_REBUILD_CACHE_BYTES;
  const builds: Build[] = [];
  for (const projector of projectors) {
    const checkpoint = rebuildCheckpoint(projector.name);
    const stored = (await reads.getCheckpoint(checkpoint))?.position ?? 0;
    if (stored === 0) await projector.beforeRebuild?.(reads);
    for (const spec of projector.collections) {
      // A rebuild without a checkpoint starts from nothing, whatever an earlier attempt left.
      if (stored === 0) await reads.dropCollection(target.physical(spec.name));
      // Without its indexes until the documents are in (built before the switch): a rebuild reads its copies only by id.
      await reads.ensureCollection({ name: target.physical(spec.name) });
    }
    const generation = ((await reads.getCheckpoint(projector.name))?.generation ?? 0) + 1;
    builds.push({ projector, checkpoint, stored, generation, docs: new BatchDocs(reads, target.physical, stored === 0, measure), handles: projector.handles && new Set(projector.handles) });
  }
  // Only events some projector folds are read (every projector ignores the others).
  const types = projectors.every((p) => p.handles) ? [...new Set(projectors.flatMap((p) => p.handles!))] : undefined;
  const started = Date.now();
  let position = Math.min(...builds.map((b) => b.stored));
  let processed = 0;
  let head = await events.headPosition();
  const name = projectors.map((p) => p.name).join(', ');
  /** The projection whose shared streams are folded last (stream-share.ts), if any. */
  let deferred: Build | undefined;
  let recordedAt = 0;
  let recordedPhase: RebuildProgress['phase'] | undefined;
  const progress = async (phase: RebuildProgress['phase'], stored: RebuildProgress['phase'] = phase, report = true): Promise<RebuildProgress> => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? processed / seconds : 0;
    // Positions approximate events on the embedded store; on EventStoreDB they are bytes, so the ETA is rougher.
    const remaining = Math.max(0, head - position);
    const p = { projection: name, processed, position, head, eventsPerSecond: Math.round(rate), etaSeconds: rate > 0 ? Math.ceil(remaining / rate) : null, phase };
    seen(p);
    if (report) options.onProgress?.(p);
    if (stored !== recordedPhase || Date.now() - recordedAt >= RECORD_EVERY_MS) {
      // A projection folded last has folded nothing it could resume from until its streams are committed.
      for (const b of builds) await writeRebuild(reads, b.projector.name, { ...p, ...(b === deferred && b.stored === 0 ? { position: 0 } : {}), phase: stored });
      recordedAt = Date.now();
      recordedPhase = stored;
    }
    return p;
  };
  let renewedAt = Date.now();
  // Renewed between pages rather than by a timer: a rebuild keeps its thread busy for long stretches.
  const renew = async () => {
    if (Date.now() - renewedAt < renewMs) return;
    for (const b of builds) {
      if (!(await reads.renewLease(rebuildLease(b.projector.name), owner, ttlMs))) throw new Error(`Rebuild of ${b.projector.name} lost its lease to another process`);
    }
    renewedAt = Date.now();
  };

  const commit = async (b: Build, at: number) => {
    // A build ahead of the others (resumed further on, or folded by stream) has folded nothing up to
    // `at`: its checkpoint never goes back, or the events in between would be folded twice.
    if (at < b.stored) at = b.stored;
    if (b.docs.pending === 0 && b.stored === at) return;
    await reads.commitBatch(b.checkpoint, b.docs.ops(), b.stored === 0 ? null : { position: b.stored }, { position: at });
    b.docs.written();
    b.stored = at;
  };
  let committedAt = Date.now();
  const commitAll = async (at: number) => {
    for (const b of active) await commit(b, at);
    committedAt = Date.now();
  };

  // Recorded at once (other processes show it), reported after the first page as before.
  await progress('building', 'building', false);
  const readByStream = events.readByStream?.bind(events);
  const stopped = () => progress('interrupted', options.resumeAfterStop ? 'building' : 'interrupted');
  // Folded up to the head as read now; the log is then read in order from there for them.
  const through = head;
  const share = options.share;
  // The shared projection's streams are folded last, a part at a time, by whichever rebuild is free.
  deferred = share && readByStream ? builds.find((b) => b.projector.name === share.projection && b.stored === 0 && b.projector.byStream) : undefined;
  if (share) {
    const cuts = deferred && events.splitStreams ? await events.splitStreams({ streamPrefix: deferred.projector.byStream!.streamPrefix, parts: share.workers * PARTS_PER_WORKER }) : [];
    // None offered: the others take none and go on.
    share.offer(deferred ? { through, parts: rangesOf(cuts) } : null);
  }
  /** The builds the log is read for now: until its streams are folded, not the deferred one (it commits nothing). */
  let active = builds.filter((b) => b !== deferred);
  const byStream = readByStream ? active.filter((b) => b.stored === 0 && b.projector.byStream) : [];
  if (readByStream && byStream.length > 0) {
    for (const b of byStream) {
      const base = processed;
      const between = async (folded: number) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (options.signal?.aborted) return false;
        await renew();
        processed = base + folded;
        // Where the rebuild stands, for progress, is where its furthest-behind projection does: this one
        // has folded `folded` events (positions are dense on a store that reads by stream).
        position = Math.min(through, folded, ...active.filter((x) => x !== b).map((x) => x.stored));
        await progress('building');
        return true;
      };
      // Stopped: nothing is committed; without a checkpoint the next run starts these copies over.
      if (!(await foldByStream(readByStream, reads, b.projector, {}, through, limit, measure, batchSize, between))) return stopped();
      await commit(b, through);
      // Its documents are in the store, no longer in memory: the events after `through` read them back.
      b.docs = new BatchDocs(reads, target.physical, false, measure);
    }
    position = Math.min(...active.map((b) => b.stored));
  }
  /** Folds the active builds in log order from `position` to the head; false when stopped (what was folded is committed). */
  const inOrder = async (): Promise<boolean> => {
    for (;;) {
      // Every await of the loop may resolve at once (the embedded stores answer synchronously): a turn
      // of the event loop per page lets a stop (a signal, a worker's message) be seen.
      await new Promise((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) {
        await commitAll(position);
        return false;
      }
      await renew();
      const headBefore = await events.headPosition();
      const batch: RecordedEvent[] = [];
      for await (const e of events.readAll({ after: position, maxCount: batchSize, ...(types ? { types } : {}) })) batch.push(e);
      if (batch.length === 0) {
        // Nothing any projector folds lies between `position` and the head read before the page.
        position = Math.max(position, headBefore);
        await commitAll(position);
        return true;
      }
      const after = position;
      for (const event of batch) {
        for (const b of active) {
          if (event.position > b.stored && (b.handles === undefined || b.handles.has(event.type))) {
            // Awaited only when it waits: folds over documents at hand return nothing, and a turn per event adds up.
            const applied = b.projector.apply(event, b.docs);
            if (applied) await applied;
          }
          // A commit window ends at an event boundary once it fills what one commit may carry.
          if (windowFull(b.docs.pending, b.docs.pendingBytes, limit)) await commit(b, event.position);
        }
      }
      const last = batch[batch.length - 1]!;
      position = last.position;
      processed += batch.length;
      for (const b of active) {
        if (!b.projector.afterBatch) {
          b.docs.dropChanges();
          continue;
        }
        await b.projector.afterBatch({
          reads,
          last,
          after,
          changes: b.docs.takeChanges(),
          rebuild: target,
          generation: b.generation,
          state: async (collection) => {
            if (b.docs.complete) return [b.docs.documents(collection)];
            await commit(b, position);
            return pagedDocs(reads, target.physical(collection));
          },
        });
      }
      if (Date.now() - committedAt > commitEveryMs || active.some((b) => b.docs.pending > MAX_PENDING_DOCS)) await commitAll(position);
      // Past the bound the cache stops being the whole state: later misses read the committed documents.
      const cached = active.reduce((n, b) => n + b.docs.cachedBytes, 0);
      if (cached > cacheBytes) {
        await commitAll(position);
        for (const b of active) b.docs.evict((b.docs.cachedBytes / cached) * cacheBytes * EVICT_TO);
      }
      if (last.position > head) head = await events.headPosition();
      await progress('building');
    }
  };
  if (active.length > 0 && !(await inOrder())) return stopped();
  if (deferred) {
    // Committed, and not read again: the heap is the streams' while they are folded.
    for (const b of active) b.docs = new BatchDocs(reads, target.physical, false, measure);
    const between = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) return false;
      await renew();
      await progress('building');
      return true;
    };
    if (!(await foldParts(share!, options.signal, (part) => foldByStream(readByStream!, reads, deferred!.projector, part.range, part.through, limit, measure, batchSize, between)))) return stopped();
    // The checkpoint says every stream is folded up to `through`: not before every part is written.
    if ((await unlessAborted(share!.helped().then(() => true), options.signal)) === undefined) return stopped();
    await commit(deferred, through);
    deferred.docs = new BatchDocs(reads, target.physical, false, measure);
    // Then what came since, in log order, for it alone: the others are committed where they stopped.
    active = [deferred];
    position = through;
    if (!(await inOrder())) return stopped();
  }
  const switching = await progress('switching');
  // Each step renews the leases: indexing the copies and switching them in take seconds each on a
  // large log, and a lapsed lease lets the holder of a projection start its rebuild over.
  for (const b of builds) {
    for (const spec of b.projector.collections) {
      await renew();
      await reads.ensureCollection({ ...spec, name: target.physical(spec.name) });
    }
  }
  for (const b of builds) {
    await renew();
    await reads.swapIn(
      b.projector.collections.map((c) => [target.physical(c.name), c.name] as const),
      b.projector.name,
      // Each where it was folded to: one folded last (shared streams) may be past the others.
      { position: b.stored },
      b.checkpoint,
    );
    await b.projector.afterRebuild?.(reads);
    // Recorded done as soon as it is switched in: with its rebuild checkpoint gone, a record still
    // under way would read as a rebuild asked for and not begun, to be started over from nothing.
    await writeRebuild(reads, b.projector.name, { ...switching, phase: 'done' });
    switched.add(b.projector.name);
  }
  return progress('done');
};

/** Streams' documents kept at most while folding by stream: written and dropped at the end of a stream past it. */
const BY_STREAM_DOCS = 2_000;

/**
 * Folds a byStream projection from nothing up to `through`, one stream after another. A stream's
 * documents are finished once its last event is folded, so they are written and dropped every
 * BY_STREAM_DOCS documents and none is ever read back: each is written once, whatever the cache.
 * Nothing is checkpointed here (the caller commits the checkpoint once every stream is folded).
 * `between` runs at a stream's start about every `every` events: false stops the fold (false).
 */
const foldByStream = async (
  readByStream: NonNullable<EventStore['readByStream']>,
  reads: ReadStore,
  projector: Projector,
  range: StreamRange,
  through: number,
  limit: BatchLimit,
  measure: boolean,
  every: number,
  between: (folded: number) => Promise<boolean>,
): Promise<boolean> => {
  const fresh = () => new BatchDocs(reads, target.physical, true, measure);
  let docs = fresh();
  const write = async () => {
    if (docs.pending === 0) return;
    await reads.bulkWrite(docs.ops());
    docs.written();
  };
  let stream: string | undefined;
  let folded = 0;
  let next = every;
  const types = projector.handles;
  for await (const event of readByStream({ streamPrefix: projector.byStream!.streamPrefix, ...range, through, ...(types ? { types } : {}) })) {
    if (event.stream !== stream) {
      stream = event.stream;
      if (docs.size >= BY_STREAM_DOCS) {
        await write();
        docs = fresh();
      }
      if (folded >= next) {
        if (!(await between(folded))) return false;
        next = folded + every;
      }
    }
    const applied = projector.apply(event, docs);
    if (applied) await applied;
    folded++;
    if (windowFull(docs.pending, docs.pendingBytes, limit)) await write();
  }
  await write();
  return between(folded);
};

/** Takes parts of shared streams until none is left, folding each (the owner's and helpers' alike): false once stopped. */
const foldParts = async (share: SharedParts, signal: AbortSignal | undefined, fold: (part: StreamPart) => Promise<boolean>): Promise<boolean> => {
  for (;;) {
    const part = await unlessAborted(share.take(), signal);
    if (part === undefined) return false;
    if (part === null) return true;
    if (!(await fold(part))) return false;
    share.folded();
  }
};

/** Rebuilds one projection (see rebuildProjections). */
export const rebuildProjection = (options: Omit<RebuildOptions, 'projectors'> & { readonly projector: Projector }): Promise<RebuildProgress> =>
  rebuildProjections({ ...options, projectors: [options.projector] });

export interface HelpOptions {
  readonly events: EventStore;
  readonly reads: ReadStore;
  /** The projection whose streams are shared (folded by stream). */
  readonly projector: Projector;
  readonly share: SharedParts;
  /** The owner's rebuild leases are held under (this helper's writes are fenced by the projection's). */
  readonly owner: string;
  readonly signal?: AbortSignal;
  readonly batchSize?: number;
  readonly maxBatch?: BatchLimit;
}

/**
 * Folds parts of a projection's streams (stream-share.ts) into the copies its owner's rebuild set up,
 * one at a time until none is left, each through a view fenced by the projection's rebuild lease
 * (a run taken over by another process starts its copies over). True once none is left, false when
 * stopped: the owner, stopped too, commits nothing for the projection and its next run starts over.
 */
export const helpRebuild = async (options: HelpOptions): Promise<boolean> => {
  const { events, projector, share, signal } = options;
  const reads = options.reads.fenced([rebuildLease(projector.name)], options.owner);
  const limit = options.maxBatch ?? reads.maxBatch;
  const between = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return !signal?.aborted;
  };
  try {
    return await foldParts(share, signal, (part) => foldByStream(events.readByStream!.bind(events), reads, projector, part.range, part.through, limit, Number.isFinite(limit.bytes), options.batchSize ?? 2000, between));
  } catch (error) {
    share.failed((error as Error).message);
    throw error;
  }
};
