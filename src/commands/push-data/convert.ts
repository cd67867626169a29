/**
 * Value conversion for value-setting instructions (haplo-behaviour.md §3.7, §3.8).
 *
 * A converter applies, in this order (as Haplo's test_filter_apply_order):
 *   1. `mapInputValue` (with `mapInputValueDefault`),
 *   2. the instruction's `filters`, in array order,
 *   3. the conversion for the data type of the Name.
 * It resolves to `undefined` for "set nothing". Run-time problems are reported with `ctx.error` and
 * never abort the record; an unknown behaviour code in a `using: "behaviour"` mapping throws (the
 * engine turns that into result `error`, as Haplo).
 *
 * Messages name the value's source as Haplo does (`sourceDetails`): `input field <source>` for
 * `field`, `structured input field <structured>` for `field-structured`, and
 * `set value <destination>/<name>` for `set-value`; e.g. `Invalid integer for input field age: x`.
 *
 * `makeConverter` returns `{ error }` when the instruction cannot work and must be disabled
 * (`Date format not specified for <source>`, an unsupported date format, unknown filters). Problems
 * that Haplo reports when the batch is prepared without disabling the instruction (ref mapping
 * set-up: `Unknown mapping: <name>`, `Mapping <n> does not specify types`, `Mapping <n> refers to
 * unknown type <code>`, `No types for mapping <n>`) are reported through `ctx.error` during
 * `makeConverter`, and the Name then accepts only Ref values, as without a mapping.
 *
 * `set-value`: "the value goes through the normal conversion; the converted result is computed once
 * and then reused". Build the converter once and wrap it with `convertConstant(converter, value)`.
 *
 * What each type yields (the engine turns these into stored values):
 * - text-like types -> string;  boolean -> boolean;  integer, number -> number;
 * - datetime -> `{type:'datetime', start, end, precision, specifiedAsRange:false}`;
 * - ref, object-type -> RefValue;  json, file -> the object;
 * - telephone-number, person-name, postal-address -> `{type, value}` as in src/objects/values.ts;
 * - any other (dictionary) type -> the value unchanged.
 */
import { parseTelephone } from '../parse-value.ts';
import type { PersonName, PostalAddress } from '../../domain/objects/values.ts';
import type { Schema } from '../../domain/schema.ts';
import { RefValue, type ImportLookups, type Instruction, type RefMapping } from '../../domain/control-file.ts';
import { compileFormat } from './date-format.ts';
import type { NameDef } from '../../domain/model.ts';

export interface ConvertContext {
  readonly schema: Schema;
  readonly lookups: ImportLookups;
  readonly mappings: Readonly<Record<string, RefMapping>> | undefined;
  /** Filter instances of this batch, by name. */
  readonly filters: ReadonlyMap<string, (value: unknown) => unknown | Promise<unknown>>;
  /** Reports an error for the current record (the engine appends " (record N)"). */
  readonly error: (message: string) => void;
  /** Per-batch cache (mapping look-ups are cached here). */
  readonly cache: Map<string, unknown>;
}

export type ValueConverter = (input: unknown) => Promise<unknown>;

/** Objects loaded for a title mapping, as Haplo's MAX_OBJECT_TITLE_LOOKUP. */
export const MAX_TITLE_MAPPING_OBJECTS = 4096;

type TypeConverter = (value: unknown) => unknown | Promise<unknown>;

const TEXT_SEPARATORS: Readonly<Record<string, string>> = {
  'text-paragraph': '\n\n',
  'text-multiline': '\n',
};

const NAME_PARTS = ['title', 'first', 'middle', 'last', 'suffix'] as const;
const ADDRESS_PARTS = ['street1', 'street2', 'city', 'county', 'postcode'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const VALID_URL = /^[a-zA-Z+.-]+:/;

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

const own = <T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

/** How a value reads in a message: as Haplo's string concatenation. */
const show = (v: unknown): string => String(v);

/** The key a value has in `mapInputValue` or a mapping's `values` (JavaScript's property-key rule). */
const keyOf = (v: unknown): string | undefined =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof RefValue ? String(v) : undefined;

/** How messages name where a value came from, as Haplo's `sourceDetailsForErrors`. */
export const sourceDetails = (instruction: Instruction): string => {
  switch (instruction.action ?? 'field') {
    case 'field-structured':
      return `structured input field ${String(instruction.structured)}`;
    case 'set-value':
      return `set value ${String(instruction.destination)}/${String(instruction.name)}`;
    case 'field':
      return `input field ${String(instruction.source)}`;
    default:
      return `name ${String(instruction.name)}`;
  }
};

// ---------------------------------------------------------------------------------------------
// Text

/**
 * Text-paragraph and the like: any truthy string, number, boolean or Ref as text. Arrays of text
 * become paragraphs (separated by a blank line) or lines (by a newline); other objects give nothing.
 */
const typedText = (type: string): TypeConverter => (value) => {
  if (!value) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof RefValue) return String(value);
  const separator = TEXT_SEPARATORS[type];
  if (Array.isArray(value) && separator !== undefined) {
    const parts = value.filter((v) => typeof v === 'string' || typeof v === 'number').map(String).filter((s) => s !== '');
    return parts.length ? parts.join(separator) : undefined;
  }
  return undefined; // plain objects would only read "[object Object]"
};

