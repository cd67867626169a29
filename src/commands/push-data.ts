import { createHash } from 'node:crypto';
import type { ControlFile, ImportLookups } from '../import/control-file.ts';
import type { BatchPorts, BatchResult } from '../import/batch.ts';
import { runBatch } from '../import/batch.ts';
import type { DestinationDef, Models } from '../import/model.ts';
import { objectStream } from '../objects/events.ts';
import { evolveObject } from '../objects/object.ts';
import { OBJECTS, OBJECT_LINKS, type LinkDoc, type ObjectDoc } from '../projections/objects-projector.ts';
import { GROUPS, USERS, type UserDoc } from '../projections/users-projector.ts';
import { userStream } from '../users/events.ts';
import { evolveUser } from '../users/users.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { defaultLabels } from './objects.ts';
import { loadAggregate, toNewEvents } from './run-command.ts';

/** The slot that records which object is a parent's dependent, so concurrent pushes create only one. */
const dependentStream = (parentRef: string, destination: string) =>
  `dependent-${parentRef}-${createHash('sha256').update(destination).digest('hex').slice(0, 16)}`;

export const importLookups = (deps: CommandDeps): ImportLookups => ({
  profileRefByUsername: async (username) => (await deps.reads.get<UserDoc>(USERS, username.toLowerCase()))?.profileRef,
  profileRefByEmail: async (email) => (await deps.reads.find<UserDoc>(USERS, { where: { emailKey: email.toLowerCase() }, limit: 1 }))[0]?.profileRef,
  refByBehaviour: async (code) => (await deps.reads.find<ObjectDoc>(OBJECTS, { where: { behaviour: code }, sort: [['creationDate', 'asc']], limit: 1 }))[0]?.ref,
  titlesOfTypes: async (types, limit) => {
    const codes = [...new Set(types.flatMap((t) => deps.schema.typeAndSubtypes(t).map((d) => d.code)))];
    const docs = await deps.reads.find<ObjectDoc>(OBJECTS, { where: { objectType: { $in: codes } }, limit: limit + 1 });
    if (docs.length > limit) return 'too-many';
    return docs.filter((d) => !d.deleted).map((d) => ({ ref: d.ref, titles: d.titles }));
  },
});

const batchPorts = (deps: CommandDeps, metadata: EventMetadata): BatchPorts => ({
  schema: deps.schema,
  lookups: importLookups(deps),
  labels: defaultLabels(deps, undefined),
  loadObject: async (ref) => {
    const { state, revision } = await loadAggregate(deps.events, deps.decode, objectStream(ref), evolveObject);
    return state ? { state, revision } : null;
  },
  findDependent: async (def: DestinationDef, parentRef: string) => {
    const stream = dependentStream(parentRef, def.name);
    let claimed: { ref: string; revision: number } | undefined;
    for await (const e of deps.events.readStream(stream, { direction: 'backwards', maxCount: 1 })) {
      claimed = { ref: (deps.decode<{ type: string; data: { ref: string } }>(e)).data.ref, revision: e.revision };
    }
    if (claimed) return { ref: claimed.ref, claim: { stream, revision: claimed.revision } };
    // Dependents made some other way (admin API, older data): the oldest object of the type linking back.
    const links = await deps.reads.find<LinkDoc>(OBJECT_LINKS, { where: { to: parentRef, attribute: def.objectDependsWithAttribute ?? '' }, sort: [['fromCreated', 'asc']] });
    const types = def.objectType ? [def.objectType] : (def.annotatedTypes ?? []);
    const link = links.find((l) => types.some((t) => deps.schema.isKindOf(l.fromType, t)));
    return { ...(link ? { ref: link.from } : {}), claim: { stream, revision: -1 } };
  },
  profileOfUser: async (username) => (await deps.reads.get<UserDoc>(USERS, username))?.profileRef,
  loadUser: (username) => loadAggregate(deps.events, deps.decode, userStream(username), evolveUser),
  groupExists: async (code) => (await deps.reads.get(GROUPS, code)) !== null,
  commit: async (plan) => {
    if (plan.appends.length === 0) return undefined;
    const results = await deps.events.appendMany(
      plan.appends.map((a) => ({ stream: a.stream, events: toNewEvents(a.events, metadata), expectedRevision: a.expectedRevision })),
    );
    return results[results.length - 1]?.position;
  },
});

/** Runs a push-data request through its API's control file; answers once the changes are readable. */
export const pushData = async (deps: CommandDeps, models: Models, metadata: EventMetadata, control: ControlFile, body: Buffer): Promise<BatchResult> => {
  const model = models.get(control.model);
  if (!model) {
    return { result: 'error', applied: 0, failures: 0, errorCount: 0, errors: [`Exception when processing: Model not implemented: ${control.model}`], actions: [] };
  }
  const result = await runBatch(batchPorts(deps, metadata), control, model, body);
  await waitUntilVisible(deps, result.position, result.types);
  return result;
};
