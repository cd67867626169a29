import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import type { AttributeDef, Schema } from '../domain/schema.ts';
import { isRef } from '../domain/objects/ref.ts';
import { TEXT_LIKE, type AttributeValue, type PersonName, type PostalAddress, type Precision, type TextLikeType } from '../domain/objects/values.ts';

export interface ParseContext {
  readonly schema: Schema;
  /** Type codes of the objects that link values point at (refs missing from the map do not exist). */
  readonly linkTargets: ReadonlyMap<string, string>;
}

export type Parsed = { readonly value: AttributeValue } | { readonly error: string };

const PRECISIONS: readonly Precision[] = ['C', 'D', 'Y', 'M', 'd', 'h', 'm'];
const CULTURES = ['western', 'western_list', 'eastern'] as const;
const NAME_PARTS = ['title', 'first', 'middle', 'last', 'suffix'] as const;
const ADDRESS_PARTS = ['street1', 'street2', 'city', 'county', 'postcode'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u);
const optionalString = (o: Record<string, unknown>, k: string) => o[k] === undefined || typeof o[k] === 'string';

const isbnValid = (s: string): boolean => {
  const d = s.replace(/[\s-]/g, '').toUpperCase();
  if (/^\d{9}[\dX]$/.test(d)) {
    const sum = [...d].reduce((acc, c, i) => acc + (c === 'X' ? 10 : Number(c)) * (10 - i), 0);
    return sum % 11 === 0;
  }
  if (/^\d{13}$/.test(d)) {
    const sum = [...d].reduce((acc, c, i) => acc + Number(c) * (i % 2 ? 3 : 1), 0);
    return sum % 10 === 0;
  }
  return false;
};

const textChecks: Record<TextLikeType, (s: string) => string | undefined> = {
  text: () => undefined,
  'text-paragraph': () => undefined,
  'text-multiline': () => undefined,
  'email-address': (s) => (s.indexOf('@') > 0 && !/\s/.test(s) ? undefined : 'is not an email address'),
  url: (s) => (/^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/.test(s) ? undefined : 'is not a URL (it needs a scheme, e.g. https:)'),
  isbn: (s) => (isbnValid(s) ? undefined : 'is not a valid ISBN-10 or ISBN-13'),
  uuid: (s) => (UUID.test(s) ? undefined : 'is not a UUID'),
  postcode: (s) => (s.trim().length > 0 && s.length <= 16 ? undefined : 'is not a postcode'),
  'configuration-name': (s) => (/^[A-Za-z0-9][A-Za-z0-9:._-]*$/.test(s) ? undefined : 'is not a configuration name (letters, digits, : . _ -)'),
};

/** Adds one precision unit: the end of a datetime is the end of the period its start names. */
const addPeriod = (start: Date, precision: Precision): Date => {
  const d = new Date(start.getTime());
  switch (precision) {
    case 'C': d.setUTCFullYear(d.getUTCFullYear() + 100); break;
    case 'D': d.setUTCFullYear(d.getUTCFullYear() + 10); break;
    case 'Y': d.setUTCFullYear(d.getUTCFullYear() + 1); break;
    case 'M': d.setUTCMonth(d.getUTCMonth() + 1); break;
    case 'd': d.setUTCDate(d.getUTCDate() + 1); break;
    case 'h': d.setUTCHours(d.getUTCHours() + 1); break;
    case 'm': d.setUTCMinutes(d.getUTCMinutes() + 1); break;
  }
  return d;
};

/** Truncates to the precision, so "2024-03-12T10:00 with precision M" starts on 2024-03-01. */
const truncate = (date: Date, precision: Precision): Date => {
  const y = date.getUTCFullYear();
  switch (precision) {
    case 'C': return new Date(Date.UTC(Math.floor(y / 100) * 100, 0, 1));
    case 'D': return new Date(Date.UTC(Math.floor(y / 10) * 10, 0, 1));
    case 'Y': return new Date(Date.UTC(y, 0, 1));
    case 'M': return new Date(Date.UTC(y, date.getUTCMonth(), 1));
    case 'd': return new Date(Date.UTC(y, date.getUTCMonth(), date.getUTCDate()));
    case 'h': return new Date(Date.UTC(y, date.getUTCMonth(), date.getUTCDate(), date.getUTCHours()));
    case 'm': return new Date(Date.UTC(y, date.getUTCMonth(), date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes()));
  }
};

