import { createHash } from 'node:crypto';
import { WrongExpectedRevisionError, type AppendResult } from '../../events/event-store.ts';
import type { ControlFile, ImportLookups } from '../../domain/control-file.ts';
import { BatchBusy, runBatch, type BatchPorts, type BatchResult } from './batch.ts';
import type { DestinationDef, Models } from '../../domain/model.ts';
import { objectStream, type ObjectEvent } from '../../domain/objects/events.ts';
import { evolveObjectState, type ObjectState } from '../../domain/objects/object.ts';
import { OBJECTS, OBJECT_LINKS, type LinkDoc, type ObjectDoc, REST_APIS, type RestApiDoc, GROUPS, USERS, type UserDoc } from '../../projections/read-models.ts';
import { userStream, type UserEvent } from '../../domain/users/events.ts';
import { evolveUser, type User } from '../../domain/users/users.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from '../context.ts';
import { defaultLabels } from '../objects.ts';
import { collectionVersion, type VersionedProjections } from '../../projections/versioned-cache.ts';
import { SizedVersionedCache } from '../../projections/sized-cache.ts';
import { toNewEvents } from '../appending/run-command.ts';
import { COMMAND_CACHE_BYTES, type StoreHelpers, type StreamStates } from '../appending/stream-states.ts';
import type { EventDecoder } from '../../events/decode.ts';
import { untilCommitted, type Attempt } from '../appending/until-committed.ts';

type ClaimEvent = { type: string; data: { ref: string } };

/** The state of a dependent slot: the ref of the latest claim. */
const evolveClaim = (_: string | null, event: ClaimEvent): string => event.data.ref;

/**
 * What push-data requests keep between them, made once per service at start-up: read-model
 * look-ups, each kept for as long as its read model stands still, and folded stream states.
 */
export interface PushCaches {
  /** REST API definitions by URL (null: not defined). */
  readonly apis: SizedVersionedCache<string, RestApiDoc | null>;
  /** Profile refs by lower-case username (null: no such user, or no profile). */
  readonly profiles: SizedVersionedCache<string, string | null>;
  /** Destination name -> its part of dependent slot names (models have few destinations). */
  readonly destinationKeys: Map<string, string>;
  /** The group commit and log watch the stream states below are kept over. */
  readonly store: StoreHelpers;
  readonly objects: StreamStates<ObjectState, ObjectEvent>;
  readonly users: StreamStates<User, UserEvent>;
  /** Dependent slots (see `dependentStream`). */
  readonly claims: StreamStates<string, ClaimEvent>;
}

/** A kept REST API definition's estimated size: its URL and JSON (a control file may be up to the body limit). */
const definitionBytes = (doc: RestApiDoc | null, url: string): number => 64 + url.length + (doc === null ? 0 : JSON.stringify(doc).length);
/** A kept profile look-up's: the username comes from pushed data, of any length. */
const profileBytes = (ref: string | null, username: string): number => 64 + username.length + (ref?.length ?? 0);

/**
 * `cacheBytes` (SVC_COMMAND_CACHE) is shared out: half for objects' states, an eighth each for REST
 * API definitions, profile look-ups, users' states and dependent slots'.
 */
export const createPushCaches = (runner: VersionedProjections, store: StoreHelpers, decode: EventDecoder, cacheBytes = COMMAND_CACHE_BYTES): PushCaches => ({
  apis: new SizedVersionedCache(collectionVersion(runner, REST_APIS), cacheBytes / 8, definitionBytes),
  profiles: new SizedVersionedCache(collectionVersion(runner, USERS), cacheBytes / 8, profileBytes),
  destinationKeys: new Map(),
  store,
  objects: store.streamStates(decode, evolveObjectState, cacheBytes / 2),
  users: store.streamStates(decode, evolveUser, cacheBytes / 8),
  claims: store.streamStates(decode, evolveClaim, cacheBytes / 8),
});

/** The slot that records which object is a parent's dependent, so concurrent pushes create only one. */
const dependentStream = (caches: PushCaches, parentRef: string, destination: string) => {
  let key = caches.destinationKeys.get(destination);
  if (key === undefined) {
    key = createHash('sha256').update(destination).digest('hex').slice(0, 16);
    if (caches.destinationKeys.size < 10_000) caches.destinationKeys.set(destination, key);
  }
  return `dependent-${parentRef}-${key}`;
};

// Method shorthand in the objects below: they are made per request, and named function values cost a little each to make.
const importLookups = (deps: CommandDeps, caches: PushCaches): ImportLookups => ({
  async profileRefByUsername(username) {
    const key = username.toLowerCase();
    const ref = await caches.profiles.through(key, async () => (await deps.reads.get<UserDoc>(USERS, key))?.profileRef ?? null);
    return ref ?? undefined;
  },
  async profileRefByEmail(email) {
    return (await deps.reads.find<UserDoc>(USERS, { where: { emailKey: email.toLowerCase() }, limit: 1 }))[0]?.profileRef;
  },
  async refByBehaviour(code) {
    return (await deps.reads.find<ObjectDoc>(OBJECTS, { where: { behaviour: code }, sort: [['creationDate', 'asc']], limit: 1 }))[0]?.ref;
  },
  async titlesOfTypes(types, limit) {
    const codes = [...new Set(types.flatMap((t) => deps.schema.typeAndSubtypes(t).map((d) => d.code)))];
    const docs = await deps.reads.find<ObjectDoc>(OBJECTS, { where: { objectType: { $in: codes } }, limit: limit + 1 });
    if (docs.length > limit) return 'too-many';
    return docs.filter((d) => !d.deleted).map((d) => ({ ref: d.ref, titles: d.titles }));
  },
});

