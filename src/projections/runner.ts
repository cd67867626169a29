import type { EventStore, RecordedEvent, Subscription } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import type { Projector } from './projector.ts';
import { CheckpointConflictError, type ReadStore } from './read-store.ts';
import { rebuildCheckpoint, rebuildProjection, type RebuildProgress } from './rebuild.ts';

export class RebuildInProgressError extends Error {
  constructor(readonly projection: string) {
    super(`Projection ${projection} is already being rebuilt`);
  }
}

export type ProjectionState = 'starting' | 'catching-up' | 'live' | 'rebuilding' | 'failed' | 'stopped';

export interface ProjectionStatus {
  readonly name: string;
  readonly state: ProjectionState;
  /** Position of the last event folded into the read model (0 = none). */
  readonly checkpoint: number;
  readonly head: number;
  readonly lag: number;
  readonly lastError?: string;
  /** Progress of a rebuild run by this process, if one is running or has just ended. */
  readonly rebuild?: RebuildProgress & { readonly error?: string };
}

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
  /** How often to look for checkpoints moved by another process (e.g. a rebuild switched in by the CLI). */
  readonly checkpointWatchMs?: number;
}

export class ProjectionTimeoutError extends Error {
  override readonly name = 'ProjectionTimeoutError';
  constructor(readonly position: number, readonly behind: readonly string[]) {
    super(`Read models did not reach position ${position} in time: ${behind.join(', ')}`);
  }
}

/** Longest a checkpoint advanced by no-op batches stays unstored. */
const PERSIST_IDLE_MS = 1000;
/**
 * While far behind (full batches keep coming), batches are committed together at most this often:
 * a document changed by many events of the window is written once. Live batches commit at once.
 */
const CATCH_UP_COMMIT_MS = 5000;
const CATCH_UP_PENDING_DOCS = 100_000;
/** How soon a window is committed after the log ran out in the middle of it. */
const IDLE_COMMIT_MS = 250;
/** Documents a projection keeps across batches; past this the cache starts again empty. */
const CACHED_DOCS = 250_000;

const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface Running {
  readonly projector: Projector;
  /** Position of the last event folded in (what waitFor and status go by). */
  checkpoint: number;
  /** The checkpoint as stored; behind `checkpoint` only after batches that changed nothing. */
  persisted: number;
  /** Position of the last event folded into `docs`: ahead of `checkpoint` while catch-up batches wait to commit together. */
  folded: number;
  /** Documents kept across batches (so catch-up reads each from the store once); dropped on any restart. */
  docs?: BatchDocs;
  committedAt: number;
  commitTimer?: NodeJS.Timeout;
  persistedAt: number;
  failed?: Error;
  stopped: boolean;
  /** The log reader feeding this projection (shared by all of them, unless it had to fall back to its own). */
  feed?: Feed;
  retryTimer?: NodeJS.Timeout;
  retryDelay: number;
  busy: boolean;
  rebuild?: RebuildProgress & { error?: string };
  /** Bumped whenever this process sees the projection's documents change (a batch with writes, a resync). */
  version: number;
}

/** One reading of the log, handing each batch to every member from the member's own checkpoint on. */
interface Feed {
  readonly members: Set<Running>;
  subscription?: Subscription;
  stopped: boolean;
}

/**
 * Feeds each projector from its own checkpoint: batched catch-up, then live. Each batch's
 * document changes and the new checkpoint commit together, so a crash or a failing event never
 * leaves a half-applied batch or a checkpoint ahead of the data.
 */
export class ProjectionRunner {
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Set<() => void>();
  private readonly batchSize: number;
  private readonly logger: Logger;
  private readonly retryDelayMs: number;
  private watch?: NodeJS.Timeout;

  constructor(private readonly options: RunnerOptions) {
    // Large batches make catch-up much faster (one transaction each); live batches are as small as what has arrived.
    this.batchSize = options.batchSize ?? 2000;
    this.logger = options.logger ?? silent;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    const names = new Set<string>();
    for (const p of options.projectors) {
      if (names.has(p.name)) throw new Error(`Two projectors are named ${p.name}`);
      names.add(p.name);
    }
  }

