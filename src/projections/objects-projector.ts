import type { EventDecoder } from '../events/decode.ts';
import type { RecordedEvent } from '../events/event-store.ts';
import { OBJECT_EVENT_TYPES, objectStream, type ObjectEvent } from '../domain/objects/events.ts';
import { evolveObject, type StoreObject } from '../domain/objects/object.ts';
import { titleOf, valueText } from './readable.ts';
import { BEHAVIOUR, TITLE } from '../domain/schema.ts';
import type { DocAccess, Projector } from './projector.ts';
import { OBJECTS, OBJECT_LINKS, type LinkDoc, type ObjectDoc } from './read-models.ts';

const linksOf = (o: StoreObject): LinkDoc[] => {
  const out: LinkDoc[] = [];
  for (const attribute in o.attributes) {
    const values = o.attributes[attribute]!;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v.type === 'link') out.push({ id: `${o.ref}|${attribute}|${i}`, from: o.ref, to: v.ref, attribute, qualifier: v.qualifier ?? null, fromType: o.objectType, fromCreated: o.creationDate });
    }
  }
  return out;
};

const behaviourOf = (attributes: StoreObject['attributes']): string | null => {
  const v = attributes[BEHAVIOUR]?.[0];
  return v?.type === 'configuration-name' ? v.value : null;
};

/** An object's read-model document: the object and the fields derived from its attributes. */
export const objectDoc = (o: StoreObject): ObjectDoc => ({ ...o, id: o.ref, ...derivedFields(o.attributes) });

const derivedFields = (attributes: StoreObject['attributes']) => ({
  title: titleOf(attributes),
  titles: (attributes[TITLE] ?? []).map(valueText),
  behaviour: behaviourOf(attributes),
});

const hasLink = (values: readonly { type: string }[] | undefined) => values?.some((v) => v.type === 'link') ?? false;

/** Whether a change can alter the object's link documents (its type is copied into each). */
const touchesLinks = (before: StoreObject, after: StoreObject, changed: StoreObject['attributes']) => {
  if (before.objectType !== after.objectType) return true;
  for (const code in changed) if (hasLink(changed[code]) || hasLink(before.attributes[code])) return true;
  return false;
};

const sameLink = (a: LinkDoc, b: LinkDoc) =>
  a.to === b.to && a.qualifier === b.qualifier && a.fromType === b.fromType && a.fromCreated === b.fromCreated && a.attribute === b.attribute;

/** Store objects as they are now, plus the link index used for "objects linking to X". */
export const objectsProjector = (decode: EventDecoder): Projector => ({
  name: 'objects',
  collections: [
    { name: OBJECTS, indexes: ['objectType', 'title', 'creationDate', 'behaviour'] },
    // A parent's links through one attribute, oldest first (push-data's dependents, the Object API's linked): ids break ties.
    { name: OBJECT_LINKS, indexes: ['to', 'from', 'attribute', 'fromCreated'], compoundIndexes: [['to', 'attribute', 'fromCreated', 'id']] },
  ],
  handles: OBJECT_EVENT_TYPES,
  // An object's events are in its own stream and touch only its document and the links from it.
  byStream: { streamPrefix: objectStream('') },
  documentsOf: { [OBJECTS]: (recorded) => decode<ObjectEvent>(recorded).data.ref },
  apply(recorded: RecordedEvent, docs: DocAccess) {
    const event = decode<ObjectEvent>(recorded);
    // From memory when the cache holds it, with no promise: a promise per event is a visible share of
    // a rebuild, and a live batch's commit then comes in the same turn as the other projections' ones.
    const held = docs.peek?.<ObjectDoc>(OBJECTS, event.data.ref);
    if (held !== undefined) return applyObjectEvent(event, recorded.recordedAt, held, docs);
    return docs.get<ObjectDoc>(OBJECTS, event.data.ref).then((before) => applyObjectEvent(event, recorded.recordedAt, before, docs));
  },
});

/** The objects projection's changes for one event, given the object's document before it. */
const applyObjectEvent = (event: ObjectEvent, recordedAt: Date, before: ObjectDoc | null, docs: DocAccess): void => {
  const after = evolveObject(before, event, recordedAt);
  const changed = event.type === 'ObjectAttributesChanged' ? event.data.set : event.type === 'ObjectCreated' ? after.attributes : {};
  // Derived fields are recomputed only when what they derive from changed.
  const derived =
    before && !(TITLE in changed) && !(BEHAVIOUR in changed)
      ? { title: before.title, titles: before.titles, behaviour: before.behaviour }
      : derivedFields(after.attributes);
  docs.put(OBJECTS, { ...after, id: after.ref, ...derived });
  if (before && !touchesLinks(before, after, changed)) return;
  // Only the links that differ are written.
  const previous = new Map<string, LinkDoc>();
  if (before) for (const l of linksOf(before)) previous.set(l.id, l);
  for (const link of linksOf(after)) {
    const old = previous.get(link.id);
    previous.delete(link.id);
    if (!old || !sameLink(old, link)) docs.put(OBJECT_LINKS, link);
  }
  for (const id of previous.keys()) docs.delete(OBJECT_LINKS, id);
};
