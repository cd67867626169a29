import { createHash } from 'node:crypto';
import { WrongExpectedRevisionError } from '../events/event-store.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { toNewEvents, type DomainEvent } from './appending/run-command.ts';

export interface StoredResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** How long a started request holds its key unless renewed (SVC_IDEMPOTENCY_LEASE_MS). */
export const DEFAULT_IDEMPOTENCY_LEASE_MS = 30_000;

/** The stream that holds a key's slot. */
export const idempotencyStream = (scope: string, key: string) => `idempotency-${createHash('sha256').update(`${scope}\u0000${key}`).digest('hex').slice(0, 40)}`;

type Entry = { started?: string; leaseUntil?: number; completed?: StoredResponse; revision: number };
type SlotEvent = { type: string; data: { bodyHash: string; leaseUntil?: string } & StoredResponse };

const read = async (deps: CommandDeps, stream: string, leaseMs: number): Promise<Entry> => {
  const entry: Entry = { revision: -1 };
  for await (const e of deps.events.readStream(stream)) {
    entry.revision = e.revision;
    const event = deps.decode<SlotEvent>(e);
    if (event.type === 'IdempotentRequestStarted') {
      entry.started = event.data.bodyHash;
      // Slots started before leases existed: held for one lease from when they started.
      entry.leaseUntil = event.data.leaseUntil ? Date.parse(event.data.leaseUntil) : e.recordedAt.getTime() + leaseMs;
    }
    if (event.type === 'IdempotentRequestRenewed' && event.data.leaseUntil) entry.leaseUntil = Date.parse(event.data.leaseUntil);
    if (event.type === 'IdempotentRequestReleased') {
      delete entry.started;
      delete entry.leaseUntil;
    }
    if (event.type === 'IdempotentRequestCompleted') entry.completed = { status: event.data.status, contentType: event.data.contentType, body: event.data.body };
  }
  return entry;
};

const reused = () => new DomainError('invalid', 'svc:api:idempotency-key-reused', 'This Idempotency-Key was already used for a request with a different body');
const inProgress = () => new DomainError('conflict', 'svc:api:idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later');

/** What a key's slot says to a request: replay the stored answer, refuse, or run (from scratch or taking over a lapsed lease). */
const decide = (entry: Entry, bodyHash: string, now: number): { replay: StoredResponse } | { run: 'fresh' | 'takeover' } => {
  if (entry.started === undefined) return { run: 'fresh' };
  if (entry.started !== bodyHash) throw reused();
  if (entry.completed) return { replay: entry.completed };
  if ((entry.leaseUntil ?? 0) > now) throw inProgress();
  return { run: 'takeover' };
};

/**
 * Keeps a running request's lease: renews it every third of the lease, with the slot's revision
 * expected, so a process that is alive never loses its key to a retry however long the request
 * runs. A renewal refused because another process took over stops renewing (that process now runs
 * the request; what this one writes at the end is refused the same way).
 */
class Lease {
  private timer: NodeJS.Timeout;
  private pending: Promise<void> = Promise.resolve();
  lost = false;

  constructor(
    private readonly deps: CommandDeps,
    private readonly metadata: EventMetadata,
    private readonly stream: string,
    public revision: number,
    leaseMs: number,
  ) {
    this.timer = setInterval(() => {
      this.pending = this.pending.then(() => this.renew(leaseMs));
    }, Math.max(1, Math.floor(leaseMs / 3)));
    this.timer.unref();
  }

  private async renew(leaseMs: number): Promise<void> {
    if (this.lost) return;
    const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
    try {
      this.revision = (await this.deps.events.append(this.stream, toNewEvents([{ type: 'IdempotentRequestRenewed', data: { leaseUntil } }], this.metadata), this.revision)).revision;
    } catch (e) {
      if (e instanceof WrongExpectedRevisionError) this.lost = true;
      else this.deps.logger.warn({ err: e, stream: this.stream }, 'idempotency lease not renewed; trying again');
    }
  }

