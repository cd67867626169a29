import { createStoreHelpers, type StoreHelpers } from '../commands/appending/stream-states.ts';
import { createPushCaches, type PushCaches } from '../commands/push-data/push-data.ts';
import type { EventDecoder } from '../events/decode.ts';
import type { EventStore } from '../events/event-store.ts';
import type { ParsedSnapshots } from '../projections/reporting/snapshots.ts';
import type { VersionedProjections } from '../projections/versioned-cache.ts';
import { createObjectQueryCaches, type ObjectQueryCaches } from '../queries/object-api.ts';
import { PrincipalCache } from '../http/middleware/api-key-auth.ts';

/**
 * The in-memory state of one service besides its engines: caches of what requests derive from the
 * read models and the log, and the command side's kept stream states. Made once at start-up and
 * handed to the commands and queries that use them, so two services in one process (tests,
 * benchmarks) never share any.
 */
export interface ServiceCaches {
  /** The group commit and log watch of the event store, shared by the commands that append to it. */
  readonly appending: StoreHelpers;
  /** REST API definitions, profile refs and folded stream states of push-data requests. */
  readonly push: PushCaches;
  /** Fold states parsed from reporting snapshots, for answers "as at" a past instant. */
  readonly parsedSnapshots: ParsedSnapshots;
  /** Object documents, link targets, their refs and slugs of Object API answers. */
  readonly objects: ObjectQueryCaches;
  /** What API keys resolve to (user, groups, access). */
  readonly principals: PrincipalCache;
}

export interface CachedEngines {
  readonly events: EventStore;
  /** The projection runner: versioned caches are dropped whenever the read model they derive from moves. */
  readonly runner: VersionedProjections;
  readonly decode: EventDecoder;
}

export const createCaches = ({ events, runner, decode }: CachedEngines): ServiceCaches => {
  const appending = createStoreHelpers(events);
  return {
    appending,
    push: createPushCaches(runner, appending, decode),
    parsedSnapshots: new Map(),
    objects: createObjectQueryCaches(runner),
    principals: PrincipalCache.forProjections(runner),
  };
};
