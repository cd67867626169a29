import type { Projector } from '../projector.ts';
import type { ReadStore } from '../read-store.ts';
import {
  readRebuilds,
  REBUILD_SUFFIX,
  rebuildCheckpoint,
  RebuildInProgressError,
  rebuildLease,
  rebuildUnderway,
  recordRebuildFailure,
  type RebuildProgress,
} from '../rebuild.ts';

/**
 * Runs a rebuild of `projectors` to its end and resolves with its last progress. `signal` asks it
 * to stop after the page in progress, leaving it to be resumed by the next holder. The service
 * runs it in a worker thread, so the thread that serves requests and folds live batches is never
 * blocked by it.
 */
export type RebuildLauncher = (projectors: readonly Projector[], options: { readonly owner: string; readonly signal: AbortSignal }) => Promise<RebuildProgress>;

interface Task {
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

interface Deps {
  readonly reads: ReadStore;
  readonly owner: string;
  readonly logger: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  readonly launch: RebuildLauncher;
  /** A rebuild run here was switched in. */
  readonly switched: (projection: string) => void;
  /** A rebuild run here failed (it is recorded as failed; the projection is not rebuilt). */
  readonly failed?: (projection: string) => void;
}

/**
 * The rebuilds a runner performs for the projections whose lease it holds: those requested (by
 * any process, recorded in the store), and those a crash left half-done.
 */
export class RebuildTasks {
  private readonly running = new Map<string, Task>();

  constructor(private readonly deps: Deps) {}

  /** Starts every rebuild requested of these projections that nobody runs. */
  async pickUp(projectors: readonly Projector[]): Promise<void> {
    const todo = projectors.filter((p) => !this.running.has(p.name));
    if (todo.length === 0) return;
    const records = await readRebuilds(this.deps.reads, todo.map((p) => p.name));
    for (const p of todo) {
      if (!rebuildUnderway(records.get(p.name))) continue;
      // Somebody runs it already (the CLI, or a worker of the previous holder still finishing).
      if (await this.deps.reads.getLease(rebuildLease(p.name))) continue;
      this.start(p);
    }
  }

  /**
   * When a projection is taken (at start or take-over): a rebuild left half-done is resumed, and
   * copies left behind by one that never committed anything are dropped. One the operator
   * interrupted on purpose (the CLI's Ctrl-C) is left for them to resume.
   */
  async resumeHalfDone(p: Projector): Promise<void> {
    const reads = this.deps.reads;
    if (this.running.has(p.name) || (await reads.getLease(rebuildLease(p.name)))) return;
    const record = (await readRebuilds(reads, [p.name])).get(p.name);
    if (rebuildUnderway(record)) return this.pickUp([p]);
    if (await reads.getCheckpoint(rebuildCheckpoint(p.name))) {
      // Half-done with no record of it (interrupted before progress was recorded in the store).
      if (!record) {
        this.deps.logger.info({ projection: p.name }, 'resuming a rebuild left half-done');
        this.start(p);
      }
      return;
    }
    const existing = new Set(await reads.listCollections());
    for (const spec of p.collections) {
      const copy = `${spec.name}${REBUILD_SUFFIX}`;
      if (!existing.has(copy)) continue;
      this.deps.logger.info({ projection: p.name, collection: copy }, 'dropping the copy left by a rebuild that never got going');
      await reads.dropCollection(copy);
    }
  }

  /**
   * Rebuilds these projections in one pass over the log, whether asked or not (a projection far
   * behind catches up this way: see RunnerOptions.catchUpByRebuild). Those already being rebuilt
   * here are left out.
   */
  startTogether(projectors: readonly Projector[]): void {
    const todo = projectors.filter((p) => !this.running.has(p.name));
    if (todo.length > 0) this.start(todo);
  }

  private start(projectors: Projector | readonly Projector[]): void {
    const ps = Array.isArray(projectors) ? projectors : [projectors as Projector];
    const names = ps.map((p) => p.name);
    const projection = names.join(', ');
    const controller = new AbortController();
    this.deps.logger.info({ projection }, 'rebuild started');
    const done = this.deps
      .launch(ps, { owner: this.deps.owner, signal: controller.signal })
      .then((progress) => {
        this.deps.logger.info({ projection, phase: progress.phase, processed: progress.processed }, 'rebuild ended');
        if (progress.phase === 'done') for (const name of names) this.deps.switched(name);
      })
      .catch(async (e: Error) => {
        // Another process got to it first: it records its own progress.
        if (e instanceof RebuildInProgressError) return;
        this.deps.logger.error({ projection, err: { message: e.message } }, 'rebuild failed');
        for (const name of names) await recordRebuildFailure(this.deps.reads, name, e.message).catch(() => undefined);
        for (const name of names) this.deps.failed?.(name);
      })
      .finally(() => {
        for (const name of names) this.running.delete(name);
      });
    for (const name of names) this.running.set(name, { controller, done });
  }

  /** Asks every running rebuild to stop after its page in progress (to be resumed later), and waits. */
  async stop(): Promise<void> {
    const tasks = [...new Set(this.running.values())];
    for (const t of tasks) t.controller.abort();
    await Promise.all(tasks.map((t) => t.done));
  }
}
