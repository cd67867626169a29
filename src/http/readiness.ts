import type { EventStore } from '../events/event-store.ts';
import type { ReadStore } from '../projections/read-store.ts';
import type { ProjectionStatus } from '../projections/runner.ts';

export interface ReadinessDeps {
  readonly events: Pick<EventStore, 'headPosition'>;
  readonly reads: Pick<ReadStore, 'getCheckpoint'>;
  readonly status: () => Promise<readonly ProjectionStatus[]>;
  /** Largest lag (in log positions) a projection may have while the process counts as ready. */
  readonly maxLag: number;
  /** How long each check may take before it counts as failed. */
  readonly timeoutMs: number;
  /** Where a failed check's own message goes: the answer says only `timeout` or `error` (engine errors may name hosts). */
  readonly warn?: (fields: object, message: string) => void;
}

export type CheckOutcome = { readonly ok: true } | { readonly ok: false; readonly error: 'timeout' | 'error' | 'not checked' };

export interface ProjectionsOutcome {
  readonly ok: boolean;
  readonly error?: 'timeout' | 'error' | 'not checked';
  readonly maxLag: number;
  /** Projections that keep the process from being ready: failed, stopped, or further behind than maxLag. */
  readonly behind?: readonly { readonly name: string; readonly state: string; readonly lag: number }[];
}

export interface Readiness {
  readonly ready: boolean;
  /** Names of the checks that failed, in the order below. */
  readonly failed: readonly ('eventStore' | 'readStore' | 'projections')[];
  readonly checks: { readonly eventStore: CheckOutcome; readonly readStore: CheckOutcome; readonly projections: ProjectionsOutcome };
}

class CheckTimeout extends Error {}

const within = async <T>(promise: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CheckTimeout(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

// A name no projection has: the read store answers with one indexed look-up (and null).
const PROBE = '$readiness-probe';

/**
 * Whether this process should get traffic: both engines answer a cheap call within the timeout,
 * and every projection is folded somewhere and close enough to the head of the log that
 * read-your-writes waits stay short. A failed or stopped projection is never ready; one being
 * rebuilt is, as long as its live version keeps up (it serves until the rebuilt one is switched in).
 */
export const checkReadiness = async (deps: ReadinessDeps): Promise<Readiness> => {
  const probe = async (name: string, call: () => Promise<unknown>): Promise<CheckOutcome> => {
    try {
      await within(call(), deps.timeoutMs);
      return { ok: true };
    } catch (e) {
      deps.warn?.({ check: name, err: { message: (e as Error).message } }, 'readiness check failed');
      return { ok: false, error: e instanceof CheckTimeout ? 'timeout' : 'error' };
    }
  };
  const [eventStore, readStore] = await Promise.all([
    probe('eventStore', () => deps.events.headPosition()),
    probe('readStore', () => deps.reads.getCheckpoint(PROBE)),
  ]);
  let projections: ProjectionsOutcome;
  if (!eventStore.ok || !readStore.ok) {
    // Status reads both engines: with one of them down it says nothing more.
    projections = { ok: false, error: 'not checked', maxLag: deps.maxLag };
  } else {
    let statuses: readonly ProjectionStatus[] | undefined;
    const outcome = await probe('projections', async () => (statuses = await deps.status()));
    if (!outcome.ok || !statuses) projections = { ok: false, error: outcome.ok ? 'error' : outcome.error, maxLag: deps.maxLag };
    else {
      const behind = statuses
        .filter((p) => p.state === 'failed' || p.state === 'stopped' || p.lag > deps.maxLag)
        .map(({ name, state, lag }) => ({ name, state, lag }));
      projections = behind.length ? { ok: false, maxLag: deps.maxLag, behind } : { ok: true, maxLag: deps.maxLag };
    }
  }
  const checks = { eventStore, readStore, projections };
  const failed = (['eventStore', 'readStore', 'projections'] as const).filter((name) => !checks[name].ok);
  return { ready: failed.length === 0, failed, checks };
};
