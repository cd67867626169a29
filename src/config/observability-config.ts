/**
 * Settings of /metrics and /readyz, from environment variables: OBSERVABILITY_ENV_SPEC is part of
 * config.ts's ENV_SPEC and `observabilityConfigOf` makes its Config's `observability`. (This module
 * does not import config.ts, so config.ts can import it without a cycle.)
 */
import { integer, optional, text } from './env.ts';

/** Lag is in positions: events on the embedded log, but log bytes on EventStoreDB (see EventStore), hence two defaults. */
export const DEFAULT_READY_MAX_LAG = { sqlite: 1_000, esdb: 1_000_000 } as const;

export const OBSERVABILITY_ENV_SPEC = {
  /** When set, GET /metrics needs `Authorization: Bearer <this>`. */
  SVC_METRICS_TOKEN: optional(text('at least 16 characters with no white space', (s) => s.length >= 16 && !/\s/.test(s))),
  /** Largest projection lag /readyz accepts; default by the event store's engine. */
  SVC_READY_MAX_LAG: optional(integer(0, Number.MAX_SAFE_INTEGER)),
  /** How long /readyz waits for each engine's answer. */
  SVC_READY_TIMEOUT_MS: integer(50, 60_000, 2_000),
};

export interface ObservabilityConfig {
  /** Unset: /metrics is open (keep it on a network only the scraper reaches). */
  readonly metricsToken: string | undefined;
  readonly readyMaxLag: number;
  readonly readyTimeoutMs: number;
}

export const observabilityConfigOf = (
  v: { SVC_METRICS_TOKEN: string | undefined; SVC_READY_MAX_LAG: number | undefined; SVC_READY_TIMEOUT_MS: number },
  eventStore: keyof typeof DEFAULT_READY_MAX_LAG,
): ObservabilityConfig => ({
  metricsToken: v.SVC_METRICS_TOKEN,
  readyMaxLag: v.SVC_READY_MAX_LAG ?? DEFAULT_READY_MAX_LAG[eventStore],
  readyTimeoutMs: v.SVC_READY_TIMEOUT_MS,
});
