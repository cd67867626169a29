import type { EventStore, RecordedEvent } from '../events/event-store.ts';
import type { EventDecoder } from '../events/decode.ts';
import { objectStream, type ObjectEvent } from '../domain/objects/events.ts';
import { evolveObject, type StoreObject } from '../domain/objects/object.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';
import { objectDoc } from '../projections/objects-projector.ts';
import { ObjectQueryError, parseSources, readableObject, serialiseMany, type ObjectQueryDeps } from './object-api.ts';

/** The Object API's reads plus the log, which answers for the past. */
export interface ObjectHistoryDeps extends ObjectQueryDeps {
  readonly events: EventStore;
  readonly decode: EventDecoder;
}

const noSuchObject = (ref: string) => new ObjectQueryError('svc:api-v0:object:no-such-object', `Object ${ref} does not exist`);

/** The object's own events in order, decoded (upcast) as the projector reads them. */
const objectEvents = async (deps: ObjectHistoryDeps, ref: string): Promise<{ recorded: RecordedEvent; event: ObjectEvent }[]> => {
  const out: { recorded: RecordedEvent; event: ObjectEvent }[] = [];
  for await (const recorded of deps.events.readStream(objectStream(ref))) out.push({ recorded, event: deps.decode<ObjectEvent>(recorded) });
  return out;
};

/**
 * The object as it was at `at`: its stream folded up to the last event recorded at or before it.
 * Readable only if the caller may read it as it is now (a relabelling hides the past too) and as it was;
 * links show what today's rules allow of their targets, as the live answer does.
 */
export const getObjectAt = async (deps: ObjectHistoryDeps, ref: string, sourcesParam: string | undefined, at: Date, access: ReadAccess) => {
  const sources = parseSources(sourcesParam);
  await readableObject(deps, ref, access);
  const events = await objectEvents(deps, ref);
  // Up to the last event recorded at or before `at`: a stream is folded as a prefix, never with a gap.
  let last = -1;
  events.forEach(({ recorded }, i) => {
    if (recorded.recordedAt.getTime() <= at.getTime()) last = i;
  });
  let state: StoreObject | null = null;
  for (const { recorded, event } of events.slice(0, last + 1)) state = evolveObject(state, event, recorded.recordedAt);
  if (!state || !canRead(access, state.labels)) throw noSuchObject(ref);
  const [object] = await serialiseMany(deps, [objectDoc(state)], sources, access);
  return object!;
};

const diff = (before: readonly string[], after: readonly string[]) => ({
  added: after.filter((l) => !before.includes(l)),
  removed: before.filter((l) => !after.includes(l)),
});

/** Every version of the object (oldest first): when, who, in which request, and which attributes and labels changed. */
export const getObjectHistory = async (deps: ObjectHistoryDeps, ref: string, access: ReadAccess) => {
  await readableObject(deps, ref, access);
  let state: StoreObject | null = null;
  const versions = [];
  for (const { recorded, event } of await objectEvents(deps, ref)) {
    const before = state;
    state = evolveObject(state, event, recorded.recordedAt);
    const attributes = event.type === 'ObjectCreated' ? Object.keys(event.data.attributes) : event.type === 'ObjectAttributesChanged' ? Object.keys(event.data.set) : [];
    versions.push({
      recordVersion: state.recordVersion,
      time: recorded.recordedAt.toISOString(),
      actor: recorded.metadata.actor ?? null,
      correlationId: recorded.metadata.correlationId ?? null,
      event: event.type,
      attributes,
      labels: diff(before?.labels ?? [], state.labels),
      ...(before && before.objectType !== state.objectType ? { type: { from: before.objectType, to: state.objectType } } : {}),
    });
  }
  return { kind: 'svc:api-v0:object:history', ref, versions };
};
