import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppendResult, EventStore, ExpectedRevision, NewEvent, StreamAppend } from '../events/event-store.ts';
import type { RequestLabels } from '../http/middleware/metrics.ts';
import type { ProjectionState, ProjectionStatus } from '../projections/runner.ts';

/** What a cache counts (VersionedCache's fields). */
export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
}

/** What a failure throttle counts (FailureThrottle's `counts`). */
export interface ThrottleCounts {
  readonly counts: { readonly failures: number; readonly trips: number; readonly refusals: number };
}

const STATES: readonly ProjectionState[] = ['starting', 'catching-up', 'live', 'rebuilding', 'failed', 'stopped'];
const PHASES = ['building', 'switching', 'done', 'interrupted'] as const;
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * One service's Prometheus registry and the metrics it holds (never prom-client's global registry:
 * two services in one process, as tests run them, count apart).
 *
 * Hot paths only add to plain numbers or observe one histogram; what other parts keep anyway
 * (projection status, cache and throttle counts, appends by type) is read when /metrics is scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** Observed by the HTTP middleware: request durations by method, route template and status. */
  readonly requests: Histogram<RequestLabels>;
  private readonly batches: Histogram<'projection'>;
  private readonly batchEvents: Counter<'projection'>;
  private readonly appended = new Map<string, number>();

  constructor(role: string) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({ name: 'svc_info', help: 'Always 1; the process role as a label', labelNames: ['role'], registers }).set({ role }, 1);
    this.requests = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'Time to answer HTTP requests, by method, route template (unmatched: no route) and status',
      labelNames: ['method', 'route', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.batches = new Histogram({
      name: 'svc_projection_batch_duration_seconds',
      help: 'Time to fold (and, when due, commit) one batch of events into a projection, in this process',
      labelNames: ['projection'],
      buckets: BATCH_BUCKETS,
      registers,
    });
    this.batchEvents = new Counter({ name: 'svc_projection_batch_events_total', help: 'Events in the batches folded in this process', labelNames: ['projection'], registers });
    const appended = this.appended;
    new Counter({
      name: 'svc_events_appended_total',
      help: 'Events appended to the log by this process, by event type',
      labelNames: ['type'],
      registers,
      collect() {
        this.reset();
        for (const [type, n] of appended) this.inc({ type }, n);
      },
    });
  }

  /** The projection runner's hook (RunnerOptions.onBatch). */
  readonly onBatch = (projection: string, seconds: number, events: number): void => {
    this.batches.observe({ projection }, seconds);
    this.batchEvents.inc({ projection }, events);
  };

  /** The event store the commands append through: the same store, counting what it appends. */
  countAppends(events: EventStore): EventStore {
    return countingEventStore(events, (batch) => {
      for (const e of batch) this.appended.set(e.type, (this.appended.get(e.type) ?? 0) + 1);
    });
  }

  /**
   * Projection gauges, read from the runner's status on scrape: checkpoint, head, lag, state, lease,
   * and the last rebuild's progress. An engine that does not answer leaves them out of that scrape.
   */
  watchProjections(status: () => Promise<readonly ProjectionStatus[]>): void {
    let reading: Promise<readonly ProjectionStatus[] | undefined> | undefined;
    // Every gauge's collect runs in the same scrape: they share one status read.
    const current = () =>
      (reading ??= status()
        .catch(() => undefined)
        .finally(() => (reading = undefined)));
    const registers = [this.registry];
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, projections: readonly ProjectionStatus[]) => void) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          const projections = await current();
          this.reset();
          if (projections) fill(this, projections);
        },
      });
    const each = (value: (p: ProjectionStatus) => number) => (g: Gauge, ps: readonly ProjectionStatus[]) => {
      for (const p of ps) g.set({ projection: p.name }, value(p));
    };
    gauge('svc_projection_checkpoint', 'Position of the last event folded into the projection', ['projection'], each((p) => p.checkpoint));
    gauge('svc_projection_head', 'Position of the last event in the log when the projection was read', ['projection'], each((p) => p.head));
    gauge('svc_projection_lag', 'Head minus checkpoint (events on the embedded store, log bytes on EventStoreDB)', ['projection'], each((p) => p.lag));
    gauge('svc_projection_lease_here', '1 when this process holds the projection\'s lease and folds it', ['projection'], each((p) => (p.lease?.here ? 1 : 0)));
    gauge('svc_projection_state', '1 for the state the projection is in, 0 for the others', ['projection', 'state'], (g, ps) => {
      for (const p of ps) for (const state of STATES) g.set({ projection: p.name, state }, p.state === state ? 1 : 0);
    });
    const rebuilt = (value: (r: NonNullable<ProjectionStatus['rebuild']>) => number) => (g: Gauge, ps: readonly ProjectionStatus[]) => {
      for (const p of ps) if (p.rebuild) g.set({ projection: p.name }, value(p.rebuild));
    };
    gauge('svc_projection_rebuild_processed_events', 'Events read by the projection\'s last rebuild', ['projection'], rebuilt((r) => r.processed));
    gauge('svc_projection_rebuild_position', 'Position the projection\'s last rebuild has reached', ['projection'], rebuilt((r) => r.position));
    gauge('svc_projection_rebuild_head', 'Head of the log the projection\'s last rebuild runs to', ['projection'], rebuilt((r) => r.head));
    gauge('svc_projection_rebuild_phase', '1 for the phase of the projection\'s last rebuild (failed: it ended with an error)', ['projection', 'phase'], (g, ps) => {
      for (const p of ps) {
        if (!p.rebuild) continue;
        const phase = p.rebuild.error ? 'failed' : p.rebuild.phase;
        for (const each of [...PHASES, 'failed']) g.set({ projection: p.name, phase: each }, phase === each ? 1 : 0);
      }
    });
  }

  /** Hits and misses of the caches by name, read on scrape; the hit ratio is over the process's life (rate() the counters for a recent one). */
  watchCaches(caches: Readonly<Record<string, CacheCounts>>): void {
    const registers = [this.registry];
    const entries = Object.entries(caches);
    const counter = (name: string, help: string, value: (c: CacheCounts) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['cache'],
        registers,
        collect() {
          this.reset();
          for (const [cache, c] of entries) this.inc({ cache }, value(c));
        },
      });
    counter('svc_cache_hits_total', 'Look-ups answered from the cache', (c) => c.hits);
    counter('svc_cache_misses_total', 'Look-ups the cache could not answer (loaded from the read store)', (c) => c.misses);
    new Gauge({
      name: 'svc_cache_hit_ratio',
      help: 'Hits over look-ups since the process started (no series before the first look-up)',
      labelNames: ['cache'],
      registers,
      collect() {
        this.reset();
        for (const [cache, c] of entries) if (c.hits + c.misses > 0) this.set({ cache }, c.hits / (c.hits + c.misses));
      },
    });
  }

  /** Failed authentications, throttle trips and refusals by scope (`api-key`, `admin`), read on scrape. */
  watchThrottles(throttles: Readonly<Record<string, ThrottleCounts>>): void {
    const registers = [this.registry];
    const entries = Object.entries(throttles);
    const counter = (name: string, help: string, value: (c: ThrottleCounts['counts']) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['scope'],
        registers,
        collect() {
          this.reset();
          for (const [scope, t] of entries) this.inc({ scope }, value(t.counts));
        },
      });
    counter('svc_auth_failures_total', 'Failed authentications counted by the throttle', (c) => c.failures);
    counter('svc_auth_throttle_trips_total', 'Clients blocked: failures that reached the limit of their window (each counted by one process)', (c) => c.trips);
    counter('svc_auth_throttle_refusals_total', 'Requests refused because their client was blocked', (c) => c.refusals);
  }
}

/**
 * The same event store, telling `count` of every batch of events `append` and `appendMany` wrote
 * (after the engine accepted it). A proxy rather than a class: every other member of the port,
 * present or added later, is the store's own, getters included (the KurrentDB adapter learns
 * atomicAppendMany from the server after start-up).
 */
const countingEventStore = (inner: EventStore, count: (events: readonly NewEvent[]) => void): EventStore => {
  const append = async (stream: string, events: readonly NewEvent[], expectedRevision?: ExpectedRevision): Promise<AppendResult> => {
    const result = await inner.append(stream, events, expectedRevision);
    count(events);
    return result;
  };
  const appendMany = async (appends: readonly StreamAppend[]): Promise<AppendResult[]> => {
    const results = await inner.appendMany(appends);
    for (const a of appends) count(a.events);
    return results;
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'append') return append;
      if (prop === 'appendMany') return appendMany;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      // Methods run on the store itself (adapters keep private state), bound once each.
      let fn = bound.get(prop);
      if (fn === undefined) bound.set(prop, (fn = (value as (...args: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
};