  get projectors(): readonly Projector[] {
    return this.options.projectors;
  }

  async start(): Promise<void> {
    const runs: Running[] = [];
    for (const projector of this.options.projectors) {
      for (const spec of projector.collections) await this.options.reads.ensureCollection(spec);
      const run: Running = { projector, checkpoint: 0, persisted: 0, persistedAt: 0, folded: 0, committedAt: 0, stopped: false, retryDelay: this.retryDelayMs, busy: false, version: 0 };
      this.running.set(projector.name, run);
      runs.push(run);
    }
    // One reader for all: the log is read and parsed once, however many projections there are.
    if (runs.length) await this.feed(runs);
    this.watch = setInterval(() => void this.followMovedCheckpoints(), this.options.checkpointWatchMs ?? 5000);
    this.watch.unref();
  }

  /** Restarts a projection from its stored checkpoint (after a rebuild was switched in), on a reader of its own. */
  private async resync(run: Running): Promise<void> {
    if (run.stopped) return;
    await this.leave(run);
    if (!run.stopped) await this.feed([run]);
  }

  /** Takes a projection off its reader; a reader left with nobody stops. */
  private async leave(run: Running): Promise<void> {
    const feed = this.detach(run);
    if (feed?.stopped) await feed.subscription?.stop();
  }

  private detach(run: Running): Feed | undefined {
    const feed = run.feed;
    if (!feed) return undefined;
    feed.members.delete(run);
    run.feed = undefined;
    if (feed.members.size === 0) feed.stopped = true;
    return feed;
  }

  /**
   * A projection whose batch failed drops what it folded since its last commit (nothing of a
   * failed batch may be committed) and retries on a reader of its own, so the others go on.
   */
  private fail(run: Running, error: Error): void {
    const feed = this.detach(run);
    // Not awaited: this may run inside the reader's own handler.
    if (feed?.stopped) void feed.subscription?.stop();
    clearTimeout(run.commitTimer);
    run.commitTimer = undefined;
    run.docs = undefined;
    run.folded = run.checkpoint;
    this.onFailure(run, error);
  }

  private async followMovedCheckpoints(): Promise<void> {
    for (const run of this.running.values()) {
      if (run.busy || run.stopped) continue;
      const mine = run.persisted;
      const stored = (await this.options.reads.getCheckpoint(run.projector.name).catch(() => undefined))?.position;
      if (stored !== undefined && stored !== mine && run.persisted === mine && !run.busy) {
        this.logger.info({ projection: run.projector.name, from: mine, to: stored }, 'checkpoint moved by another process; resuming from it');
        await this.resync(run).catch((e: Error) => this.onFailure(run, e));
      }
    }
  }

  /**
   * Starts a blue/green rebuild of one projection in the background; progress shows in status().
   * The live version keeps serving until the rebuilt one is switched in.
   */
  rebuild(name: string): RebuildProgress {
    const run = this.running.get(name);
    if (!run) throw new Error(`Unknown projection: ${name}`);
    if (run.rebuild && (run.rebuild.phase === 'building' || run.rebuild.phase === 'switching') && !run.rebuild.error) {
      throw new RebuildInProgressError(name);
    }
    const initial: RebuildProgress = { projection: name, processed: 0, position: 0, head: 0, eventsPerSecond: 0, etaSeconds: null, phase: 'building' };
    run.rebuild = initial;
    rebuildProjection({
      events: this.options.events,
      reads: this.options.reads,
      projector: run.projector,
      onProgress: (p) => (run.rebuild = p),
    })
      .then(() => this.resync(run))
      .catch((e: Error) => {
        run.rebuild = { ...(run.rebuild ?? initial), error: e.message };
        this.logger.error({ projection: name, err: { message: e.message } }, 'rebuild failed');
      });
    return initial;
  }

  /**
   * A number that changes whenever the projection's documents may have changed in this process:
   * lets callers cache what they derive from a read model (e.g. API-key principals) and drop it
   * exactly when that read model moves. Unknown projections answer -1.
   */
  version(name: string): number {
    return this.running.get(name)?.version ?? -1;
  }