  /** Stops renewing; resolves once a renewal under way has been written. */
  async end(): Promise<void> {
    clearInterval(this.timer);
    await this.pending;
  }
}

/**
 * Runs `run` at most once per (scope, key) to a stored answer: the first request reserves the key
 * in the event log with a lease, a retry gets the stored answer. A key reused with another body is
 * refused; a retry while the first request runs gets 409 (in progress).
 *
 * When the process running a request dies, its lease lapses (`leaseMs` after its last renewal) and
 * the next retry takes the key over: it appends a new start with the slot's revision expected (of
 * two retries racing, one wins; the other is told "in progress"), waits until the read models have
 * caught up with everything in the log (what the dead run committed included), and runs the request
 * again on that state. Records the dead run already committed are found and changed to what they
 * already hold: nothing is applied twice where the control file finds its records (keys, refs,
 * dependents, users). A control file that creates a new object for every record makes one per run,
 * as a client's plain repeat of the push would.
 *
 * Errors and server-side answers (5xx: busy, retry later) release the key instead of being stored,
 * so the client's retry runs the request again rather than replaying a failure.
 */
export const onceByKey = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  scope: string,
  key: string,
  body: Buffer,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed?: true }> => {
  const leaseMs = deps.idempotencyLeaseMs ?? DEFAULT_IDEMPOTENCY_LEASE_MS;
  const stream = idempotencyStream(scope, key);
  const bodyHash = createHash('sha256').update(body).digest('hex');
  let entry = await read(deps, stream, leaseMs);
  let revision: number;
  let takeover: boolean;
  for (;;) {
    const decision = decide(entry, bodyHash, Date.now());
    if ('replay' in decision) return { ...decision.replay, replayed: true };
    takeover = decision.run === 'takeover';
    const leaseUntil = new Date(Date.now() + leaseMs).toISOString();
    try {
      const started = toNewEvents([{ type: 'IdempotentRequestStarted', data: { bodyHash, leaseUntil } }], metadata);
      revision = (await deps.events.append(stream, started, entry.revision < 0 ? 'no_stream' : entry.revision)).revision;
      break;
    } catch (e) {
      if (!(e instanceof WrongExpectedRevisionError)) throw e;
      // Another request started, finished or took over meanwhile: decide again on what it wrote.
      entry = await read(deps, stream, leaseMs);
    }
  }
  const lease = new Lease(deps, metadata, stream, revision, leaseMs);
  let response: StoredResponse;
  try {
    if (takeover) await waitUntilVisible(deps, await deps.events.headPosition());
    response = await run();
  } catch (e) {
    await lease.end();
    // Nothing was answered: free the key so the client's retry runs the request again.
    await settle(deps, stream, lease, { type: 'IdempotentRequestReleased', data: {} }, metadata);
    throw e;
  }
  await lease.end();
  const retryable = response.status >= 500;
  await settle(deps, stream, lease, retryable ? { type: 'IdempotentRequestReleased', data: {} } : { type: 'IdempotentRequestCompleted', data: response }, metadata);
  return response;
};

/**
 * Writes the end of a run. If the lease was lost (another process took the key over after this
 * one stalled past it), the write is refused: this client still gets its answer, and the key
 * answers what the other run stores.
 */
const settle = async (deps: CommandDeps, stream: string, lease: Lease, event: DomainEvent, metadata: EventMetadata): Promise<void> => {
  try {
    await deps.events.append(stream, toNewEvents([event], metadata), lease.revision);
  } catch (e) {
    if (e instanceof WrongExpectedRevisionError) {
      deps.logger.warn({ stream }, 'idempotency key was taken over by another process while this request ran; its answer is kept');
      return;
    }
    if (event.type === 'IdempotentRequestReleased') {
      // The key stays reserved until its lease lapses; the request's own error matters more.
      deps.logger.warn({ err: e, stream }, 'idempotency key not released; a retry runs once its lease lapses');
      return;
    }
    throw e;
  }
};