const parseDate = (s: unknown): Date | undefined => {
  if (typeof s !== 'string' || !ISO_DATE.test(s)) return undefined;
  // Calendar fields must exist as written: 30 February is refused, not rolled over to March.
  const [y, mo, d, h = '0', mi = '0', se = '0'] = s.split(/[-T:.Z+]/);
  const probe = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(se)));
  if (probe.getUTCMonth() !== Number(mo) - 1 || probe.getUTCDate() !== Number(d) || probe.getUTCHours() !== Number(h) || probe.getUTCMinutes() !== Number(mi) || probe.getUTCSeconds() !== Number(se)) {
    return undefined;
  }
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(s);
  const date = new Date(s.length === 10 || hasZone ? s : `${s}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date;
};

const parseDatetime = (input: Record<string, unknown>): Parsed => {
  const start = parseDate(input.start);
  if (!start) return { error: 'start must be an ISO 8601 date or date-time, e.g. 2024-03-12 or 2024-03-12T10:30:00Z' };
  const precision = input.precision ?? (typeof input.start === 'string' && input.start.length > 10 ? 'm' : 'd');
  if (!PRECISIONS.includes(precision as Precision)) return { error: `precision must be one of ${PRECISIONS.join(', ')}` };
  const p = precision as Precision;
  const from = truncate(start, p);
  let end = addPeriod(from, p);
  if (input.end !== undefined) {
    const given = parseDate(input.end);
    if (!given) return { error: 'end must be an ISO 8601 date or date-time' };
    // A full timestamp on a period boundary is the exclusive end, as serialised; a plain date is the last day included.
    const exclusive = typeof input.end === 'string' && input.end.includes('T') && truncate(given, p).getTime() === given.getTime();
    end = exclusive ? given : addPeriod(truncate(given, p), p);
    if (end.getTime() <= from.getTime()) return { error: 'end must not be before start' };
  }
  if (input.timezone !== undefined && typeof input.timezone !== 'string') return { error: 'timezone must be a string' };
  if (input.specifiedAsRange !== undefined && typeof input.specifiedAsRange !== 'boolean') return { error: 'specifiedAsRange must be a boolean' };
  const onePeriod = end.getTime() === addPeriod(from, p).getTime();
  return {
    value: {
      type: 'datetime',
      start: from.toISOString(),
      end: end.toISOString(),
      precision: p,
      specifiedAsRange: typeof input.specifiedAsRange === 'boolean' ? input.specifiedAsRange : !onePeriod,
      ...(typeof input.timezone === 'string' ? { timezone: input.timezone } : {}),
    },
  };
};

const parsePersonName = (v: unknown): Parsed => {
  if (!isObject(v)) return { error: 'value must be an object with first, last, ...' };
  if (!NAME_PARTS.every((k) => optionalString(v, k))) return { error: `name parts (${NAME_PARTS.join(', ')}) must be strings` };
  const culture = v.culture ?? 'western';
  if (!CULTURES.includes(culture as PersonName['culture'])) return { error: `culture must be one of ${CULTURES.join(', ')}` };
  if (!v.first && !v.last) return { error: 'a person name needs at least first or last' };
  const name: Record<string, string> = {};
  for (const k of NAME_PARTS) if (typeof v[k] === 'string' && (v[k] as string).trim()) name[k] = (v[k] as string).trim();
  return { value: { type: 'person-name', value: { ...name, culture: culture as PersonName['culture'] } } };
};

const parsePostalAddress = (v: unknown): Parsed => {
  if (!isObject(v)) return { error: 'value must be an object with street1, city, country, ...' };
  if (!ADDRESS_PARTS.every((k) => optionalString(v, k))) return { error: `address parts (${ADDRESS_PARTS.join(', ')}) must be strings` };
  if (typeof v.country !== 'string' || !/^[A-Za-z]{2}$/.test(v.country)) return { error: 'country must be a two-letter ISO code' };
  const address: Record<string, string> = {};
  for (const k of ADDRESS_PARTS) if (typeof v[k] === 'string' && (v[k] as string).trim()) address[k] = (v[k] as string).trim();
  return { value: { type: 'postal-address', value: { ...address, country: v.country.toUpperCase() } as PostalAddress } };
};

/** Parses and normalises a telephone number; `country` guides national numbers (default GB, as Haplo). */
export const parseTelephone = (raw: string, country = 'GB', extension?: string): Parsed => {
  const phone = parsePhoneNumberFromString(raw, country.toUpperCase() as CountryCode);
  if (!phone) return { error: 'is not a telephone number' };
  return {
    value: {
      type: 'telephone-number',
      value: {
        ...(phone.country ? { country: phone.country } : {}),
        number: phone.number,
        ...(extension ?? phone.ext ? { extension: extension ?? phone.ext } : {}),
      },
    },
  };
};

const parseTelephoneValue = (v: unknown): Parsed => {
  if (typeof v === 'string') return parseTelephone(v);
  if (!isObject(v) || typeof v.number !== 'string') return { error: 'value must be a number string or {number, country?, extension?}' };
  if (!optionalString(v, 'country') || !optionalString(v, 'extension')) return { error: 'country and extension must be strings' };
  return parseTelephone(v.number, (v.country as string | undefined) ?? 'GB', v.extension as string | undefined);
};

const parseLink = (input: Record<string, unknown>, attr: AttributeDef, ctx: ParseContext): Parsed => {
  const ref = input.ref;
  if (!isRef(ref)) return { error: 'ref must be a ref (12 characters of 0-9 and a-z)' };
  const schemaItem = ctx.schema.byRef(ref);
  const targetType = schemaItem ? undefined : ctx.linkTargets.get(ref);
  if (!schemaItem && targetType === undefined) return { error: `links to ${ref}, which does not exist` };
  if (attr.linkTypes.length > 0) {
    const allowed = targetType !== undefined && attr.linkTypes.some((t) => ctx.schema.isKindOf(targetType, t));
    if (!allowed) return { error: `must link to an object of type ${attr.linkTypes.join(' or ')}` };
  }
  return { value: { type: 'link', ref } };
};

/**
 * Turns a value in its serialised (API) shape into a stored value for `attr`, or explains why not.
 * A bare string is a `text` value. Derived fields (`readable`, link `title`, ...) are ignored.
 */
export const parseValue = (attr: AttributeDef, input: unknown, ctx: ParseContext): Parsed => {
  const given = typeof input === 'string' ? { type: 'text', value: input } : input;
  if (!isObject(given)) return { error: 'must be a value object {type, ...} or a string' };
  const type = given.type ?? attr.dataType;
  if (type !== attr.dataType) return { error: `has type ${String(type)} but ${attr.code} holds ${attr.dataType} values` };
  let qualifier: string | undefined;
  if (given.qualifier !== undefined) {
    if (typeof given.qualifier !== 'string' || !ctx.schema.qualifiers.has(given.qualifier)) {
      return { error: `qualifier ${JSON.stringify(given.qualifier)} is not a qualifier of the schema` };
    }
    qualifier = given.qualifier;
  }
  const parsed = parseByType(attr, given, ctx);
  if ('error' in parsed || qualifier === undefined) return parsed;
  return { value: { ...parsed.value, qualifier } };
};

const parseByType = (attr: AttributeDef, given: Record<string, unknown>, ctx: ParseContext): Parsed => {
  const type = attr.dataType;
  if ((TEXT_LIKE as readonly string[]).includes(type)) {
    if (typeof given.value !== 'string') return { error: 'value must be a string' };
    const problem = textChecks[type as TextLikeType](given.value);
    return problem ? { error: `value ${problem}` } : { value: { type: type as TextLikeType, value: given.value } };
  }
  switch (type) {
    case 'integer': {
      // The serialised form is a string ("3"); numbers are accepted too.
      const n = typeof given.value === 'string' && /^-?\d+$/.test(given.value.trim()) ? Number(given.value) : given.value;
      return typeof n === 'number' && Number.isSafeInteger(n) ? { value: { type, value: n } } : { error: 'value must be an integer' };
    }
    case 'number': {
      const n = typeof given.value === 'string' && given.value.trim() !== '' ? Number(given.value) : given.value;
      return typeof n === 'number' && Number.isFinite(n) ? { value: { type, value: n } } : { error: 'value must be a number' };
    }
    case 'datetime':
      return parseDatetime(given);
    case 'link':
      return parseLink(given, attr, ctx);
    case 'telephone-number':
      return parseTelephoneValue(given.value);
    case 'person-name':
      return parsePersonName(given.value);
    case 'postal-address':
      return parsePostalAddress(given.value);
    case 'json':
      return given.value === undefined ? { error: 'value is required' } : { value: { type, value: given.value } };
    case 'file': {
      const { digest, fileSize, mimeType, filename } = given;
      if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) return { error: 'digest must be 64 lower-case hexadecimal characters' };
      if (typeof fileSize !== 'number' || !Number.isSafeInteger(fileSize) || fileSize < 0) return { error: 'fileSize must be a non-negative integer' };
      if (typeof mimeType !== 'string' || typeof filename !== 'string') return { error: 'mimeType and filename must be strings' };
      return { value: { type, digest, fileSize, mimeType, filename } };
    }
    default:
      return { error: `has unsupported type ${type}` };
  }
};

/** Every ref named by link values in an input attribute map: fetched before parsing. */
export const linkRefsIn = (inputs: Readonly<Record<string, unknown>>): string[] => {
  const refs = new Set<string>();
  for (const list of Object.values(inputs)) {
    for (const v of Array.isArray(list) ? list : [list]) if (isObject(v) && isRef(v.ref)) refs.add(v.ref);
  }
  return [...refs];
};
