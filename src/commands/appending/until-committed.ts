import { WrongExpectedRevisionError } from '../../events/event-store.ts';
import { LockHolder, LockWaitTimeout, type StreamLocks } from './stream-locks.ts';

/**
 * A command could not commit within its time bound: other writers kept changing the streams it
 * writes (or kept them locked). The attempt that failed wrote nothing; the client may try again.
 */
export class ContentionTimeout extends Error {
  override readonly name = 'ContentionTimeout';
  constructor(
    readonly streams: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(`Could not commit within ${timeoutMs} ms: other writes to the same records kept conflicting`);
  }
}

/** What one attempt of a command tells, and asks of, the retry policy. */
export interface Attempt {
  /** 1 for the first, optimistic attempt. */
  readonly number: number;
  /** Call before loading a stream (await the promise when there is one): see `LockHolder.beforeLoad`. */
  beforeLoad(stream: string): Promise<void> | undefined;
  /** Call with the streams the attempt appends to, right before appending. */
  writes(streams: readonly string[]): void;
}

export interface ContentionPolicy {
  /** The process's lock table; without one, conflicts are only retried after a back-off. */
  readonly locks?: StreamLocks;
  /** From the first attempt: past this, a conflict ends in ContentionTimeout (SVC_WAIT_TIMEOUT_MS). */
  readonly timeoutMs: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

/** Full-jitter exponential back-off: a delay drawn from [0, min(cap, base * 2^n)). */
const BACKOFF_BASE_MS = 2;
const BACKOFF_CAP_MS = 250;

const sleepMs = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a command's attempt until its append lands. The first attempt is optimistic (it only waits
 * for streams another command holds locked). After a conflict it runs again on fresh state, holding
 * the locks of every stream it writes, so that within this process commands on the same streams
 * queue behind each other rather than race. A conflict while holding all of them came from outside
 * (another process, a command that does not lock): that retry waits a jittered, growing delay.
 * Bounded by time, not by a count of attempts: a conflict past `timeoutMs` (or a lock not had by
 * then) throws ContentionTimeout. Any other error ends it at once. Locks are released whatever
 * happens.
 */
export const untilCommitted = async <T>(policy: ContentionPolicy, run: (attempt: Attempt) => Promise<T>): Promise<T> => {
  const now = policy.now ?? Date.now;
  const sleep = policy.sleep ?? sleepMs;
  const random = policy.random ?? Math.random;
  const deadline = now() + policy.timeoutMs;
  const holder = policy.locks ? new LockHolder(policy.locks, deadline) : undefined;
  let backoffs = 0;
  try {
    for (let number = 1; ; number++) {
      let writes: readonly string[] = [];
      try {
        return await run({
          number,
          beforeLoad: (stream) => holder?.beforeLoad(stream),
          writes(streams) {
            writes = streams;
          },
        });
      } catch (e) {
        if (e instanceof LockWaitTimeout) throw new ContentionTimeout([e.stream], policy.timeoutMs);
        if (!(e instanceof WrongExpectedRevisionError)) throw e;
        const streams = writes.includes(e.stream) ? writes : [...writes, e.stream];
        if (now() >= deadline) throw new ContentionTimeout(streams, policy.timeoutMs);
        if (!holder || streams.every((s) => holder.holds(s))) {
          backoffs += 1;
          await sleep(Math.min(deadline - now(), random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** backoffs)));
        }
        try {
          await holder?.lockAll(streams);
        } catch (l) {
          if (l instanceof LockWaitTimeout) throw new ContentionTimeout(streams, policy.timeoutMs);
          throw l;
        }
      }
    }
  } finally {
    holder?.release();
  }
};
