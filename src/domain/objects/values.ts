import * as t from 'io-ts';
import { props, readonlyArrayOf, readonlyOf } from '../decider.ts';
import { stableJson } from '../stable-json.ts';

/**
 * Attribute values as stored in events and read models. Derived fields (link titles, `readable`
 * forms, file URLs) are not stored: they are computed when an object is serialised. Each shape is
 * declared once, as the codec that checks it when events are read back; the types derive from them.
 */
const TextLike = t.keyof({
  text: null,
  'text-paragraph': null,
  'text-multiline': null,
  'email-address': null,
  url: null,
  isbn: null,
  uuid: null,
  postcode: null,
  'configuration-name': null,
});
export type TextLikeType = t.TypeOf<typeof TextLike>;
export const TEXT_LIKE = Object.keys(TextLike.keys) as readonly TextLikeType[];

/** Haplo's precisions: century, decade, year, month, day, hour, minute. */
const PrecisionCodec = t.keyof({ C: null, D: null, Y: null, M: null, d: null, h: null, m: null });
export type Precision = t.TypeOf<typeof PrecisionCodec>;

const PersonNameCodec = props(
  { culture: t.keyof({ western: null, western_list: null, eastern: null }) },
  { title: t.string, first: t.string, middle: t.string, last: t.string, suffix: t.string },
);
export type PersonName = t.TypeOf<typeof PersonNameCodec>;

const PostalAddressCodec = props(
  {
    /** ISO 3166-1 alpha-2, upper case. */
    country: t.string,
  },
  { street1: t.string, street2: t.string, city: t.string, county: t.string, postcode: t.string },
);
export type PostalAddress = t.TypeOf<typeof PostalAddressCodec>;

const TelephoneNumberCodec = props(
  {
    /** E.164 when the number could be parsed, else the digits as given. */
    number: t.string,
  },
  {
    /** ISO 3166-1 alpha-2 of the number's country, when known. */
    country: t.string,
    extension: t.string,
  },
);
export type TelephoneNumber = t.TypeOf<typeof TelephoneNumberCodec>;

/**
 * Marks a value of a member attribute as part of an attribute group instance (haplo-behaviour.md
 * §5.4): `desc` is the group attribute's API code; the values with the same `desc` and `groupId`
 * in one object form one instance of the group.
 */
const GroupExtensionCodec = readonlyOf(t.type({ desc: t.string, groupId: t.number }));
export type GroupExtension = t.TypeOf<typeof GroupExtensionCodec>;

const Qualified = readonlyOf(
  t.partial({
    /** Qualifier API code; absent = unqualified. */
    qualifier: t.string,
    /** Present when the value belongs to an attribute group instance. */
    extension: GroupExtensionCodec,
  }),
);

export const AttributeValueCodec = t.intersection([
  Qualified,
  t.union([
    readonlyOf(t.type({ type: TextLike, value: t.string })),
    readonlyOf(t.type({ type: t.keyof({ integer: null, number: null }), value: t.number })),
    props({ type: t.literal('datetime'), start: t.string, end: t.string, precision: PrecisionCodec, specifiedAsRange: t.boolean }, { timezone: t.string }),
    readonlyOf(t.type({ type: t.literal('link'), ref: t.string })),
    readonlyOf(t.type({ type: t.literal('telephone-number'), value: TelephoneNumberCodec })),
    readonlyOf(t.type({ type: t.literal('person-name'), value: PersonNameCodec })),
    readonlyOf(t.type({ type: t.literal('postal-address'), value: PostalAddressCodec })),
    readonlyOf(t.type({ type: t.literal('json'), value: t.unknown })),
    readonlyOf(t.type({ type: t.literal('file'), digest: t.string, fileSize: t.number, mimeType: t.string, filename: t.string })),
  ]),
]);
export type AttributeValue = t.TypeOf<typeof AttributeValueCodec>;

/** Attribute values of an object, keyed by attribute API code, each list in order. */
export const AttributesCodec = readonlyOf(t.record(t.string, readonlyArrayOf(AttributeValueCodec)));
export type Attributes = t.TypeOf<typeof AttributesCodec>;

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
