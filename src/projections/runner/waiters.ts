import type { Projector } from '../projector.ts';

export class ProjectionTimeoutError extends Error {
  override readonly name = 'ProjectionTimeoutError';
  constructor(readonly position: number, readonly behind: readonly string[]) {
    super(`Read models did not reach position ${position} in time: ${behind.join(', ')}`);
  }
}

/**
 * Read-your-writes: a caller that appended at a position waits until the read models it will read
 * have committed it. Every commit wakes all waiters to look again; each one leaves once it is
 * satisfied or its time is up.
 */
export class Waiters {
  /** Each waiter's check, with the projections it waits for. */
  private readonly waiting = new Map<() => void, readonly string[]>();

  /**
   * `onWait`: told whenever a caller starts waiting, with the projections it waits for (a runner
   * that follows stored checkpoints looks sooner).
   */
  constructor(private readonly onWait?: (names: readonly string[]) => void) {}

  /** Callers waiting now. */
  get size(): number {
    return this.waiting.size;
  }

  /** Whether some caller waits for a projection `matches` picks. */
  anyWaitingFor(matches: (name: string) => boolean): boolean {
    for (const names of this.waiting.values()) if (names.some(matches)) return true;
    return false;
  }

  /** After every commit. */
  wake(): void {
    for (const check of this.waiting.keys()) check();
  }

  /**
   * Resolves once no projection in `names` has its checkpoint (as `checkpointOf` reports it) before
   * `position`; rejects with the ones still behind after `timeoutMs`.
   */
  async until(position: number, names: readonly string[], checkpointOf: (name: string) => number, timeoutMs: number): Promise<void> {
    const behind = () => names.filter((n) => checkpointOf(n) < position);
    if (behind().length === 0) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        this.waiting.delete(check);
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
      this.waiting.set(check, names);
      this.onWait?.(names);
    });
  }
}

/**
 * The projections worth waiting for after appending events of `types` (all, without `types`): the
 * others cannot show those events' effects anyway.
 */
export const foldingAny = (projectors: readonly Pick<Projector, 'name' | 'handles'>[], types?: readonly string[]): string[] =>
  projectors.filter((p) => !types || p.handles === undefined || types.some((t) => p.handles!.includes(t))).map((p) => p.name);