const batchPorts = (deps: CommandDeps, caches: PushCaches, metadata: EventMetadata): BatchPorts => {
  const { store, objects, users, claims } = caches;
  const kept = [objects, users, claims];
  // One look at the log's head serves a record's loads (read again after each commit).
  let head: Promise<number | undefined> | undefined;
  const log = {
    head(): Promise<number | undefined> {
      return (head ??= store.watch ? store.watch.position() : Promise.resolve(undefined));
    },
  };
  /** The record attempt under way (records of a batch run one after the other). */
  let attempt: Attempt | undefined;
  /** Before a load: waits while another command holds the stream locked (see LockHolder.beforeLoad); no promise when there is nothing to wait for. */
  const inTurn = (stream: string): Promise<void> | undefined => {
    const waiting = attempt?.beforeLoad(stream);
    // The log moved while waiting: the record's later loads look at its head again.
    return waiting?.then(() => {
      head = undefined;
    });
  };
  return {
    schema: deps.schema,
    lookups: importLookups(deps, caches),
    labels: defaultLabels(deps, undefined),
    async loadObject(ref) {
      const stream = objectStream(ref);
      const waiting = inTurn(stream);
      if (waiting) await waiting;
      const { state, revision } = await objects.load(stream, await log.head());
      return state ? { state, revision } : null;
    },
    async findDependent(def: DestinationDef, parentRef: string) {
      const stream = dependentStream(caches, parentRef, def.name);
      const waiting = inTurn(stream);
      if (waiting) await waiting;
      const claimed = await claims.load(stream, await log.head());
      if (claimed.state !== null) return { ref: claimed.state, claim: { stream, revision: claimed.revision } };
      // Dependents made some other way (admin API, older data): the oldest object of the type linking back.
      const links = await deps.reads.find<LinkDoc>(OBJECT_LINKS, { where: { to: parentRef, attribute: def.objectDependsWithAttribute ?? '' }, sort: [['fromCreated', 'asc']] });
      const types = def.objectType ? [def.objectType] : (def.annotatedTypes ?? []);
      const link = links.find((l) => types.some((t) => deps.schema.isKindOf(l.fromType, t)));
      return { ...(link ? { ref: link.from } : {}), claim: { stream, revision: -1 } };
    },
    async profileOfUser(username) {
      return (await deps.reads.get<UserDoc>(USERS, username))?.profileRef;
    },
    async loadUser(username) {
      const stream = userStream(username);
      const waiting = inTurn(stream);
      if (waiting) await waiting;
      return users.load(stream, await log.head());
    },
    async groupExists(code) {
      return (await deps.reads.get(GROUPS, code)) !== null;
    },
    async commit(plan) {
      head = undefined;
      if (plan.appends.length === 0) return undefined;
      const appends = plan.appends.map((a) => ({ stream: a.stream, events: toNewEvents(a.events, metadata), expectedRevision: a.expectedRevision }));
      attempt?.writes(appends.map((a) => a.stream));
      let results: AppendResult[];
      try {
        results = await store.commits.appendMany(appends);
      } catch (e) {
        // Whatever was kept of these streams, the retry reads them from the log.
        if (e instanceof WrongExpectedRevisionError) for (const a of appends) for (const states of kept) states.forget(a.stream);
        throw e;
      }
      appends.forEach((a, i) => {
        for (const states of kept) states.appended(a, results[i]!);
      });
      return results[results.length - 1]?.position;
    },
    async untilCommitted(run) {
      try {
        return await untilCommitted({ locks: store.locks, timeoutMs: deps.waitTimeoutMs }, (a) => {
          attempt = a;
          return run();
        });
      } finally {
        attempt = undefined;
      }
    },
  };
};

/**
 * Runs a push-data request through its API's control file; answers once the changes are readable.
 * Throws BatchBusy when a record could not be committed within SVC_WAIT_TIMEOUT_MS for contention.
 */
export const pushData = async (deps: CommandDeps, caches: PushCaches, models: Models, metadata: EventMetadata, control: ControlFile, body: Buffer): Promise<BatchResult> => {
  const model = models.get(control.model);
  if (!model) {
    return { result: 'error', applied: 0, failures: 0, errorCount: 0, errors: [`Exception when processing: Model not implemented: ${control.model}`], actions: [] };
  }
  let result: BatchResult;
  try {
    result = await runBatch(batchPorts(deps, caches, metadata), control, model, body);
  } catch (e) {
    // The records committed before the busy one are readable when the client hears of it.
    if (e instanceof BatchBusy) await waitUntilVisible(deps, e.result.position, e.result.types);
    throw e;
  }
  await waitUntilVisible(deps, result.position, result.types);
  return result;
};