  /** Starts a reader for `runs` from the oldest of their stored checkpoints. */
  private async feed(runs: readonly Running[]): Promise<void> {
    const feed: Feed = { members: new Set(runs), stopped: false };
    for (const run of runs) {
      run.version++;
      run.checkpoint = (await this.options.reads.getCheckpoint(run.projector.name))?.position ?? 0;
      run.persisted = run.checkpoint;
      run.folded = run.checkpoint;
      run.docs = undefined;
      run.committedAt = Date.now();
      run.persistedAt = Date.now();
      run.feed = feed;
    }
    const after = Math.min(...runs.map((r) => r.checkpoint));
    const subscription = this.options.events.subscribe({ after, batchSize: this.batchSize }, (batch) => this.deliver(feed, batch));
    feed.subscription = subscription;
    subscription.done.then(
      () => undefined,
      // The reader itself failed (not a projector): every member retries on a reader of its own.
      (error: Error) => {
        for (const run of [...feed.members]) this.fail(run, error);
      },
    );
  }

  private async deliver(feed: Feed, batch: readonly RecordedEvent[]): Promise<void> {
    for (const run of [...feed.members]) {
      if (feed.stopped || run.stopped) continue;
      const from = batch.findIndex((e) => e.position > run.folded);
      if (from < 0) continue;
      run.busy = true;
      try {
        await this.applyBatchNow(run, from === 0 ? batch : batch.slice(from), batch.length >= this.batchSize);
      } catch (error) {
        this.fail(run, error as Error);
      } finally {
        run.busy = false;
      }
      if (run.folded > run.checkpoint) this.commitLater(run);
    }
  }

  /** A catch-up window left open when the log ran out (the last batch happened to be full) still commits. */
  private commitLater(run: Running): void {
    if (run.commitTimer) return;
    run.commitTimer = setTimeout(() => {
      run.commitTimer = undefined;
      if (run.stopped || run.folded === run.checkpoint) return;
      if (run.busy) return this.commitLater(run);
      run.busy = true;
      this.commit(run)
        .catch((e: Error) => this.fail(run, e))
        .finally(() => (run.busy = false));
    }, IDLE_COMMIT_MS);
    run.commitTimer.unref();
  }

  private async applyBatchNow(run: Running, batch: readonly RecordedEvent[], more: boolean): Promise<void> {
    const { projector } = run;
    const reads = this.options.reads;
    const docs = (run.docs ??= new BatchDocs(reads));
    for (const event of batch) {
      if (projector.handles === undefined || projector.handles.includes(event.type)) await projector.apply(event, docs);
    }
    const last = batch[batch.length - 1]!;
    run.folded = last.position;
    if (!more || docs.pending > CATCH_UP_PENDING_DOCS || Date.now() - run.committedAt > CATCH_UP_COMMIT_MS) await this.commit(run);
    run.failed = undefined;
    run.retryDelay = this.retryDelayMs;
    if (projector.afterBatch) {
      await projector
        .afterBatch({
          reads,
          last,
          changes: docs.takeChanges(),
          state: async (collection) => {
            // The snapshot must see every folded change: commit what waits first.
            await this.commit(run);
            return reads.find(collection);
          },
        })
        .catch((e: Error) => this.logger.error({ projection: projector.name, err: { message: e.message } }, 'after-batch step failed'));
    }
  }

  /** Commits what has been folded (documents and checkpoint together) and wakes whoever waits for it. */
  private async commit(run: Running): Promise<void> {
    const docs = run.docs;
    if (!docs || run.folded === run.checkpoint) return;
    const ops = docs.ops();
    // A batch that changes nothing need not cost a transaction: re-folding it after a crash is harmless.
    if (ops.length > 0 || Date.now() - run.persistedAt > PERSIST_IDLE_MS) await this.persist(run, ops, run.folded);
    docs.written();
    if (docs.size > CACHED_DOCS) run.docs = new BatchDocs(this.options.reads);
    run.checkpoint = run.folded;
    run.committedAt = Date.now();
    for (const wake of this.waiters) wake();
  }

