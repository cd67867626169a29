import type { ParsedSnapshots } from '../projections/reporting/snapshots.ts';

/**
 * The in-memory state of one service besides its engines: caches of what requests derive from the
 * read models and the log. Made once at start-up and handed to the commands and queries that use
 * them, so two services in one process (tests, benchmarks) never share any.
 */
export interface ServiceCaches {
  /** Fold states parsed from reporting snapshots, for answers "as at" a past instant. */
  readonly parsedSnapshots: ParsedSnapshots;
}

export const createCaches = (): ServiceCaches => ({
  parsedSnapshots: new Map(),
});
