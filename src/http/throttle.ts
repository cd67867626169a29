/**
 * Counts failed authentications per client address in fixed windows, shared by every process on
 * the same read store: past the limit the client is refused until its window ends, whatever it
 * sends, on every process.
 *
 * Counts live in the read store (collection `auth_failures`, one document per scope, window and
 * client, added to atomically). Windows are aligned to multiples of their length since the epoch,
 * so every process names the same document without asking; a burst across a window boundary may
 * therefore get up to twice the limit before it is blocked.
 *
 * The hot path (a request with good credentials) never waits for the store: each process keeps
 * the set of blocked clients in memory, learns of a block at once when one of its own failures
 * reaches the limit (the increment returns the count over all processes), and re-reads the blocks
 * made by other processes in the background at most every `refreshMs`. So a client blocked on one
 * process is blocked on another at once if it fails there, and within `refreshMs` (plus one
 * request) even with good credentials.
 */
import type { CollectionSpec, Doc, ReadStore } from '../projections/read-store.ts';

export const AUTH_FAILURES = 'auth_failures';
const SPEC: CollectionSpec = { name: AUTH_FAILURES, indexes: ['scope', 'failures', 'windowEnd'] };

interface FailureDoc extends Doc {
  readonly scope: string;
  readonly client: string;
  readonly windowEnd: number;
  readonly failures: number;
}

export interface ThrottleOptions {
  /** Which secret is being guessed (`api-key`, `admin`): each scope counts on its own. */
  readonly scope: string;
  /** Failures allowed in a window (default 10). */
  readonly limit?: number;
  readonly windowMs?: number;
  /** Longest another process's block goes unseen by a client with good credentials (default 1 s). */
  readonly refreshMs?: number;
  readonly clock?: () => number;
}

export class FailureThrottle {
  readonly limit: number;
  readonly windowMs: number;
  private readonly scope: string;
  private readonly refreshMs: number;
  private readonly clock: () => number;
  /** Blocked clients and the end of their window: the front cache every request reads. */
  private blocks = new Map<string, number>();
  /** Counts kept here only while the store cannot be written, so guessing is still slowed. */
  private readonly fallback = new Map<string, number>();
  private refreshedAt = -Infinity;
  private sweptAt = -Infinity;
  private refreshing: Promise<void> | undefined;
  private ready: Promise<void> | undefined;
  /**
   * For the service's metrics (plain numbers, read on scrape): failures counted, trips (the failure
   * that reached the limit; the store's count is atomic, so across processes each block is counted
   * by exactly one of them) and requests refused while blocked.
   */
  readonly counts = { failures: 0, trips: 0, refusals: 0 };

  constructor(private readonly reads: ReadStore, options: ThrottleOptions) {
    this.scope = options.scope;
    this.limit = options.limit ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.refreshMs = options.refreshMs ?? 1000;
    this.clock = options.clock ?? Date.now;
  }

  /** Milliseconds until `client` may try again; 0 when it is not blocked. Never waits for the store. */
  blockedFor(client: string): number {
    const now = this.clock();
    this.refreshInBackground(now);
    const until = this.blocks.get(client);
    if (until === undefined) return 0;
    if (until > now) {
      this.counts.refusals++;
      return until - now;
    }
    this.blocks.delete(client);
    return 0;
  }

  /**
   * Counts a failure of `client`; resolves to the milliseconds it is now blocked for (0: not
   * blocked). `blockedBefore` when the client was already past the limit (other processes'
   * failures this one had not seen yet): answer as if it had been refused before trying.
   */
  async fail(client: string): Promise<{ blockedMs: number; blockedBefore: boolean }> {
    const now = this.clock();
    const windowEnd = (Math.floor(now / this.windowMs) + 1) * this.windowMs;
    const id = `${this.scope}|${windowEnd}|${client}`;
    this.counts.failures++;
    let failures: number;
    try {
      await this.collection();
      const doc = (await this.reads.increment(AUTH_FAILURES, id, 'failures', 1, { scope: this.scope, client, windowEnd })) as FailureDoc;
      failures = doc.failures;
    } catch {
      if (this.fallback.size > 10_000) this.fallback.clear();
      failures = (this.fallback.get(id) ?? 0) + 1;
      this.fallback.set(id, failures);
    }
    if (failures < this.limit) return { blockedMs: 0, blockedBefore: false };
    if (failures === this.limit) this.counts.trips++;
    else this.counts.refusals++;
    this.blocks.set(client, windowEnd);
    return { blockedMs: windowEnd - now, blockedBefore: failures > this.limit };
  }

  private collection(): Promise<void> {
    return (this.ready ??= this.reads.ensureCollection(SPEC).catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    }));
  }

  private refreshInBackground(now: number): void {
    if (this.refreshing || now - this.refreshedAt < this.refreshMs) return;
    this.refreshedAt = now;
    // A failed refresh keeps the current view; the next one is due after refreshMs.
    this.refreshing = this.refresh(now)
      .catch(() => undefined)
      .finally(() => (this.refreshing = undefined));
  }

  private async refresh(now: number): Promise<void> {
    await this.collection();
    const blocked = await this.reads.find<FailureDoc>(AUTH_FAILURES, {
      where: { scope: this.scope, failures: { $gte: this.limit }, windowEnd: { $gt: now } },
      limit: 100_000,
    });
    const next = new Map<string, number>();
    for (const [client, until] of this.blocks) if (until > now) next.set(client, until);
    for (const d of blocked) next.set(d.client, Math.max(d.windowEnd, next.get(d.client) ?? 0));
    this.blocks = next;
    for (const [id, _] of this.fallback) if (Number(id.split('|')[1]) <= now) this.fallback.delete(id);
    if (now - this.sweptAt >= this.windowMs) {
      this.sweptAt = now;
      // Past windows count for nothing; any process may remove them (removing twice is harmless).
      const old = await this.reads.find<FailureDoc>(AUTH_FAILURES, { where: { windowEnd: { $lte: now } }, limit: 1000 });
      if (old.length) await this.reads.bulkWrite(old.map((d) => ({ kind: 'delete' as const, collection: AUTH_FAILURES, id: d.id })));
    }
  }
}
