/**
 * Limits of the Reporting API's answers, from environment variables: REPORTING_ENV_SPEC is part of
 * config.ts's ENV_SPEC and `reportingConfigOf` makes its Config's `reporting`.
 */
import { byteSize, integer } from './env.ts';

export const REPORTING_ENV_SPEC = {
  /** Bytes of serialised collection-data answers kept in memory (default 64mb; 0 keeps none). */
  SVC_REPORTING_CACHE: byteSize(64 * 1024 * 1024),
  /** Bytes of the descriptions (title, labels) of the objects live answers name, kept between versions, per collection (default 32mb). */
  SVC_REPORTING_OBJECTS_CACHE: byteSize(32 * 1024 * 1024),
  /** Replays for `at` answers running at once (each holds a copy of a collection's fold state). */
  SVC_AT_CONCURRENCY: integer(1, 64, 2),
  /** Replays for `at` answers waiting for a turn; any more are answered 503 with Retry-After. */
  SVC_AT_QUEUE: integer(0, 10_000, 16),
};

export interface ReportingConfig {
  readonly cacheBytes: number;
  readonly objectsCacheBytes: number;
  readonly atConcurrency: number;
  readonly atQueue: number;
}

export const reportingConfigOf = (v: { SVC_REPORTING_CACHE: number; SVC_REPORTING_OBJECTS_CACHE: number; SVC_AT_CONCURRENCY: number; SVC_AT_QUEUE: number }): ReportingConfig => ({
  cacheBytes: v.SVC_REPORTING_CACHE,
  objectsCacheBytes: v.SVC_REPORTING_OBJECTS_CACHE,
  atConcurrency: v.SVC_AT_CONCURRENCY,
  atQueue: v.SVC_AT_QUEUE,
});
