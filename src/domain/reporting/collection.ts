/** Reporting collections (haplo-behaviour.md §4): tables of facts about the objects of some types. */

export const FACT_TYPES = [
  'ref',
  'text',
  'boolean',
  'smallint',
  'int',
  'bigint',
  'float',
  'numeric',
  'date',
  'datetime',
  'time',
  'json',
  'labelList',
  'refList',
  'end-date',
] as const;
export type FactType = (typeof FACT_TYPES)[number];

/** How a fact's value is derived from the row's object (declaratively). */
export type FactSource =
  /** Values of an attribute: the first (default) or all, optionally only those with a qualifier. */
  | {
      readonly attribute: string;
      readonly qualifier?: string;
      readonly all?: boolean;
      /** For datetime values: which end of the range. */
      readonly part?: 'start' | 'end';
      /** Whether the attribute has any value (boolean facts). */
      readonly exists?: boolean;
      /** How many values it has. */
      readonly count?: boolean;
      /** Follow the first value (a link) and take this from the linked object instead. */
      readonly linked?: FactSource;
    }
  | { readonly title: true }
  | { readonly objectType: true }
  | { readonly labels: true }
  | { readonly deleted: true }
  | { readonly constant: unknown }
  /** A fact computed by code registered in src/reporting/fact-functions.ts. */
  | { readonly function: string };

export interface FactDef {
  readonly name: string;
  readonly type: FactType;
  readonly description: string;
  readonly source: FactSource;
}

export interface CollectionDef {
  readonly name: string;
  readonly description: string;
  readonly categories: readonly string[];
  /** Objects of these types (subtypes included) are the rows. */
  readonly types: readonly string[];
  /** Declared facts in order; the implicit `ref` fact is not among them. */
  readonly facts: readonly FactDef[];
}

export const COLLECTION_NAME = /^[a-z0-9][a-z0-9_]+[a-z0-9]$/;
export const REF_FACT = { name: 'ref', type: 'ref', description: 'Reporting object' } as const;