// ---------------------------------------------------------------------------------------------
// Ref mappings (§3.8)

/** The RefValue-only conversion of `ref` Names without (a usable) mapping. */
const refOnly: TypeConverter = (value) => (value instanceof RefValue ? value : undefined);

type TitleLookup = { readonly kind: 'ok'; readonly refs: ReadonlyMap<string, string> } | { readonly kind: 'too-many' };

const behaviourMapping = (mappingName: string, mapping: RefMapping, source: string, ctx: ConvertContext): TypeConverter => async (value) => {
  if (value === undefined) return undefined;
  const key = keyOf(value);
  const code = key === undefined ? undefined : own(mapping.values, key);
  if (typeof code !== 'string') {
    ctx.error(`Value in input data cannot be mapped for ${source}: ${show(value)}`);
    return undefined;
  }
  const cacheKey = `ref-mapping:behaviour:${code}`;
  const cached = ctx.cache.get(cacheKey);
  if (cached instanceof RefValue) return cached;
  const ref = await ctx.lookups.refByBehaviour(code);
  if (ref === undefined) throw new Error(`Mapping ${mappingName} maps ${show(value)} to unknown behaviour ${code}`);
  const refValue = new RefValue(ref);
  ctx.cache.set(cacheKey, refValue);
  return refValue;
};

const titleMapping = (mappingName: string, mapping: RefMapping, types: readonly string[], source: string, ctx: ConvertContext): TypeConverter => {
  const cacheKey = `ref-mapping:title:${mappingName}`;
  /** Loads the titles once per batch (the promise is cached, so concurrent records share it). */
  const lookup = (): Promise<TitleLookup> => {
    let p = ctx.cache.get(cacheKey) as Promise<TitleLookup> | undefined;
    if (!p) {
      p = ctx.lookups.titlesOfTypes(types, MAX_TITLE_MAPPING_OBJECTS).then((found): TitleLookup => {
        if (found === 'too-many') {
          ctx.error(`Mapping ${mappingName} uses title mapping, but too many objects in store to use this method.`);
          return { kind: 'too-many' };
        }
        const refs = new Map<string, string>();
        for (const o of found) for (const t of o.titles) refs.set(t, o.ref);
        return { kind: 'ok', refs };
      });
      p.catch(() => ctx.cache.delete(cacheKey)); // a failed look-up is retried by the next record
      ctx.cache.set(cacheKey, p);
    }
    return p;
  };
  return async (value) => {
    const titles = await lookup();
    if (titles.kind === 'too-many') return refOnly(value); // as Haplo: the mapping is not set up
    if (value === undefined) return undefined;
    const key = keyOf(value);
    const title = key === undefined ? undefined : own(mapping.values, key);
    if (typeof title !== 'string') return undefined; // inputs not in `values` are dropped silently
    const ref = titles.refs.get(title);
    if (ref === undefined) {
      ctx.error(`Value in input data cannot be mapped for ${source}: ${show(value)}`);
      return undefined;
    }
    return new RefValue(ref);
  };
};

