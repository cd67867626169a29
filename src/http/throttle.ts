/**
 * Counts failed authentications per client in a fixed window; past the limit the client is refused
 * until its window ends, whatever it sends.
 */
export class FailureThrottle {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly limit = 10,
    private readonly windowMs = 60_000,
    private readonly clock: () => number = Date.now,
  ) {}

  private window(client: string) {
    const now = this.clock();
    const w = this.windows.get(client);
    if (w && now - w.start < this.windowMs) return w;
    if (this.windows.size > 10_000) this.prune(now);
    const fresh = { start: now, failures: 0 };
    this.windows.set(client, fresh);
    return fresh;
  }

  private prune(now: number) {
    for (const [client, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(client);
  }

  blocked(client: string): boolean {
    return this.window(client).failures >= this.limit;
  }

  fail(client: string): void {
    this.window(client).failures += 1;
  }
}
