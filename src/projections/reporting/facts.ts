import { valueText } from '../readable.ts';
import type { AttributeValue } from '../../domain/objects/values.ts';
import type { Schema } from '../../domain/schema.ts';
import type { CollectionDef, FactSource, FactType } from '../../domain/reporting/collection.ts';
import { FACT_FUNCTIONS } from './fact-functions.ts';
import type { ObjectInfo } from './object-info.ts';

export type Lookup = (ref: string) => ObjectInfo | undefined;

/** Attribute codes a collection's facts read (through `linked` and fact functions too). */
export const attributesRead = (collection: CollectionDef): Set<string> => {
  const codes = new Set<string>();
  const walk = (s: FactSource) => {
    if ('attribute' in s) {
      codes.add(s.attribute);
      if (s.linked) walk(s.linked);
    }
    if ('function' in s) for (const a of FACT_FUNCTIONS[s.function]?.attributes ?? []) codes.add(a);
  };
  for (const f of collection.facts) walk(f.source);
  return codes;
};

/**
 * Refs of other objects a row's facts read through `linked`, along the whole chain (a fact may
 * follow a link from a linked object): the row must be recomputed when any of them changes.
 */
export const linkedTargets = (collection: CollectionDef, object: ObjectInfo, lookup: Lookup): string[] => {
  const refs = new Set<string>();
  const follow = (s: FactSource, from: ObjectInfo) => {
    if (!('attribute' in s) || !s.linked) return;
    // The first link is the one `derive` reads.
    const first = values(from, s).find((v) => v.type === 'link');
    if (!first || first.type !== 'link') return;
    refs.add(first.ref);
    const target = lookup(first.ref);
    if (target) follow(s.linked, target);
  };
  for (const f of collection.facts) follow(f.source, object);
  return [...refs];
};

/** The ref of the first link among a source's values: the one `derive` and `linkedTargets` follow. */
export const firstLinkRef = (object: ObjectInfo, s: { attribute: string; qualifier?: string }): string | undefined => {
  for (const v of object.attributes[s.attribute] ?? []) if (v.type === 'link' && (s.qualifier === undefined || v.qualifier === s.qualifier)) return v.ref;
  return undefined;
};

/** Links a source follows from the row's object (0 for a source read from the object itself). */
const linkDepth = (s: FactSource): number => ('attribute' in s && s.linked ? 1 + linkDepth(s.linked) : 0);

/**
 * The facts that read other objects, as the fold must fetch them before computing a row: the
 * `linked` chains to follow, or `walk` when something may look further (a fact function that
 * does not say how far it looks, or a chain longer than `depth` links): then every object up to
 * `depth` links away along any kept attribute is fetched, as a lookup may ask for any of them.
 */
export const lookAhead = (collection: CollectionDef, depth: number): { readonly walk: boolean; readonly chains: readonly FactSource[] } => {
  const sources = collection.facts.map((f) => f.source);
  const walk = sources.some((s) => ('function' in s && (FACT_FUNCTIONS[s.function]?.follows ?? depth) > 0) || linkDepth(s) > depth);
  return { walk, chains: sources.filter((s) => linkDepth(s) > 0) };
};

const NONE: readonly AttributeValue[] = [];

/** A source's values on an object; the object's own list when no qualifier narrows it (a fold reads these for every fact of every row it computes). */
const values = (object: ObjectInfo, s: { attribute: string; qualifier?: string }): readonly AttributeValue[] => {
  const all = object.attributes[s.attribute] ?? NONE;
  return s.qualifier === undefined ? all : all.filter((v) => v.qualifier === s.qualifier);
};

