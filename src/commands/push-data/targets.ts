import type { ObjectState } from '../../domain/objects/object.ts';
import type { AttributeValue } from '../../domain/objects/values.ts';

/** A store object being built or edited by a record: a mutable copy until the record commits. */
export interface ObjectTarget {
  readonly kind: 'object';
  readonly destination: string;
  readonly ref: string;
  /** The stored object it started from; null for a new object. */
  readonly loaded: ObjectState | null;
  /** Stream revision of `loaded` (-1 for new objects): the expected revision when saving. */
  readonly revision: number;
  /** Whole lists are replaced, never changed in place: they may be the loaded state's own lists. */
  readonly attributes: Record<string, readonly AttributeValue[]>;
  /** Link to add back to the parent destination's object, for dependent destinations. */
  readonly parentLink?: { readonly attribute: string; readonly ref: string };
  /** Claim on the parent's dependent slot, so concurrent records never create two dependents. */
  readonly claim?: { readonly stream: string; readonly revision: number };
}

export interface DictionaryTarget {
  readonly kind: 'dictionary';
  readonly destination: string;
  readonly values: Record<string, unknown>;
}

export type Target = ObjectTarget | DictionaryTarget;

export const newObjectTarget = (destination: string, ref: string, extra: Partial<Pick<ObjectTarget, 'parentLink' | 'claim'>> = {}): ObjectTarget => ({
  kind: 'object',
  destination,
  ref,
  loaded: null,
  revision: -1,
  attributes: {},
  ...extra,
});

export const loadedObjectTarget = (destination: string, loaded: ObjectState, revision: number, extra: Partial<Pick<ObjectTarget, 'parentLink'>> = {}): ObjectTarget => ({
  kind: 'object',
  destination,
  ref: loaded.ref,
  loaded,
  revision,
  attributes: { ...loaded.attributes },
  ...extra,
});

export const dictionaryTarget = (destination: string): DictionaryTarget => ({ kind: 'dictionary', destination, values: {} });