const refConverter = (instruction: Instruction, source: string, ctx: ConvertContext): TypeConverter => {
  if (instruction.refMapping === undefined) return refOnly;
  const mappingName = String(instruction.refMapping);
  const mapping = own(ctx.mappings, mappingName);
  if (!mapping) {
    ctx.error(`Unknown mapping: ${mappingName}`);
    return refOnly;
  }
  if (mapping.using === 'behaviour') return behaviourMapping(mappingName, mapping, source, ctx);
  if (mapping.using === 'title') {
    if (mapping.types === undefined) {
      ctx.error(`Mapping ${mappingName} does not specify types`);
      return refOnly;
    }
    const types: string[] = [];
    for (const code of Array.isArray(mapping.types) ? mapping.types : []) {
      if (typeof code === 'string' && ctx.schema.types.has(code)) types.push(code);
      else ctx.error(`Mapping ${mappingName} refers to unknown type ${String(code)}`);
    }
    if (types.length === 0) {
      ctx.error(`No types for mapping ${mappingName}`);
      return refOnly;
    }
    return titleMapping(mappingName, mapping, types, source, ctx);
  }
  // Haplo silently falls back to Ref values only; say why the mapping does nothing.
  ctx.error(`Mapping ${mappingName} must specify "using": "behaviour" or "title"`);
  return refOnly;
};

// ---------------------------------------------------------------------------------------------
// Structured values

const personName: TypeConverter = (value) => {
  if (!isPlainObject(value) || typeof value.last !== 'string' || !value.last) return undefined;
  const parts: Record<string, string> = {};
  for (const k of NAME_PARTS) {
    const v = value[k];
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') parts[k] = String(v);
  }
  const name: PersonName = { ...parts, culture: 'western' };
  return { type: 'person-name', value: name };
};

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const isCountryCode = (code: string): boolean => {
  if (!/^[A-Z]{2}$/.test(code) || code === 'ZZ') return false;
  try {
    return regionNames.of(code) !== code;
  } catch {
    return false;
  }
};

const postalAddress = (ctx: ConvertContext): TypeConverter => (value) => {
  if (!isPlainObject(value)) return undefined;
  if (typeof value.country !== 'string' || value.country.length !== 2) {
    ctx.error(`Missing or invalid country code in postal address, must be two letter ISO code: ${JSON.stringify(value)}`);
    return undefined;
  }
  const invalid = (reason: string) => {
    ctx.error(`Invalid postal address: ${JSON.stringify(value)} (${reason})`);
    return undefined;
  };
  const country = value.country.toUpperCase();
  if (!isCountryCode(country)) return invalid(`unknown country code ${value.country}`);
  const parts: Record<string, string> = {};
  for (const k of ADDRESS_PARTS) {
    const v = value[k];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' && typeof v !== 'number') return invalid(`${k} must be text`);
    parts[k] = String(v);
  }
  const address: PostalAddress = { ...parts, country };
  return { type: 'postal-address', value: address };
};

// ---------------------------------------------------------------------------------------------
// The conversion of each data type

