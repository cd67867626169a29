import type { Logger } from 'pino';
import type { Config } from '../config/config.ts';
import type { HealthDeps } from '../http/routes/health.ts';
import type { HttpMetrics } from '../http/routes/metrics.ts';
import type { Engines } from './engines.ts';
import type { ServiceMetrics } from './metrics.ts';

/** What /readyz checks: both engines, and the projections' lag against the configured bound. */
export const readinessOf = (config: Config, engines: Engines, logger: Logger): HealthDeps['readiness'] => ({
  events: engines.events,
  reads: engines.reads,
  maxLag: config.observability.readyMaxLag,
  timeoutMs: config.observability.readyTimeoutMs,
  warn: (fields, message) => logger.warn(fields, message),
});

/** What the HTTP apps take of the metrics: the registry (behind the configured token) and the request histogram. */
export const httpMetricsOf = (config: Config, metrics: ServiceMetrics): HttpMetrics => ({
  registry: metrics.registry,
  requests: metrics.requests,
  token: config.observability.metricsToken,
});
