import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import type { Projector } from './projector.ts';
import { CheckpointConflictError, type ReadStore } from './read-store.ts';
import { rebuildCheckpoint, rebuildProjection, type RebuildProgress } from './rebuild.ts';
import { commitNow, IDLE_COMMIT_MS, keepCache, needsWrite } from './runner/commit-policy.ts';
import { Feed } from './runner/feed.ts';
import { statusOf, type ProjectionStatus } from './runner/status.ts';
import { foldingAny, Waiters } from './runner/waiters.ts';

export type { ProjectionState, ProjectionStatus } from './runner/status.ts';
export { ProjectionTimeoutError } from './runner/waiters.ts';

export class RebuildInProgressError extends Error {
  constructor(readonly projection: string) {
    super(`Projection ${projection} is already being rebuilt`);
  }
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
  feed?: Feed<Running>;
  retryTimer?: NodeJS.Timeout;
  retryDelay: number;
  busy: boolean;
  rebuild?: RebuildProgress & { error?: string };
  /** Bumped whenever this process sees the projection's documents change (a batch with writes, a resync). */
  version: number;
}

/**
 * Feeds each projector from its own checkpoint: batched catch-up, then live. Each batch's
 * document changes and the new checkpoint commit together, so a crash or a failing event never
 * leaves a half-applied batch or a checkpoint ahead of the data.
 */
export class ProjectionRunner {
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Waiters();
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
    if (runs.length) await this.openFeed(runs);
    this.watch = setInterval(() => void this.followMovedCheckpoints(), this.options.checkpointWatchMs ?? 5000);
    this.watch.unref();
  }

  /** Restarts a projection from its stored checkpoint (after a rebuild was switched in), on a reader of its own. */
  private async resync(run: Running): Promise<void> {
    if (run.stopped) return;
    await this.leave(run);
    if (!run.stopped) await this.openFeed([run]);
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
  private async openFeed(runs: readonly Running[]): Promise<void> {
    const feed = new Feed(runs);
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
    feed.open({
      events: this.options.events,
      after: Math.min(...runs.map((r) => r.checkpoint)),
      batchSize: this.batchSize,
      fold: (run, batch, more) => this.fold(run, batch, more),
      // The reader itself failed (not a projector): every member retries on a reader of its own.
      failed: (run, error) => this.fail(run, error),
    });
  }

  private async fold(run: Running, batch: readonly RecordedEvent[], more: boolean): Promise<void> {
    run.busy = true;
    try {
      await this.applyBatchNow(run, batch, more);
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
    if (commitNow(more, docs.pending, Date.now() - run.committedAt)) await this.commit(run);
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
    if (needsWrite(ops.length, Date.now() - run.persistedAt)) await this.persist(run, ops, run.folded);
    docs.written();
    if (!keepCache(docs.size)) run.docs = new BatchDocs(this.options.reads);
    run.checkpoint = run.folded;
    run.committedAt = Date.now();
    this.waiters.wake();
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
      if (!run.stopped) this.openFeed([run]).catch((e: Error) => this.onFailure(run, e));
    }, delay);
  }

  /**
   * Resolves once every named projection (default: all) has folded the event at `position`. With
   * `types`, only projections that fold one of those event types are waited for.
   */
  async waitFor(position: number, options: { timeoutMs?: number; projections?: readonly string[]; types?: readonly string[] } = {}): Promise<void> {
    const names = options.projections ?? foldingAny([...this.running.values()].map((r) => r.projector), options.types);
    await this.waiters.until(position, names, (n) => this.running.get(n)?.checkpoint ?? 0, options.timeoutMs ?? 5000);
  }

  async status(): Promise<ProjectionStatus[]> {
    const head = await this.options.events.headPosition();
    const runs = [...this.running.values()];
    const pending = await Promise.all(runs.map((run) => this.options.reads.getCheckpoint(rebuildCheckpoint(run.projector.name))));
    return runs.map((run, i) => statusOf(run, head, pending[i] !== null));
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