  private async persist(run: Running, ops: ReturnType<BatchDocs['ops']>, position: number): Promise<void> {
    const expected = run.persisted === 0 ? null : { position: run.persisted };
    await this.options.reads.commitBatch(run.projector.name, ops, expected, { position });
    run.persisted = position;
    run.persistedAt = Date.now();
    if (ops.length > 0) run.version++;
  }

  private onFailure(run: Running, error: Error): void {
    if (run.stopped) return;
    const conflict = error instanceof CheckpointConflictError;
    if (!conflict) run.failed = error;
    (conflict ? this.logger.warn : this.logger.error).call(
      this.logger,
      { projection: run.projector.name, checkpoint: run.checkpoint, err: { message: error.message } },
      conflict ? 'projection checkpoint moved elsewhere; resuming from the stored one' : 'projection batch failed; retrying',
    );
    const delay = conflict ? 0 : run.retryDelay;
    run.retryDelay = Math.min(run.retryDelay * 2, 30_000);
    run.retryTimer = setTimeout(() => {
      if (!run.stopped) this.feed([run]).catch((e: Error) => this.onFailure(run, e));
    }, delay);
  }

  /** Resolves once every named projection (default: all) has folded the event at `position`. */
  /**
   * With `types`, only projections that fold one of those event types are waited for: the others
   * cannot show the command's effects anyway.
   */
  async waitFor(position: number, options: { timeoutMs?: number; projections?: readonly string[]; types?: readonly string[] } = {}): Promise<void> {
    const { types } = options;
    const names =
      options.projections ??
      [...this.running.values()]
        .filter((r) => !types || r.projector.handles === undefined || types.some((t) => r.projector.handles!.includes(t)))
        .map((r) => r.projector.name);
    const behind = () => names.filter((n) => (this.running.get(n)?.checkpoint ?? 0) < position);
    if (behind().length === 0) return;
    const timeoutMs = options.timeoutMs ?? 5000;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        this.waiters.delete(check);
        clearTimeout(timer);
      };
      const check = () => {
        if (behind().length === 0) {
          done();
          resolve();
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new ProjectionTimeoutError(position, behind()));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  async status(): Promise<ProjectionStatus[]> {
    const head = await this.options.events.headPosition();
    const runs = [...this.running.values()];
    // A rebuild checkpoint means a rebuild is under way (here or in another process) or was interrupted.
    const pending = await Promise.all(runs.map((run) => this.options.reads.getCheckpoint(rebuildCheckpoint(run.projector.name))));
    return runs.map((run, i) => {
      const lag = Math.max(0, head - run.checkpoint);
      const building = (run.rebuild && !run.rebuild.error && run.rebuild.phase !== 'done') || pending[i] !== null;
      const state: ProjectionState = run.stopped
        ? 'stopped'
        : run.failed
          ? 'failed'
          : building
            ? 'rebuilding'
            : !run.feed
              ? 'starting'
              : lag === 0
                ? 'live'
                : 'catching-up';
      return {
        name: run.projector.name,
        state,
        checkpoint: run.checkpoint,
        head,
        lag,
        ...(run.failed ? { lastError: run.failed.message } : {}),
        ...(run.rebuild ? { rebuild: run.rebuild } : {}),
      };
    });
  }

  /** Stops every projection after the batch in progress has committed. */
  async stop(): Promise<void> {
    clearInterval(this.watch);
    const runs = [...this.running.values()];
    for (const run of runs) {
      run.stopped = true;
      clearTimeout(run.retryTimer);
      clearTimeout(run.commitTimer);
    }
    await Promise.all(runs.map((run) => this.leave(run)));
    await Promise.all(
      runs.map(async (run) => {
        if (run.folded > run.persisted && !run.failed) {
          await this.persist(run, run.docs?.ops() ?? [], run.folded).catch((e: Error) =>
            this.logger.warn({ projection: run.projector.name, err: { message: e.message } }, 'could not store the last checkpoint; the next start re-folds a few no-op events'),
          );
        }
      }),
    );
  }
}