/** A raw value, before normalisation to the fact type. */
const derive = (source: FactSource, object: ObjectInfo, lookup: Lookup, schema: Schema): unknown => {
  if ('title' in source) return object.title;
  if ('objectType' in source) return object.objectType;
  if ('labels' in source) return object.labels.map((code) => schema.labels.get(code)?.ref ?? code);
  if ('deleted' in source) return object.deleted;
  if ('constant' in source) return source.constant;
  if ('function' in source) return FACT_FUNCTIONS[source.function]?.compute(object, lookup) ?? null;
  const list = values(object, source);
  if (source.exists) return list.length > 0;
  if (source.count) return list.length;
  if (source.linked) {
    const first = list.find((v) => v.type === 'link');
    const target = first && first.type === 'link' ? lookup(first.ref) : undefined;
    return target ? derive(source.linked, target, lookup, schema) : null;
  }
  // A datetime stays whole unless a part is asked for: end-date facts need its (exclusive) end.
  const pick = (v: AttributeValue) => (v.type === 'datetime' && source.part ? (source.part === 'end' ? v.end : v.start) : v);
  return source.all ? list.map(pick) : list[0] === undefined ? null : pick(list[0]);
};

/** An attribute value among raw values, if it is one. */
const attributeValue = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { type?: unknown }).type === 'string' ? (v as Record<string, unknown>) : undefined;

const asNumber = (v: unknown): number | null => {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  const a = attributeValue(v);
  if (a && (a.type === 'integer' || a.type === 'number')) return a.value as number;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
};

const asInstant = (v: unknown): Date | null => {
  const a = attributeValue(v);
  const s = typeof v === 'string' ? v : a?.type === 'datetime' ? (a.start as string) : undefined;
  if (s === undefined) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
};

/**
 * A date fact: the day at midnight UTC in full ISO form, as Haplo writes a date column (JSON of a
 * JavaScript Date); facts compare by day because the time is always midnight.
 */
const dayOf = (d: Date | null): string | null => (d ? `${d.toISOString().slice(0, 10)}T00:00:00.000Z` : null);

const asRef = (v: unknown): string | null => (typeof v === 'string' ? v : attributeValue(v)?.type === 'link' ? (attributeValue(v)!.ref as string) : null);

const INT_RANGE: Partial<Record<FactType, [number, number]>> = { smallint: [-32768, 32767], int: [-2147483648, 2147483647] };

/**
 * A raw value in the JSON form of its fact type. Equal facts have equal JSON, so comparing the
 * JSON of two rows applies each type's comparison rule (dates by day, datetimes by ms, ...).
 */
export const normalise = (type: FactType, raw: unknown): unknown => {
  if (raw === null || raw === undefined) return null;
  switch (type) {
    case 'ref':
      return asRef(Array.isArray(raw) ? raw[0] : raw);
    case 'refList':
      return (Array.isArray(raw) ? raw : [raw]).map(asRef).filter((r): r is string => r !== null);
    case 'labelList':
      return Array.isArray(raw) ? [...raw.map(String)].sort() : [String(raw)];
    case 'text':
      if (typeof raw === 'string') return raw;
      if (attributeValue(raw)) return valueText(raw as AttributeValue);
      return Array.isArray(raw) ? raw.map((r) => normalise('text', r)).join(', ') : String(raw);
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      return Array.isArray(raw) ? raw.length > 0 : Boolean(asNumber(raw) ?? raw);
    case 'smallint':
    case 'int':
    case 'bigint': {
      const n = asNumber(raw);
      if (n === null || !Number.isInteger(n)) return n === null ? null : Math.trunc(n);
      const range = INT_RANGE[type];
      return range && (n < range[0] || n > range[1]) ? null : n;
    }
    case 'float':
    case 'numeric':
      return asNumber(raw);
    case 'date':
      return dayOf(asInstant(raw));
    case 'end-date': {
      // The end of a datetime range is exclusive; the fact is the last day it includes.
      const a = attributeValue(raw);
      return dayOf(a?.type === 'datetime' ? new Date(new Date(a.end as string).getTime() - 1) : asInstant(raw));
    }
    case 'datetime': {
      const d = asInstant(raw);
      return d ? d.toISOString() : null;
    }
    case 'time': {
      const d = asInstant(raw);
      return d ? d.toISOString().slice(11, 19) : null;
    }
    case 'json':
      return attributeValue(raw)?.type === 'json' ? attributeValue(raw)!.value : raw;
  }
};

/** The row's values: the object's ref, then every declared fact in order. */
export const rowValues = (collection: CollectionDef, object: ObjectInfo, lookup: Lookup, schema: Schema): unknown[] => [
  object.id,
  ...collection.facts.map((f) => normalise(f.type, derive(f.source, object, lookup, schema))),
];