const typeConverter = (instruction: Instruction, name: NameDef, source: string, ctx: ConvertContext): TypeConverter | { error: string } => {
  const type = name.type || 'text';
  switch (type) {
    case 'text':
      return (v) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined);

    case 'text-paragraph':
    case 'text-multiline':
    case 'configuration-name':
    case 'isbn':
      return typedText(type);

    case 'email-address':
      return (v) => {
        if (typeof v !== 'string') return undefined;
        if (v.indexOf('@') > 0) return v;
        ctx.error(`Invalid email address for ${source}: ${v}`);
        return undefined;
      };

    case 'url':
      return (v) => {
        if (typeof v !== 'string') return undefined;
        if (VALID_URL.test(v)) return v;
        ctx.error(`Invalid URL for ${source}: ${v}`);
        return undefined;
      };

    case 'uuid':
      return (v) => {
        if (typeof v !== 'string') return undefined;
        const s = v.trim();
        if (UUID.test(s)) return s.toLowerCase();
        ctx.error(`Invalid UUID for ${source}: ${v}`);
        return undefined;
      };

    case 'postcode':
      return (v) => {
        const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
        return s === '' ? undefined : s;
      };

    case 'boolean': {
      const trueValue = instruction.trueValue ?? 'true';
      const falseValue = instruction.falseValue ?? 'false';
      return (v) => {
        if (typeof v === 'boolean') return v;
        if (v === trueValue) return true;
        if (v === falseValue) return false;
        ctx.error(`Invalid boolean value for ${source}: ${show(v)}`);
        return undefined;
      };
    }

    case 'integer':
      return (v) => {
        const n = typeof v === 'number' ? v : typeof v === 'string' ? parseInt(v, 10) : NaN;
        // The value must read back exactly: "12" yes; "012", "12.5", "12abc" and 12.5 no.
        if (Number.isSafeInteger(n) && String(n) === String(v)) return n;
        ctx.error(`Invalid integer for ${source}: ${show(v)}`);
        return undefined;
      };

    case 'number':
      return (v) => {
        const n = typeof v === 'number' ? v : typeof v === 'string' ? parseFloat(v) : NaN;
        if (Number.isFinite(n)) return n;
        ctx.error(`Invalid number for ${source}: ${show(v)}`);
        return undefined;
      };

    case 'datetime': {
      if (typeof instruction.dateFormat !== 'string') return { error: `Date format not specified for ${source}` };
      const format = compileFormat(instruction.dateFormat);
      if ('error' in format) return { error: `Unsupported date format for ${source}: ${JSON.stringify(instruction.dateFormat)} (${format.error})` };
      return (v) => {
        if (typeof v !== 'string') return undefined;
        const parsed = format.parse(v);
        if (!parsed) {
          ctx.error(`Invalid date value for ${source}: ${v}`);
          return undefined;
        }
        const start = new Date(parsed.date.getTime());
        // Precision m starts on a whole minute, as every stored datetime value (parse-value.ts).
        if (parsed.hasTime) start.setUTCSeconds(0, 0);
        const end = new Date(start.getTime());
        if (parsed.hasTime) end.setUTCMinutes(end.getUTCMinutes() + 1);
        else end.setUTCDate(end.getUTCDate() + 1);
        return { type: 'datetime', start: start.toISOString(), end: end.toISOString(), precision: parsed.hasTime ? 'm' : 'd', specifiedAsRange: false };
      };
    }

    case 'ref':
    case 'link':
      return refConverter(instruction, source, ctx);

    case 'object-type':
      return (v) => {
        const ref = typeof v === 'string' ? ctx.schema.types.get(v)?.ref : undefined;
        return ref === undefined ? undefined : new RefValue(ref);
      };

    case 'json':
      return (v) => (Array.isArray(v) || isPlainObject(v) ? v : undefined);

    case 'telephone-number': {
      const country = instruction.country || 'GB';
      return (v) => {
        if (typeof v !== 'string') return undefined;
        const parsed = parseTelephone(v, country);
        if ('value' in parsed) return parsed.value;
        ctx.error(`Invalid telephone number for ${source}: ${v}`);
        return undefined;
      };
    }

    case 'person-name':
      return personName;

    case 'postal-address':
      return postalAddress(ctx);

    case 'file':
      return (v) => (isPlainObject(v) ? v : undefined);

    default:
      return (v) => v;
  }
};

// ---------------------------------------------------------------------------------------------

/** A converter for one instruction and Name, or the build-time error that disables the instruction. */
export const makeConverter = (instruction: Instruction, name: NameDef, ctx: ConvertContext): ValueConverter | { error: string } => {
  const source = sourceDetails(instruction);

  const filters: ((value: unknown) => unknown | Promise<unknown>)[] = [];
  if (instruction.filters !== undefined) {
    if (!Array.isArray(instruction.filters)) return { error: "'filters' property is not an array" };
    for (const f of instruction.filters as unknown[]) {
      const fn = typeof f === 'string' ? ctx.filters.get(f) : undefined;
      if (!fn) return { error: `Filter ${String(f)} is not available.` };
      filters.push(fn);
    }
  }

  const convertType = typeConverter(instruction, name, source, ctx);
  if ('error' in convertType) return convertType;

  const map = instruction.mapInputValue;
  const haveDefault = Object.hasOwn(instruction, 'mapInputValueDefault');
  const mapInput = (value: unknown): unknown => {
    if (map === undefined || map === null || typeof map !== 'object') return value;
    const key = keyOf(value) ?? (value === undefined || value === null ? String(value) : undefined);
    if (key !== undefined && Object.hasOwn(map, key)) return map[key];
    return haveDefault ? instruction.mapInputValueDefault : value;
  };

  return async (input) => {
    let value = mapInput(input);
    for (const filter of filters) value = await filter(value);
    // "Nothing" stays nothing, whatever the type (a filter or mapping may give undefined or null).
    if (value === undefined || value === null) return undefined;
    return convertType(value);
  };
};

/**
 * For `set-value`: the constant is converted by the first call only and the result reused, so its
 * errors are reported once (for the first record). A conversion that throws is retried next time.
 */
export const convertConstant = (converter: ValueConverter, value: unknown): (() => Promise<unknown>) => {
  let result: Promise<unknown> | undefined;
  return () => {
    if (!result) {
      const p = converter(value);
      p.catch(() => {
        if (result === p) result = undefined;
      });
      result = p;
    }
    return result;
  };
};
