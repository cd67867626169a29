import type { EventStore, RecordedEvent, Subscription } from '../events/event-store.ts';
import { BatchDocs } from './batch-docs.ts';
import type { Projector } from './projector.ts';
import { CheckpointConflictError, type ReadStore } from './read-store.ts';

export type ProjectionState = 'starting' | 'catching-up' | 'live' | 'failed' | 'stopped';

export interface ProjectionStatus {
  readonly name: string;
  readonly state: ProjectionState;
  /** Position of the last event folded into the read model (0 = none). */
  readonly checkpoint: number;
  readonly head: number;
  readonly lag: number;
  readonly lastError?: string;
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
}

export class ProjectionTimeoutError extends Error {
  override readonly name = 'ProjectionTimeoutError';
  constructor(readonly position: number, readonly behind: readonly string[]) {
    super(`Read models did not reach position ${position} in time: ${behind.join(', ')}`);
  }
}

const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface Running {
  readonly projector: Projector;
  checkpoint: number;
  failed?: Error;
  stopped: boolean;
  subscription?: Subscription;
  retryTimer?: NodeJS.Timeout;
  retryDelay: number;
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

  constructor(private readonly options: RunnerOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.logger = options.logger ?? silent;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    const names = new Set<string>();
    for (const p of options.projectors) {
      if (names.has(p.name)) throw new Error(`Two projectors are named ${p.name}`);
      names.add(p.name);
    }
  }

  async start(): Promise<void> {
    for (const projector of this.options.projectors) {
      for (const spec of projector.collections) await this.options.reads.ensureCollection(spec);
      const run: Running = { projector, checkpoint: 0, stopped: false, retryDelay: this.retryDelayMs };
      this.running.set(projector.name, run);
      await this.subscribe(run);
    }
  }

  private async subscribe(run: Running): Promise<void> {
    run.checkpoint = (await this.options.reads.getCheckpoint(run.projector.name))?.position ?? 0;
    const subscription = this.options.events.subscribe({ after: run.checkpoint, batchSize: this.batchSize }, (batch) =>
      this.applyBatch(run, batch),
    );
    run.subscription = subscription;
    subscription.done.then(
      () => undefined,
      (error: Error) => this.onFailure(run, error),
    );
  }

  private async applyBatch(run: Running, batch: readonly RecordedEvent[]): Promise<void> {
    const { projector } = run;
    const docs = new BatchDocs(this.options.reads);
    for (const event of batch) {
      if (projector.handles === undefined || projector.handles.includes(event.type)) await projector.apply(event, docs);
    }
    const last = batch[batch.length - 1]!.position;
    const expected = run.checkpoint === 0 ? null : { position: run.checkpoint };
    await this.options.reads.commitBatch(projector.name, docs.ops(), expected, { position: last });
    run.checkpoint = last;
    run.failed = undefined;
    run.retryDelay = this.retryDelayMs;
    for (const wake of this.waiters) wake();
    if (projector.afterCommit) {
      await projector.afterCommit(this.options.reads, batch[batch.length - 1]!).catch((e: Error) =>
        this.logger.error({ projection: projector.name, err: { message: e.message } }, 'after-commit step failed'),
      );
    }
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
      if (!run.stopped) this.subscribe(run).catch((e: Error) => this.onFailure(run, e));
    }, delay);
  }

  /** Resolves once every named projection (default: all) has folded the event at `position`. */
  async waitFor(position: number, options: { timeoutMs?: number; projections?: readonly string[] } = {}): Promise<void> {
    const names = options.projections ?? [...this.running.keys()];
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
    return [...this.running.values()].map((run) => {
      const lag = Math.max(0, head - run.checkpoint);
      const state: ProjectionState = run.stopped ? 'stopped' : run.failed ? 'failed' : !run.subscription ? 'starting' : lag === 0 ? 'live' : 'catching-up';
      return {
        name: run.projector.name,
        state,
        checkpoint: run.checkpoint,
        head,
        lag,
        ...(run.failed ? { lastError: run.failed.message } : {}),
      };
    });
  }

  /** Stops every projection after the batch in progress has committed. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.running.values()].map(async (run) => {
        run.stopped = true;
        clearTimeout(run.retryTimer);
        await run.subscription?.stop();
      }),
    );
  }
}
