import { hostname } from 'node:os';
import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import { pagedDocs } from './paged-docs.ts';
import type { Projector } from './projector.ts';
import { CheckpointConflictError, type BatchLimit, type Checkpoint, type ReadStore } from './read-store.ts';
import { rebuildCheckpoint, RebuildInProgressError, rebuildProjections, rebuildsSpec, readRebuilds, requestRebuild, type RebuildProgress } from './rebuild.ts';
import { commitNow, IDLE_COMMIT_MS, needsWrite, NOOP_FLUSH_MS, windowFull } from './runner/commit-policy.ts';
import { Feed } from './runner/feed.ts';
import { fencedWrites } from './runner/fenced-writes.ts';
import { RebuildTasks, type RebuildLauncher } from './runner/rebuild-tasks.ts';
import { statusOf, type ProjectionStatus } from './runner/status.ts';
import { foldingAny, Waiters } from './runner/waiters.ts';
import { STEP_IDS, VersionSteps } from './runner/version-steps.ts';

export type { ProjectionState, ProjectionStatus } from './runner/status.ts';
export { ProjectionTimeoutError } from './runner/waiters.ts';
export { RebuildInProgressError } from './rebuild.ts';
export type { RebuildLauncher } from './runner/rebuild-tasks.ts';

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface RunnerOptions {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly projectors: readonly Projector[];
  readonly batchSize?: number;
  readonly logger?: Logger;
  /** First delay before a failed projection is retried; doubles up to 30 s. */
  readonly retryDelayMs?: number;
  /**
   * Fold projections (taking their leases: roles all and projector), or only follow the
   * checkpoints other processes store (role api). Default true.
   */
  readonly fold?: boolean;
  /** This runner's name on the leases it holds: unique across the cluster. */
  readonly owner?: string;
  /** A lease not renewed for this long lapses and a standby takes the projection over. */
  readonly leaseTtlMs?: number;
  /** How often held leases are renewed and free ones sought. */
  readonly leaseRenewMs?: number;
  /** How often stored checkpoints are read while nobody waits (so caches follow other processes' commits). */
  readonly followMs?: number;
  /**
   * How often stored checkpoints are read while a caller waits for one (read-your-writes): 20 ms by
   * default, 2 ms on a store that tells whether others committed (ReadStore.othersCommitted), which
   * is asked first and makes most looks no read at all.
   */
  readonly waitPollMs?: number;
  /** Runs rebuilds (a worker thread in the service); in this thread by default. */
  readonly launchRebuild?: RebuildLauncher;
  /** The most one commit may carry; the read store's own bound (ReadStore.maxBatch) by default. */
  readonly maxBatch?: BatchLimit;
  /** Told of every batch folded without error, for the service's metrics (which this folder does not import). */
  readonly onBatch?: (projection: string, seconds: number, events: number) => void;
  /**
   * A projection that has never committed and is more than this many positions behind the head
   * when this runner takes it catches up by a rebuild (all such projections in one pass, through
   * `launchRebuild`: off the serving thread, each document in memory and written once per commit)
   * instead of the live fold, which rewrites every touched document every commit window; the live
   * fold carries on from the rebuilt position. Default 50,000; Infinity: never.
   */
  readonly catchUpByRebuild?: number;
  /**
   * Bytes of documents (their JSON, estimated by sampling) the projections keep in memory across
   * commits, shared equally among them; past its share a projection drops the documents least
   * recently written after a commit and reads them back from the store when an event needs them.
   */
  readonly cacheBytes?: number;
}

const CATCH_UP_BY_REBUILD = 50_000;
const CACHE_BYTES = 32 * 1024 * 1024;

