import { createStoreHelpers } from '../commands/appending/stream-states.ts';
import { createPushCaches, type PushCaches } from '../commands/push-data/push-data.ts';
import type { EventDecoder } from '../events/decode.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ParsedSnapshots } from '../projections/reporting/snapshots.ts';
import { ParsedSnapshotCache } from '../projections/reporting/parsed-snapshots.ts';
import type { VersionedProjections } from '../projections/versioned-cache.ts';
import type { CacheCounts } from './metrics.ts';
import { createObjectQueryCaches, type ObjectQueryCaches } from '../queries/object-api.ts';
import { PrincipalCache } from '../http/middleware/api-key-auth.ts';
import { SessionStore } from '../http/admin-ui/sessions.ts';
import { FailureThrottle } from '../http/throttle.ts';
import type { ReadStore } from '../projections/read-store.ts';

/**
 * The in-memory state of one service besides its engines: caches of what requests derive from the
 * read models and the log, the command side's group commit and kept stream states; and the handles
 * of what is shared with other processes through the read store (admin sessions, the failure
 * throttles' counts, with their in-memory front caches). Made once at start-up and handed to the
 * commands, queries and routers that use them, so two services in one process (tests, benchmarks)
 * share nothing but what their store shares.
 */
export interface ServiceCaches {
  /** REST API definitions, profile refs and folded stream states of push-data requests (over the event store's group commit). */
  readonly push: PushCaches;
  /** Fold states parsed from reporting snapshots, for answers "as at" a past instant. */
  readonly parsedSnapshots: ParsedSnapshots;
  /** Object documents, link targets, their refs and slugs of Object API answers. */
  readonly objects: ObjectQueryCaches;
  /** What API keys resolve to (user, groups, access). */
  readonly principals: PrincipalCache;
  /** Sessions of the admin interface (signed in with the admin token), kept in the read store. */
  readonly sessions: SessionStore;
  /** Failed authentications per client address, counted in the read store with a front cache here. */
  readonly throttles: AuthThrottles;
}

export interface AuthThrottles {
  /** API keys (Object, File, Reporting and push-data APIs). */
  readonly apiKeys: FailureThrottle;
  /** The admin token: the sign-in form and the admin API's Bearer tokens count together. */
  readonly admin: FailureThrottle;
}

export interface CachedEngines {
  readonly events: EventStore;
  /**
   * The projection runner: versioned caches are dropped whenever the read model they derive from
   * moves, by this process's commits or by checkpoints other processes store (which it polls).
   */
  readonly runner: VersionedProjections;
  readonly decode: EventDecoder;
  /** Where the throttles' counts and the admin sessions are shared with other processes. */
  readonly reads: ReadStore;
  /** Bytes of parsed fold states (as JSON, estimated) kept for `at` answers. */
  readonly snapshotCacheBytes?: number;
  /** Bytes of objects and link targets kept for Object API answers (estimated). */
  readonly objectCacheBytes?: number;
  /** Bytes of stream states push-data and object commands keep between commands (estimated). */
  readonly commandCacheBytes?: number;
  readonly clock?: () => number;
}

/** The versioned caches by the name their hit and miss counts carry in the service's metrics. */
export const countedCaches = (caches: ServiceCaches): Record<string, CacheCounts> => ({
  'rest-apis': caches.push.apis,
  profiles: caches.push.profiles,
  'object-docs': caches.objects.docs,
  'link-targets': caches.objects.linkTargets,
  'api-key-principals': caches.principals,
});

/** What SVC_SNAPSHOT_CACHE defaults to. */
const SNAPSHOT_CACHE_BYTES = 64 * 1024 * 1024;

export const createCaches = ({ events, runner, decode, reads, snapshotCacheBytes, objectCacheBytes, commandCacheBytes, clock }: CachedEngines): ServiceCaches => {
  return {
    push: createPushCaches(runner, createStoreHelpers(events), decode, commandCacheBytes),
    parsedSnapshots: new ParsedSnapshotCache(snapshotCacheBytes ?? SNAPSHOT_CACHE_BYTES),
    objects: createObjectQueryCaches(runner, objectCacheBytes),
    principals: PrincipalCache.forProjections(runner),
    sessions: new SessionStore(reads, clock ? { clock } : {}),
    throttles: {
      apiKeys: new FailureThrottle(reads, { scope: 'api-key', ...(clock ? { clock } : {}) }),
      admin: new FailureThrottle(reads, { scope: 'admin', ...(clock ? { clock } : {}) }),
    },
  };
};
