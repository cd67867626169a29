import * as t from 'io-ts';
import { eventTypes, props, readonlyArrayOf, readonlyOf, type EventOf } from '../decider.ts';
import { AttributesCodec } from './values.ts';

const labels = readonlyArrayOf(t.string);

/** Data codecs of the domain events of a store object (stream `object-<ref>`). Each event moves recordVersion up by one. */
export const objectEventCodecs = {
  ObjectCreated: readonlyOf(t.type({ ref: t.string, objectType: t.string, attributes: AttributesCodec, labels })),
  ObjectAttributesChanged: props(
    {
      ref: t.string,
      /** New complete value list of every attribute that changed ([] = attribute removed). */
      set: AttributesCodec,
    },
    {
      /** Present when the object's type changed with `dc:attribute:type`. */
      objectType: t.string,
      /** Present when the same save also changed the labels. */
      labels,
    },
  ),
  ObjectLabelsChanged: readonlyOf(t.type({ ref: t.string, labels })),
  ObjectDeleted: readonlyOf(t.type({ ref: t.string })),
  ObjectUndeleted: readonlyOf(t.type({ ref: t.string })),
};

export type ObjectEvent = EventOf<typeof objectEventCodecs>;

export const OBJECT_EVENT_TYPES = eventTypes(objectEventCodecs);

export const objectStream = (ref: string) => `object-${ref}`;

/**
 * Data codecs of the dependent-object claim (stream `dependent-<parent ref>-<key>`, written by
 * push-data): which object is a parent's dependent, so that concurrent pushes create only one.
 */
export const dependentClaimEventCodecs = {
  DependentObjectClaimed: readonlyOf(t.type({ parent: t.string, attribute: t.string, objectType: t.string, ref: t.string })),
};

export type DependentClaimEvent = EventOf<typeof dependentClaimEventCodecs>;