const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A lease owner name that says where it runs (shown in status) and is unique per runner. */
export const newOwnerId = () => `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;

interface Running {
  readonly projector: Projector;
  /** Position of the last event folded in (what waitFor and status go by); for a standby, the stored checkpoint. */
  checkpoint: number;
  /** The checkpoint as stored; behind `checkpoint` only after batches that changed nothing. */
  persisted: number;
  /** The stored checkpoint's generation (moved by every rebuild switched in): commits are fenced by it too. */
  storedGeneration: number;
  /** Position of the last event folded into `docs`: ahead of `checkpoint` while catch-up batches wait to commit together. */
  folded: number;
  /** Documents kept across batches (so catch-up reads each from the store once); dropped on any restart. */
  docs?: BatchDocs;
  committedAt: number;
  commitTimer?: NodeJS.Timeout;
  flushTimer?: NodeJS.Timeout;
  persistedAt: number;
  failed?: Error;
  stopped: boolean;
  /** Holds the projection's lease and folds it here. */
  active: boolean;
  /** Folded elsewhere: this runner follows the stored checkpoint (the negation of active, for status). */
  standby: boolean;
  /** Bumped whenever folding (re)starts or stops: a reader or retry of an older one does nothing. */
  generation: number;
  /** The log reader feeding this projection (shared by all of them, unless it had to fall back to its own). */
  feed?: Feed<Running>;
  retryTimer?: NodeJS.Timeout;
  retryDelay: number;
  busy: boolean;
  /** Bumped whenever this process sees the projection's documents change (a batch with writes, a resync, a moved stored checkpoint). */
  version: number;
  /** What the recent moves of `version` changed, where this process knows it. */
  readonly steps: VersionSteps;
}

/**
 * Feeds each projector from its own checkpoint: batched catch-up, then live. Each batch's
 * document changes and the new checkpoint commit together, so a crash or a failing event never
 * leaves a half-applied batch or a checkpoint ahead of the data.
 *
 * Across processes sharing a store, one runner folds each projection: the holder of its lease.
 * The others stand by and follow the checkpoints it stores (for read-your-writes and caches), and
 * take the projection over when the lease lapses or is released. Every commit is still fenced by
 * the previous checkpoint: a holder that lost its lease without noticing fails its next commit and
 * stands by.
 */
export class ProjectionRunner {
  private readonly running = new Map<string, Running>();
  private readonly waiters: Waiters;
  private readonly batchSize: number;
  private readonly logger: Logger;
  private readonly retryDelayMs: number;
  private readonly fold: boolean;
  readonly owner: string;
  private readonly leaseTtlMs: number;
  private readonly leaseRenewMs: number;
  private readonly followMs: number;
  private readonly waitPollMs: number;
  private readonly maxBatch: BatchLimit;
  /** Bytes of documents each projection keeps across commits. */
  private readonly cacheShare: number;
  private readonly rebuilds: RebuildTasks;
  private leaseTimer?: NodeJS.Timeout;
  private followTimer?: NodeJS.Timeout;
  private followDue = Infinity;
  private following?: Promise<void>;
  private ticking?: Promise<void>;
  private stopping = false;

  constructor(private readonly options: RunnerOptions) {
    // Large batches make catch-up much faster (one transaction each); live batches are as small as what has arrived.
    this.batchSize = options.batchSize ?? 2000;
    this.logger = options.logger ?? silent;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.fold = options.fold ?? true;
    this.owner = options.owner ?? newOwnerId();
    this.leaseTtlMs = options.leaseTtlMs ?? 10_000;
    this.leaseRenewMs = options.leaseRenewMs ?? Math.max(1, Math.floor(this.leaseTtlMs / 3));
    this.followMs = options.followMs ?? 500;
    this.waitPollMs = options.waitPollMs ?? (options.reads.othersCommitted ? 2 : 20);
    this.maxBatch = options.maxBatch ?? options.reads.maxBatch;
    this.cacheShare = (options.cacheBytes ?? CACHE_BYTES) / Math.max(1, options.projectors.length);
    // Only waits for projections folded elsewhere need the stored checkpoints read soon: this
    // runner's own commits wake the others.
    this.waiters = new Waiters((names) => {
      if (names.some(this.foldedElsewhere)) this.followSoon(this.waitPollMs);
    });
    const names = new Set<string>();
    for (const p of options.projectors) {
      if (names.has(p.name)) throw new Error(`Two projectors are named ${p.name}`);
      names.add(p.name);
    }
    this.rebuilds = new RebuildTasks({
      reads: options.reads,
      owner: this.owner,
      logger: this.logger,
      launch:
        options.launchRebuild ??
        ((projectors, o) =>
          rebuildProjections({
            events: options.events,
            reads: options.reads,
            projectors,
            leaseTtlMs: this.leaseTtlMs,
            leaseRenewMs: this.leaseRenewMs,
            maxBatch: this.maxBatch,
            resumeAfterStop: true,
            ...o,
          })),
      // A rebuild switched in moved the checkpoint: the holder carries on from it at once.
      switched: (name) => {
        const run = this.running.get(name);
        if (run?.active && !run.stopped) void this.resync(run).catch((e: Error) => this.onFailure(run, e));
      },
      // A projection left without a reader while it caught up by a rebuild folds live instead.
      failed: (name) => {
        const run = this.running.get(name);
        if (run?.active && !run.stopped && !run.feed) void this.resync(run).catch((e: Error) => this.onFailure(run, e));
      },
    });
  }

  get projectors(): readonly Projector[] {
    return this.options.projectors;
  }

  async start(): Promise<void> {
    const reads = this.options.reads;
    await reads.ensureCollection(rebuildsSpec);
    for (const projector of this.options.projectors) {
      for (const spec of projector.collections) await reads.ensureCollection(spec);
      const checkpoint = await reads.getCheckpoint(projector.name);
      const stored = checkpoint?.position ?? 0;
      const run: Running = {
        projector,
        checkpoint: stored,
        persisted: stored,
        storedGeneration: checkpoint?.generation ?? 0,
        persistedAt: Date.now(),
        folded: stored,
        committedAt: Date.now(),
        stopped: false,
        active: false,
        standby: true,
        generation: 0,
        retryDelay: this.retryDelayMs,
        busy: false,
        version: 0,
        steps: new VersionSteps(),
      };
      this.running.set(projector.name, run);
    }
    if (this.fold) {
      await this.tick();
      this.leaseTimer = setInterval(() => void this.tick(), this.leaseRenewMs);
      this.leaseTimer.unref();
    }
    this.followSoon(this.followMs);
  }

  // ---- leases -------------------------------------------------------------------------------

  /** Renews the leases held, seeks the free ones, and picks up rebuilds asked of the projections held. */
  private tick(): Promise<void> {
    return (this.ticking ??= this.leaseRound().finally(() => (this.ticking = undefined)));
  }

  private async leaseRound(): Promise<void> {
    const reads = this.options.reads;
    const gained: Running[] = [];
    for (const run of this.running.values()) {
      if (run.stopped || this.stopping) return;
      const name = run.projector.name;
      try {
        if (run.active) {
          if (!(await reads.renewLease(name, this.owner, this.leaseTtlMs))) await this.standBy(run, 'its lease was taken over');
        } else if (await reads.acquireLease(name, this.owner, this.leaseTtlMs)) {
          gained.push(run);
        }
      } catch (e) {
        // The store is unreachable: keep going as we are. If the lease lapses meanwhile, the
        // checkpoint fence stops this runner's next commit.
        this.logger.warn({ projection: name, err: { message: (e as Error).message } }, 'could not renew or take a projection lease');
      }
    }
    if (gained.length > 0) {
      for (const run of gained) {
        run.active = true;
        run.standby = false;
        run.failed = undefined;
        run.retryDelay = this.retryDelayMs;
      }
      this.logger.info({ projections: gained.map((r) => r.projector.name), owner: this.owner }, 'took projection leases; folding them here');
      const behind = await this.farBehind(gained).catch((e: Error) => {
        this.logger.warn({ err: { message: e.message } }, 'could not tell whether projections are far behind; folding them live');
        return [] as Running[];
      });
      const live = gained.filter((r) => !behind.includes(r));
      await this.openFeed(live).catch((e: Error) => {
        for (const run of live) this.onFailure(run, e);
      });
      if (behind.length > 0) await this.catchUpByRebuild(behind);
      for (const run of gained) await this.rebuilds.resumeHalfDone(run.projector).catch((e: Error) => this.logger.warn({ projection: run.projector.name, err: { message: e.message } }, 'could not look for a half-done rebuild'));
    }
    await this.rebuilds.pickUp([...this.running.values()].filter((r) => r.active && !r.stopped).map((r) => r.projector)).catch((e: Error) =>
      this.logger.warn({ err: { message: e.message } }, 'could not look for requested rebuilds'),
    );
  }

  /** The projections among `runs` that have never committed and lie far behind the head. */
  private async farBehind(runs: readonly Running[]): Promise<Running[]> {
    const threshold = this.options.catchUpByRebuild ?? CATCH_UP_BY_REBUILD;
    if (!Number.isFinite(threshold)) return [];
    const head = await this.options.events.headPosition();
    if (head <= threshold) return [];
    const out: Running[] = [];
    for (const run of runs) if ((await this.options.reads.getCheckpoint(run.projector.name)) === null) out.push(run);
    return out;
  }

  /**
   * Catches `runs` up by one rebuild of them all; each resumes live folding once it is switched in
   * (or at once if the rebuild fails). One already under way (a crash left it half-done) is resumed.
   */
  private async catchUpByRebuild(runs: readonly Running[]): Promise<void> {
    const names = runs.map((r) => r.projector.name);
    this.logger.info({ projections: names }, 'far behind and never committed: catching up by a rebuild');
    try {
      for (const name of names) {
        await requestRebuild(this.options.events, this.options.reads, name).catch((e: Error) => {
          if (!(e instanceof RebuildInProgressError)) throw e;
        });
      }
      this.rebuilds.startTogether(runs.map((r) => r.projector));
    } catch (e) {
      this.logger.warn({ projections: names, err: { message: (e as Error).message } }, 'could not start the catch-up rebuild; folding live');
      await this.openFeed(runs).catch((err: Error) => {
        for (const run of runs) this.onFailure(run, err);
      });
    }
  }

  /** Stops folding a projection whose lease is someone else's now; from here on its stored checkpoint is followed. */
  private async standBy(run: Running, why: string): Promise<void> {
    if (!run.active) return;
    this.logger.warn({ projection: run.projector.name, owner: this.owner, checkpoint: run.checkpoint }, `standing by: ${why}`);
    run.active = false;
    run.standby = true;
    run.generation++;
    clearTimeout(run.retryTimer);
    clearTimeout(run.commitTimer);
    clearTimeout(run.flushTimer);
    run.commitTimer = undefined;
    run.flushTimer = undefined;
    run.docs = undefined;
    run.failed = undefined;
    run.folded = run.checkpoint;
    // Not awaited when called from inside the reader's own batch: leaving waits for that batch.
    await this.leave(run);
    this.followSoon(0);
  }

  // ---- following stored checkpoints ---------------------------------------------------------

  private readonly foldedElsewhere = (name: string): boolean => {
    const run = this.running.get(name);
    return !run || !run.active;
  };

  /** Reads the stored checkpoints within `delayMs` (sooner than planned, never later). */
  private followSoon(delayMs: number): void {
    if (this.stopping || this.running.size === 0) return;
    const due = Date.now() + delayMs;
    if (this.followTimer && due >= this.followDue) return;
    clearTimeout(this.followTimer);
    this.followDue = due;
    this.followTimer = setTimeout(() => {
      this.followTimer = undefined;
      this.followDue = Infinity;
      this.following ??= this.followIfMoved()
        .catch((e: Error) => this.logger.warn({ err: { message: e.message } }, 'could not read projection checkpoints'))
        .finally(() => {
          this.following = undefined;
          this.followSoon(this.waiters.anyWaitingFor(this.foldedElsewhere) ? this.waitPollMs : this.followMs);
        });
    }, delayMs);
    this.followTimer.unref();
  }

  /** follow, unless the store tells that no other process has committed since the last look. */
  private async followIfMoved(): Promise<void> {
    if (this.options.reads.othersCommitted?.() === false) return;
    await this.follow();
  }

  /**
   * A standby takes the stored checkpoint as its own (and moves its version, so caches drop what
   * they derived from the older state) and wakes whoever waits for it. A runner folding a
   * projection whose stored checkpoint someone else moved resumes from it if it still holds the
   * lease (a rebuild switched in) and stands by if not (see `movedElsewhere`).
   */
  private async follow(): Promise<void> {
    const runs = [...this.running.values()].filter((r) => !r.stopped);
    const before = runs.map((r) => [r.persisted, r.storedGeneration] as const);
    const stored = await Promise.all(runs.map((r) => this.options.reads.getCheckpoint(r.projector.name)));
    const written = await Promise.all(runs.map((r, i) => this.writtenElsewhere(r, stored[i] ?? null)));
    let moved = false;
    runs.forEach((run, i) => {
      const position = stored[i]?.position ?? 0;
      const generation = stored[i]?.generation ?? 0;
      if (run.stopped) return;
      if (!run.active) {
        // A rebuild switched in at the same position moves only the generation.
        if (position === run.checkpoint && generation === run.storedGeneration) return;
        const ids = written[i]?.from === run.checkpoint && written[i]?.to === position ? written[i]!.ids : undefined;
        run.checkpoint = position;
        run.persisted = position;
        run.folded = position;
        run.storedGeneration = generation;
        run.steps.observed(++run.version, ids);
        moved = true;
        return;
      }
      const [persisted, storedGeneration] = before[i]!;
      const unchangedHere = run.persisted === persisted && run.storedGeneration === storedGeneration;
      if (!run.busy && unchangedHere && stored[i] && (position !== persisted || generation !== storedGeneration)) {
        this.logger.info({ projection: run.projector.name, from: persisted, to: position }, 'checkpoint moved by another process');
        void this.movedElsewhere(run, 'another process moved its checkpoint', () => this.resync(run)).catch((e: Error) => this.onFailure(run, e));
      }
    });
    if (moved) this.waiters.wake();
  }

  /**
   * The documents another process's commits wrote, from a projection's checkpoint here to the
   * stored one, for the collections whose documents its projector names from the events
   * (Projector.documentsOf): read from the log, STEP_IDS events at most. Undefined where that is not
   * known (a switch, a long way, a failed read: the caches then drop everything).
   */
  private async writtenElsewhere(run: Running, stored: Checkpoint | null): Promise<{ from: number; to: number; ids: Map<string, Set<string>> } | undefined> {
    const documentsOf = run.projector.documentsOf;
    const from = run.checkpoint;
    const to = stored?.position ?? 0;
    if (run.active || run.stopped || !documentsOf || to <= from || (stored?.generation ?? 0) !== run.storedGeneration) return undefined;
    const ids = new Map(Object.keys(documentsOf).map((c) => [c, new Set<string>()]));
    let read = 0;
    try {
      for await (const event of this.options.events.readAll({ after: from, maxCount: STEP_IDS + 1, ...(run.projector.handles ? { types: run.projector.handles } : {}) })) {
        if (event.position > to) return { from, to, ids };
        if (++read > STEP_IDS) return undefined;
        for (const [collection, idOf] of Object.entries(documentsOf)) {
          const id = idOf(event);
          if (id !== undefined) ids.get(collection)!.add(id);
        }
      }
    } catch {
      return undefined;
    }
    return { from, to, ids };
  }

  // ---- folding ------------------------------------------------------------------------------

  /**
   * Someone else moved the stored checkpoint of a projection folded here: a rebuild switched in
   * (this runner carries on from it: `resume`), or a holder that took the lease over while this
   * runner's renewals were not reaching the store (it stands by; resuming would fold beside the new holder).
   */
  private async movedElsewhere(run: Running, why: string, resume: () => Promise<void> | void): Promise<void> {
    const generation = run.generation;
    const lease = await this.options.reads.getLease(run.projector.name).catch(() => null);
    if (run.generation !== generation || run.stopped || !run.active) return;
    if (lease?.owner !== this.owner) return this.standBy(run, why);
    await resume();
  }

  /** Restarts a projection from its stored checkpoint (after a rebuild was switched in), on a reader of its own. */
  private async resync(run: Running): Promise<void> {
    if (run.stopped || !run.active) return;
    await this.openFeed([run]);
  }

  /** Takes a projection off its reader; a reader left with nobody stops. */
  private async leave(run: Running): Promise<void> {
    const feed = run.feed;
    run.feed = undefined;
    await feed?.leave(run);
  }

  /**
   * A projection whose batch failed drops what it folded since its last commit (nothing of a
   * failed batch may be committed) and retries on a reader of its own, so the others go on.
   */
  private fail(run: Running, error: Error): void {
    // Not awaited: this may run inside the reader's own handler.
    void this.leave(run);
    clearTimeout(run.commitTimer);
    clearTimeout(run.flushTimer);
    run.commitTimer = undefined;
    run.flushTimer = undefined;
    run.docs = undefined;
    run.folded = run.checkpoint;
    this.onFailure(run, error);
  }

  /**
   * Asks for a rebuild of one projection: recorded in the store, run by the holder of its lease
   * (at once when that is this runner, in its rebuild worker), outside any request's thread.
   * The live version keeps serving until the rebuilt one is switched in; progress shows in status().
   */
  async rebuild(name: string): Promise<RebuildProgress> {
    const run = this.running.get(name);
    if (!run) throw new Error(`Unknown projection: ${name}`);
    const requested = await requestRebuild(this.options.events, this.options.reads, name);
    if (run.active && !run.stopped) void this.rebuilds.pickUp([run.projector]).catch((e: Error) => this.logger.error({ projection: name, err: { message: e.message } }, 'could not start a rebuild'));
    return requested;
  }

  /**
   * A number that changes whenever the projection's documents may have changed as far as this
   * process knows (its own commits, a resync, a stored checkpoint moved by another process): lets
   * callers cache what they derive from a read model (e.g. API-key principals) and drop it
   * exactly when that read model moves. Unknown projections answer -1.
   */
  version(name: string): number {
    return this.running.get(name)?.version ?? -1;
  }

  /**
   * The ids of the projection's `collection` whose documents changed since its version was
   * `version`, or undefined when this process does not know which (see VersionSteps).
   */
  changedSince(name: string, collection: string, version: number): ReadonlySet<string> | undefined {
    const run = this.running.get(name);
    return run?.steps.changedSince(collection, version, run.version);
  }

  /** Starts a reader for `runs` from the oldest of their stored checkpoints; any reader they had is left first. */
  private async openFeed(runs: readonly Running[]): Promise<void> {
    const generations = new Map(runs.map((run) => [run, ++run.generation]));
    await Promise.all(runs.map((run) => this.leave(run)));
    const current = (run: Running) => generations.get(run) === run.generation && run.active && !run.stopped;
    const members: Running[] = [];
    for (const run of runs) {
      const checkpoint = await this.options.reads.getCheckpoint(run.projector.name);
      const stored = checkpoint?.position ?? 0;
      if (!current(run)) continue;
      run.storedGeneration = checkpoint?.generation ?? 0;
      clearTimeout(run.commitTimer);
      clearTimeout(run.flushTimer);
      run.commitTimer = undefined;
      run.flushTimer = undefined;
      run.steps.moved(++run.version);
      run.checkpoint = stored;
      run.persisted = stored;
      run.folded = stored;
      run.docs = undefined;
      run.committedAt = Date.now();
      run.persistedAt = Date.now();
      members.push(run);
    }
    // Another restart overtook this one while it read the checkpoints: it opens its own reader.
    const live = members.filter(current);
    if (live.length === 0) return;
    // A checkpoint moved by a rebuild switched in may be what someone waits for.
    this.waiters.wake();
    const feed = new Feed(live);
    for (const run of live) run.feed = feed;
    feed.open({
      events: this.options.events,
      after: Math.min(...live.map((r) => r.checkpoint)),
      batchSize: this.batchSize,
      // A member that moved on (restarted, stood by) takes nothing more from this reader.
      fold: (run, batch, more) => (run.feed === feed ? this.foldBatch(run, batch, more) : Promise.resolve()),
      // The reader itself failed (not a projector): every member retries on a reader of its own.
      failed: (run, error) => {
        if (run.feed === feed) this.fail(run, error);
      },
    });
  }

  private async foldBatch(run: Running, batch: readonly RecordedEvent[], more: boolean): Promise<void> {
    run.busy = true;
    const started = performance.now();
    try {
      await this.applyBatchNow(run, batch, more);
      this.options.onBatch?.(run.projector.name, (performance.now() - started) / 1000, batch.length);
    } catch (error) {
      this.fail(run, error as Error);
    } finally {
      run.busy = false;
    }
    if (run.folded > run.checkpoint) this.commitLater(run);
  }

  /** A catch-up window left open when the log ran out (the last batch happened to be full) still commits. */
  private commitLater(run: Running): void {
    if (run.commitTimer) return;
    run.commitTimer = setTimeout(() => {
      run.commitTimer = undefined;
      if (run.stopped || !run.active || run.folded === run.checkpoint) return;
      if (run.busy) return this.commitLater(run);
      run.busy = true;
      this.commit(run)
        .catch((e: Error) => this.fail(run, e))
        .finally(() => (run.busy = false));
    }, IDLE_COMMIT_MS);
    run.commitTimer.unref();
  }

  /**
   * Stores a checkpoint advanced by batches that changed nothing: other processes go by the
   * stored checkpoint only, and would otherwise wait for the next batch that writes.
   */
  private flushLater(run: Running): void {
    if (run.flushTimer || run.persisted >= run.checkpoint) return;
    run.flushTimer = setTimeout(() => {
      run.flushTimer = undefined;
      if (run.stopped || !run.active || run.persisted >= run.checkpoint) return;
      if (run.busy) return this.flushLater(run);
      run.busy = true;
      // Everything up to `checkpoint` is written (a commit that skipped its write had nothing to write).
      this.persist(run, [], run.checkpoint)
        .catch((e: Error) => this.fail(run, e))
        .finally(() => (run.busy = false));
    }, NOOP_FLUSH_MS);
    run.flushTimer.unref();
  }

  private async applyBatchNow(run: Running, batch: readonly RecordedEvent[], more: boolean): Promise<void> {
    const { projector } = run;
    const reads = this.options.reads;
    const after = run.folded;
    const docs = (run.docs ??= this.newDocs());
    for (const event of batch) {
      if (projector.handles === undefined || projector.handles.includes(event.type)) {
        const applied = projector.apply(event, docs);
        if (applied) await applied;
      }
      // A window ends at an event boundary once it fills what one commit may carry.
      if (windowFull(docs.pending, docs.pendingBytes, this.maxBatch)) {
        run.folded = event.position;
        await this.commit(run);
      }
    }
    const last = batch[batch.length - 1]!;
    run.folded = last.position;
    if (commitNow(more, docs.pending, Date.now() - run.committedAt)) await this.commit(run);
    run.failed = undefined;
    run.retryDelay = this.retryDelayMs;
    if (!projector.afterBatch) docs.dropChanges();
    else {
      // Snapshot writes are fenced like commits: a holder that lost its lease writes none.
      const fenced = fencedWrites(reads, projector.name, () => ({ position: run.persisted, generation: run.storedGeneration }));
      await projector
        .afterBatch({
          reads: fenced,
          last,
          after,
          generation: run.storedGeneration,
          changes: docs.takeChanges(),
          state: async (collection) => {
            // The snapshot must see every folded change: commit what waits first.
            await this.commit(run);
            return pagedDocs(reads, collection);
          },
        })
        .catch((e: Error) => this.logger.error({ projection: projector.name, err: { message: e.message } }, 'after-batch step failed'));
    }
  }

  /** Bytes are counted only for a store that bounds them (it costs a JSON encoding per write). */
  private newDocs(): BatchDocs {
    return new BatchDocs(this.options.reads, undefined, false, Number.isFinite(this.maxBatch.bytes));
  }

  /** Commits what has been folded (documents and checkpoint together) and wakes whoever waits for it. */
  private async commit(run: Running): Promise<void> {
    const docs = run.docs;
    if (!docs || run.folded === run.checkpoint) return;
    const ops = docs.ops();
    if (needsWrite(ops.length, Date.now() - run.persistedAt)) await this.persist(run, ops, run.folded);
    docs.written();
    // Catch-up reads each document from the store once while it fits; an idle service holds no more than its share.
    docs.evict(this.cacheShare);
    run.checkpoint = run.folded;
    run.committedAt = Date.now();
    this.waiters.wake();
    this.flushLater(run);
  }

  private async persist(run: Running, ops: ReturnType<BatchDocs['ops']>, position: number): Promise<void> {
    // The generation read with the checkpoint fences this commit against a rebuild switched in since.
    const expected: Checkpoint | null = run.persisted === 0 && run.storedGeneration === 0 ? null : { position: run.persisted, generation: run.storedGeneration };
    await this.options.reads.commitBatch(run.projector.name, ops, expected, { position });
    run.persisted = position;
    run.persistedAt = Date.now();
    if (ops.length > 0) run.steps.committed(++run.version, ops);
  }

  private onFailure(run: Running, error: Error): void {
    if (run.stopped || !run.active) return;
    if (error instanceof CheckpointConflictError) {
      void this.movedElsewhere(run, `another process committed (${error.message})`, () => {
        this.logger.warn({ projection: run.projector.name, checkpoint: run.checkpoint, err: { message: error.message } }, 'projection checkpoint moved elsewhere; resuming from the stored one');
        this.retryLater(run);
      });
      return;
    }
    run.failed = error;
    this.logger.error({ projection: run.projector.name, checkpoint: run.checkpoint, err: { message: error.message } }, 'projection batch failed; retrying');
    this.retryLater(run);
  }

  /** One pending retry per projection, with a delay that doubles up to 30 s until a batch succeeds. */
  private retryLater(run: Running): void {
    const delay = run.retryDelay;
    run.retryDelay = Math.min(run.retryDelay * 2, 30_000);
    clearTimeout(run.retryTimer);
    run.retryTimer = setTimeout(() => {
      run.retryTimer = undefined;
      if (!run.stopped && run.active) this.openFeed([run]).catch((e: Error) => this.onFailure(run, e));
    }, delay);
  }

  /**
   * Resolves once every named projection (default: all) has folded the event at `position`. With
   * `types`, only projections that fold one of those event types are waited for. A projection
   * folded by another process counts once its stored checkpoint has reached the position.
   */
  async waitFor(position: number, options: { timeoutMs?: number; projections?: readonly string[]; types?: readonly string[] } = {}): Promise<void> {
    const names = options.projections ?? foldingAny([...this.running.values()].map((r) => r.projector), options.types);
    await this.waiters.until(position, names, (n) => this.running.get(n)?.checkpoint ?? 0, options.timeoutMs ?? 5000);
  }

  /** Estimated bytes of the documents the projections keep in memory (see RunnerOptions.cacheBytes). */
  cachedBytes(): number {
    let bytes = 0;
    for (const run of this.running.values()) bytes += run.docs?.cachedBytes ?? 0;
    return bytes;
  }

  async status(): Promise<ProjectionStatus[]> {
    const reads = this.options.reads;
    const runs = [...this.running.values()];
    const names = runs.map((run) => run.projector.name);
    const [head, pending, rebuilds, leases] = await Promise.all([
      this.options.events.headPosition(),
      Promise.all(names.map((name) => reads.getCheckpoint(rebuildCheckpoint(name)))),
      readRebuilds(reads, names),
      Promise.all(names.map((name) => reads.getLease(name))),
    ]);
    return runs.map((run, i) => {
      const lease = leases[i];
      const rebuild = rebuilds.get(run.projector.name);
      return statusOf({ ...run, ...(rebuild ? { rebuild } : {}) }, head, pending[i] !== null, lease ? { owner: lease.owner, here: lease.owner === this.owner && run.active } : null);
    });
  }

  /** Stops every projection after the batch in progress has committed, and hands its leases over. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.leaseTimer);
    clearTimeout(this.followTimer);
    await this.ticking;
    const runs = [...this.running.values()];
    for (const run of runs) {
      run.stopped = true;
      clearTimeout(run.retryTimer);
      clearTimeout(run.commitTimer);
      clearTimeout(run.flushTimer);
    }
    await this.rebuilds.stop();
    await Promise.all(runs.map((run) => this.leave(run)));
    await Promise.all(
      runs.map(async (run) => {
        if (run.active && run.folded > run.persisted && !run.failed) {
          await this.persist(run, run.docs?.ops() ?? [], run.folded).catch((e: Error) =>
            this.logger.warn({ projection: run.projector.name, err: { message: e.message } }, 'could not store the last checkpoint; the next start re-folds a few no-op events'),
          );
        }
        if (run.active) await this.options.reads.releaseLease(run.projector.name, this.owner).catch(() => undefined);
      }),
    );
    await this.following;
  }
}
