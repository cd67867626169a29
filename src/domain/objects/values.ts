import { stableJson } from '../stable-json.ts';
import type { ValueType } from '../schema.ts';

/**
 * Attribute values as stored in events and read models. Derived fields (link titles, `readable`
 * forms, file URLs) are not stored: they are computed when an object is serialised.
 */
export type TextLikeType =
  | 'text'
  | 'text-paragraph'
  | 'text-multiline'
  | 'email-address'
  | 'url'
  | 'isbn'
  | 'uuid'
  | 'postcode'
  | 'configuration-name';

export const TEXT_LIKE: readonly TextLikeType[] = [
  'text',
  'text-paragraph',
  'text-multiline',
  'email-address',
  'url',
  'isbn',
  'uuid',
  'postcode',
  'configuration-name',
];

/** Haplo's precisions: century, decade, year, month, day, hour, minute. */
export type Precision = 'C' | 'D' | 'Y' | 'M' | 'd' | 'h' | 'm';

export interface PersonName {
  readonly title?: string;
  readonly first?: string;
  readonly middle?: string;
  readonly last?: string;
  readonly suffix?: string;
  readonly culture: 'western' | 'western_list' | 'eastern';
}

export interface PostalAddress {
  readonly street1?: string;
  readonly street2?: string;
  readonly city?: string;
  readonly county?: string;
  readonly postcode?: string;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string;
}

export interface TelephoneNumber {
  /** ISO 3166-1 alpha-2 of the number's country, when known. */
  readonly country?: string;
  /** E.164 when the number could be parsed, else the digits as given. */
  readonly number: string;
  readonly extension?: string;
}

/**
 * Marks a value of a member attribute as part of an attribute group instance (haplo-behaviour.md
 * §5.4): `desc` is the group attribute's API code; the values with the same `desc` and `groupId`
 * in one object form one instance of the group.
 */
export interface GroupExtension {
  readonly desc: string;
  readonly groupId: number;
}

interface Qualified {
  /** Qualifier API code; absent = unqualified. */
  readonly qualifier?: string;
  /** Present when the value belongs to an attribute group instance. */
  readonly extension?: GroupExtension;
}

export type AttributeValue = Qualified &
  (
    | { readonly type: TextLikeType; readonly value: string }
    | { readonly type: 'integer' | 'number'; readonly value: number }
    | {
        readonly type: 'datetime';
        readonly start: string;
        readonly end: string;
        readonly precision: Precision;
        readonly specifiedAsRange: boolean;
        readonly timezone?: string;
      }
    | { readonly type: 'link'; readonly ref: string }
    | { readonly type: 'telephone-number'; readonly value: TelephoneNumber }
    | { readonly type: 'person-name'; readonly value: PersonName }
    | { readonly type: 'postal-address'; readonly value: PostalAddress }
    | { readonly type: 'json'; readonly value: unknown }
    | { readonly type: 'file'; readonly digest: string; readonly fileSize: number; readonly mimeType: string; readonly filename: string }
  );

export type ValueOf<T extends ValueType> = Extract<AttributeValue, { type: T }>;

/** Attribute values of an object, keyed by attribute API code, each list in order. */
export type Attributes = Readonly<Record<string, readonly AttributeValue[]>>;

/** Structural equality, independent of key order: "unchanged saves emit nothing" depends on it. */
export const sameValues = (a: readonly AttributeValue[] | undefined, b: readonly AttributeValue[] | undefined): boolean => sameJson(a ?? [], b ?? []);

/**
 * `stableJson(a) === stableJson(b)`, without writing the texts: the same values (the common case
 * of a save, whose edited copy keeps the value objects it did not touch) answer at once.
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return stableJson(a) === stableJson(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  if (keys.length !== Object.keys(y).filter((k) => y[k] !== undefined).length) return false;
  for (const k of keys) if (!Object.hasOwn(y, k) || y[k] === undefined || !sameJson(x[k], y[k])) return false;
  return true;
};


/** The next free attribute-group id in an object: one more than the largest in use (1 when none are). */
export const nextGroupId = (attributes: Attributes): number => {
  let max = 0;
  for (const values of Object.values(attributes)) for (const v of values) if (v.extension && v.extension.groupId > max) max = v.extension.groupId;
  return max + 1;
};
