import type { Attributes, AttributeValue } from './values.ts';

/** Domain events of a store object (stream `object-<ref>`). Each one moves recordVersion up by one. */
export type ObjectEvent =
  | { readonly type: 'ObjectCreated'; readonly data: { readonly ref: string; readonly objectType: string; readonly attributes: Attributes; readonly labels: readonly string[] } }
  | {
      readonly type: 'ObjectAttributesChanged';
      readonly data: {
        readonly ref: string;
        /** New complete value list of every attribute that changed ([] = attribute removed). */
        readonly set: Readonly<Record<string, readonly AttributeValue[]>>;
        /** Present when the object's type changed with `dc:attribute:type`. */
        readonly objectType?: string;
        /** Present when the same save also changed the labels. */
        readonly labels?: readonly string[];
      };
    }
  | { readonly type: 'ObjectLabelsChanged'; readonly data: { readonly ref: string; readonly labels: readonly string[] } }
  | { readonly type: 'ObjectDeleted'; readonly data: { readonly ref: string } }
  | { readonly type: 'ObjectUndeleted'; readonly data: { readonly ref: string } };

export const OBJECT_EVENT_TYPES: readonly ObjectEvent['type'][] = [
  'ObjectCreated',
  'ObjectAttributesChanged',
  'ObjectLabelsChanged',
  'ObjectDeleted',
  'ObjectUndeleted',
];

export const objectStream = (ref: string) => `object-${ref}`;
