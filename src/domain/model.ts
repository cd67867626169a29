/**
 * Data-import models (haplo-behaviour.md §3.4): named sets of destinations, each holding Names.
 * Declared in `config/models.json`; object destinations get their Names from the schema.
 */

/** A Name's data type: a schema value type, `ref` (links), `object-type`, `boolean`, or a dictionary's own. */
export type NameType = string;

export interface NameDef {
  readonly name: string;
  readonly type: NameType;
  readonly description: string;
  readonly multivalue: boolean;
  readonly required: boolean;
  /** For `ref` Names: type codes a linked object may have. */
  readonly refTypes?: readonly string[];
}

/** What commits a dictionary destination's target (dictionaries have no store object). */
export type DictionaryCommit = 'user-sync-user' | 'user-sync-tags';

export interface DestinationDef {
  readonly name: string;
  readonly title: string;
  readonly kind: 'object' | 'dictionary';
  readonly optional: boolean;
  /** Name of the destination this one depends on. */
  readonly depends?: string;
  readonly pseudo: boolean;
  readonly excludeFromGenerator: boolean;
  readonly displaySort: number;
  readonly names: readonly NameDef[];
  /** Object destinations: the type of new objects and of objects that may be loaded. */
  readonly objectType?: string;
  readonly annotatedTypes?: readonly string[];
  /** Attribute of this destination's object that links to the parent destination's object. */
  readonly objectDependsWithAttribute?: string;
  readonly commit?: DictionaryCommit;
  /** Implicitly ready (user sync): the destination gets a target without `new` or `load`. */
  readonly implicit?: boolean;
  /** Attribute-group pseudo-destinations: the object destination and the group attribute they collect values for. */
  readonly attributeGroup?: { readonly destination: string; readonly group: string };
}

export interface ModelDef {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly destinations: readonly DestinationDef[];
}

export interface Models {
  get(name: string): ModelDef | undefined;
  list(): readonly ModelDef[];
}

export const LOAD_BY_REF = 'load:by-ref';
export const PERSON_NAME = 'value:person-name';
export const POSTAL_ADDRESS = 'value:postal-address';
export const MAX_DEPENDENCY_DEPTH = 16;

/** Name of the pseudo-destination collecting the values of one instance of `group` for object destination `destination`. */
export const attributeGroupDestination = (destination: string, group: string): string => `${destination}:attribute-group:${group}`;
