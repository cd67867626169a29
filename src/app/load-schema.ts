/**
 * Loads and validates the store's schema (`config/schema.json` by default).
 *
 * Format (JSON; every code is `namespace:kind:name`, lower-case letters, digits and hyphens, with
 * kind `type`, `attribute`, `qualifier` or `label` to match its section):
 *
 *   { "types": [ { "code", "name", "parent"?: type code, "annotations"?: [codes], "behaviour"?: code,
 *                  "attributes": [attribute codes, own ones only, in display order] } ],
 *     "attributes": [ { "code", "name", "dataType": one of VALUE_TYPES or "attribute-group",
 *                       "linkTypes"?: [type codes], only for dataType "link"; absent or [] = any type,
 *                       "groupAttributes"?: [attribute codes], required for (and only allowed with)
 *                         dataType "attribute-group": its members, existing attributes that are not groups } ],
 *     "qualifiers": [ { "code", "name" } ],
 *     "labels": [ { "code", "name" } ] }
 *
 * A type's resolved `attributes` are its parent's (resolved recursively) followed by its own, without
 * duplicates; `rootCode` is the root of its parent chain. `dc:attribute:title` and `dc:attribute:type`
 * (a link) must be defined; `svc:attribute:parent` is optional but must be a link when defined.
 *
 * Every problem is reported at once in one SchemaError, each prefixed with its path in the document
 * (`types[3].parent: unknown type "svc:type:nope"`). Values are quoted only when short strings, so
 * payloads are never echoed.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { encodeRef } from '../domain/objects/ref.ts';
import {
  ATTRIBUTE_GROUP,
  PARENT,
  TITLE,
  TYPE,
  VALUE_TYPES,
  type AttributeDataType,
  type AttributeDef,
  type LabelDef,
  type QualifierDef,
  type Schema,
  type TypeDef,
} from '../domain/schema.ts';

/** A stable ref for a schema item, derived from its API code. */
export const refForCode = (code: string): string => encodeRef(createHash('sha256').update(`schema:${code}`).digest());

export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  constructor(
    readonly problems: readonly string[],
    readonly source = 'schema',
  ) {
    super(`Invalid schema (${source}), ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

export const CODE_PATTERN = /^[a-z0-9-]+:[a-z0-9-]+:[a-z0-9-]+(:[a-z0-9-]+)*$/;

// ---------------------------------------------------------------------------------------------
// Describing values without echoing them

const describe = (u: unknown): string => {
  if (u === null) return 'null';
  if (Array.isArray(u)) return 'an array';
  if (typeof u === 'string') return u.length <= 60 ? JSON.stringify(u) : `a string of ${u.length} characters`;
  if (typeof u === 'number' || typeof u === 'boolean') return String(u);
  return typeof u === 'object' ? 'an object' : typeof u;
};

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u);

// ---------------------------------------------------------------------------------------------
// Codecs

/** A string codec whose failures read "must be <expected> (got …)" or "is required". */
const str = <A extends string>(expected: string, test: (s: string) => s is A): t.Type<A, A, unknown> =>
  new t.Type<A, A, unknown>(
    expected,
    (u): u is A => typeof u === 'string' && test(u),
    (u, c) => {
      if (u === undefined) return t.failure(u, c, 'is required');
      if (typeof u === 'string' && test(u)) return t.success(u);
      return t.failure(u, c, `must be ${expected} (got ${describe(u)})`);
    },
    t.identity,
  );

const nonEmpty = str('a non-empty string', (s): s is string => s.trim() !== '');

const code = (kind?: string) =>
  str(
    `a code of the form namespace:${kind ?? 'kind'}:name (lower-case letters, digits and hyphens)`,
    (s): s is string => CODE_PATTERN.test(s) && (kind === undefined || s.split(':')[1] === kind),
  );

const DATA_TYPES: readonly string[] = [...VALUE_TYPES, ATTRIBUTE_GROUP];
const dataType = str(`one of ${DATA_TYPES.join(', ')}`, (s): s is AttributeDataType => DATA_TYPES.includes(s));

const list = <C extends t.Mixed>(item: C) => t.array(item, 'an array');

/** An object codec: required props, optional props, and no other keys. */
const record = <R extends t.Props, O extends t.Props>(required: R, optional: O) => ({
  codec: t.intersection([t.type(required, 'an object'), t.partial(optional, 'an object')]),
  keys: [...Object.keys(required), ...Object.keys(optional)],
});

const ROOT = record({ types: list(t.unknown), attributes: list(t.unknown), qualifiers: list(t.unknown), labels: list(t.unknown) }, {});
const TYPE_ITEM = record(
  { code: code('type'), name: nonEmpty, attributes: list(code('attribute')) },
  { parent: code('type'), annotations: list(code()), behaviour: code() },
);
const ATTRIBUTE_ITEM = record(
  { code: code('attribute'), name: nonEmpty, dataType },
  { linkTypes: list(code('type')), groupAttributes: list(code('attribute')) },
);
const QUALIFIER_ITEM = record({ code: code('qualifier'), name: nonEmpty }, {});
const LABEL_ITEM = record({ code: code('label'), name: nonEmpty }, {});

type TypeItem = t.TypeOf<typeof TYPE_ITEM.codec>;
type AttributeItem = t.TypeOf<typeof ATTRIBUTE_ITEM.codec>;
type NamedItem = t.TypeOf<typeof QUALIFIER_ITEM.codec>;

/** `base` followed by the io-ts context as `.key` / `[index]`, skipping intersection members. */
const pathOf = (base: string, context: t.Context): string => {
  let path = base;
  for (let i = 1; i < context.length; i++) {
    const parentTag = (context[i - 1]!.type as { _tag?: string })._tag;
    const key = context[i]!.key;
    if (parentTag === 'ArrayType') path += `[${key}]`;
    else if (parentTag === 'InterfaceType' || parentTag === 'PartialType') path += path === '' ? key : `.${key}`;
  }
  return path === '' ? '(root)' : path;
};

const report = (base: string, errors: t.Errors): string[] =>
  errors.map((e) => {
    const last = e.context[e.context.length - 1];
    const message =
      e.message ?? (e.value === undefined ? 'is required' : `must be ${last?.type.name ?? 'valid'} (got ${describe(e.value)})`);
    return `${pathOf(base, e.context)}: ${message}`;
  });

/** Decodes one object against `spec`, adding every structural problem (prefixed by `base`) to `problems`. */
const decodeItem = <C extends t.Mixed>(
  spec: { codec: C; keys: string[] },
  value: unknown,
  base: string,
  problems: string[],
): t.TypeOf<C> | undefined => {
  const at = base === '' ? '(root)' : base;
  if (!isRecord(value)) {
    problems.push(`${at}: must be an object (got ${describe(value)})`);
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!spec.keys.includes(key)) problems.push(`${at}: unknown property ${describe(key)}`);
  }
  const result = spec.codec.decode(value);
  if (isLeft(result)) {
    problems.push(...new Set(report(base, result.left)));
    return undefined;
  }
  return result.right;
};

// ---------------------------------------------------------------------------------------------
// Parsing

interface Section<A> {
  /** Decoded items with their index in the section (invalid items are left out). */
  readonly items: { readonly index: number; readonly item: A }[];
  /** Every string code declared in the section, valid item or not, to the index of its first use. */
  readonly declared: Map<string, number>;
}

const section = <C extends t.Mixed>(
  name: string,
  spec: { codec: C; keys: string[] },
  raw: unknown,
  problems: string[],
): Section<t.TypeOf<C>> => {
  const out: Section<t.TypeOf<C>> = { items: [], declared: new Map() };
  if (!Array.isArray(raw)) return out;
  raw.forEach((value: unknown, index) => {
    const item = decodeItem(spec, value, `${name}[${index}]`, problems);
    if (item !== undefined) out.items.push({ index, item });
    const c = isRecord(value) ? value.code : undefined;
    if (typeof c !== 'string') return;
    const first = out.declared.get(c);
    if (first === undefined) out.declared.set(c, index);
    else problems.push(`${name}[${index}].code: duplicate code ${describe(c)} (first defined at ${name}[${first}])`);
  });
  return out;
};

export const parseSchema = (json: unknown, source = 'schema'): Schema => {
  const problems: string[] = [];
  decodeItem(ROOT, json, '', problems);
  const rawRoot = isRecord(json) ? json : {};

  const types = section('types', TYPE_ITEM, rawRoot.types, problems);
  const attributes = section('attributes', ATTRIBUTE_ITEM, rawRoot.attributes, problems);
  const qualifiers = section('qualifiers', QUALIFIER_ITEM, rawRoot.qualifiers, problems);
  const labels = section('labels', LABEL_ITEM, rawRoot.labels, problems);

  // References between items.
  for (const { index, item } of types.items) {
    if (item.parent !== undefined && !types.declared.has(item.parent)) {
      problems.push(`types[${index}].parent: unknown type ${describe(item.parent)}`);
    }
    const seen = new Set<string>();
    item.attributes.forEach((a, i) => {
      if (!attributes.declared.has(a)) problems.push(`types[${index}].attributes[${i}]: unknown attribute ${describe(a)}`);
      else if (seen.has(a)) problems.push(`types[${index}].attributes[${i}]: duplicate attribute ${describe(a)}`);
      seen.add(a);
    });
  }
  const attributeItem = new Map(attributes.items.map(({ item }) => [item.code, item] as const));
  for (const { index, item } of attributes.items) {
    if (item.dataType === ATTRIBUTE_GROUP && item.groupAttributes === undefined) {
      problems.push(`attributes[${index}].groupAttributes: is required when dataType is "attribute-group"`);
    }
    if (item.groupAttributes === undefined) continue;
    if (item.dataType !== ATTRIBUTE_GROUP) {
      problems.push(`attributes[${index}].groupAttributes: only allowed when dataType is "attribute-group" (dataType is ${describe(item.dataType)})`);
      continue;
    }
    if (item.groupAttributes.length === 0) problems.push(`attributes[${index}].groupAttributes: must not be empty`);
    const seen = new Set<string>();
    item.groupAttributes.forEach((member, i) => {
      const at = `attributes[${index}].groupAttributes[${i}]`;
      if (!attributes.declared.has(member)) problems.push(`${at}: unknown attribute ${describe(member)}`);
      else if (seen.has(member)) problems.push(`${at}: duplicate attribute ${describe(member)}`);
      else if (attributeItem.get(member)?.dataType === ATTRIBUTE_GROUP) problems.push(`${at}: ${describe(member)} is an attribute group; groups cannot be nested`);
      else if (member === TITLE || member === TYPE) problems.push(`${at}: ${describe(member)} cannot be a member of an attribute group`);
      seen.add(member);
    });
  }
  for (const { index, item } of attributes.items) {
    if (item.linkTypes === undefined) continue;
    if (item.dataType !== 'link') {
      problems.push(`attributes[${index}].linkTypes: only allowed when dataType is "link" (dataType is ${describe(item.dataType)})`);
      continue;
    }
    const seen = new Set<string>();
    item.linkTypes.forEach((lt, i) => {
      if (!types.declared.has(lt)) problems.push(`attributes[${index}].linkTypes[${i}]: unknown type ${describe(lt)}`);
      else if (seen.has(lt)) problems.push(`attributes[${index}].linkTypes[${i}]: duplicate type ${describe(lt)}`);
      seen.add(lt);
    });
  }

  // Attributes the platform relies on (not checked when the section itself is missing or malformed).
  if (Array.isArray(rawRoot.attributes)) for (const [required, mustLink] of [[TITLE, false], [TYPE, true], [PARENT, true]] as const) {
    const index = attributes.declared.get(required);
    if (index === undefined) {
      if (required !== PARENT) problems.push(`attributes: required attribute ${describe(required)} is not defined`);
      continue;
    }
    const def = attributes.items.find((a) => a.index === index)?.item;
    if (mustLink && def !== undefined && def.dataType !== 'link') {
      problems.push(`attributes[${index}].dataType: ${describe(required)} must be "link" (got ${describe(def.dataType)})`);
    }
  }

  // Cycles in parents: each reported once, at its first member in schema order.
  const parentOf = new Map(types.items.map(({ item }) => [item.code, item.parent] as const));
  const inReportedCycle = new Set<string>();
  for (const { index, item } of types.items) {
    if (inReportedCycle.has(item.code)) continue;
    const chain = [item.code];
    const visited = new Set(chain);
    for (let p = parentOf.get(item.code); p !== undefined; p = parentOf.get(p)) {
      if (p === item.code) {
        chain.forEach((c) => inReportedCycle.add(c));
        problems.push(`types[${index}].parent: cycle in parents: ${[...chain, p].join(' -> ')}`);
        break;
      }
      if (visited.has(p)) break; // leads into a cycle that does not include this type
      visited.add(p);
      chain.push(p);
    }
  }

  if (problems.length > 0) throw new SchemaError(problems, source);
  return build(
    types.items.map((i) => i.item),
    attributes.items.map((i) => i.item),
    qualifiers.items.map((i) => i.item),
    labels.items.map((i) => i.item),
    source,
  );
};

// ---------------------------------------------------------------------------------------------
// Building the Schema (only from a valid document)

const build = (
  typeItems: readonly TypeItem[],
  attributeItems: readonly AttributeItem[],
  qualifierItems: readonly NamedItem[],
  labelItems: readonly NamedItem[],
  source: string,
): Schema => {
  const itemByCode = new Map(typeItems.map((item) => [item.code, item] as const));
  const types = new Map<string, TypeDef>();
  const resolve = (code: string): TypeDef => {
    const done = types.get(code);
    if (done) return done;
    const item = itemByCode.get(code)!;
    const parent = item.parent === undefined ? undefined : resolve(item.parent);
    const def: TypeDef = Object.freeze({
      code: item.code,
      name: item.name,
      ref: refForCode(item.code),
      ...(parent ? { parent: parent.code } : {}),
      rootCode: parent ? parent.rootCode : item.code,
      annotations: Object.freeze([...(item.annotations ?? [])]),
      ...(item.behaviour !== undefined ? { behaviour: item.behaviour } : {}),
      attributes: Object.freeze([...new Set([...(parent?.attributes ?? []), ...item.attributes])]),
    });
    types.set(code, def);
    return def;
  };
  typeItems.forEach((item) => resolve(item.code));
  // Re-insert in schema order (resolving a subtype first may have inserted its parent early).
  const orderedTypes = new Map(typeItems.map((item) => [item.code, types.get(item.code)!] as const));

  const attributes = new Map<string, AttributeDef>(
    attributeItems.map((a) => [
      a.code,
      Object.freeze({
        code: a.code,
        name: a.name,
        ref: refForCode(a.code),
        dataType: a.dataType,
        linkTypes: Object.freeze([...(a.linkTypes ?? [])]),
        ...(a.groupAttributes !== undefined ? { groupAttributes: Object.freeze([...a.groupAttributes]) } : {}),
      }),
    ]),
  );
  const groupsOfType = new Map<string, readonly AttributeDef[]>(
    [...orderedTypes.values()].map((type) => [
      type.code,
      Object.freeze(type.attributes.map((c) => attributes.get(c)!).filter((a) => a.dataType === ATTRIBUTE_GROUP)),
    ]),
  );
  const named = (items: readonly NamedItem[]) =>
    new Map(items.map((i) => [i.code, Object.freeze({ code: i.code, name: i.name, ref: refForCode(i.code) })] as const));
  const qualifiers: Map<string, QualifierDef> = named(qualifierItems);
  const labels: Map<string, LabelDef> = named(labelItems);

  const refs = new Map<string, TypeDef | AttributeDef | QualifierDef | LabelDef>();
  const clashes: string[] = [];
  for (const item of [...orderedTypes.values(), ...attributes.values(), ...qualifiers.values(), ...labels.values()]) {
    const other = refs.get(item.ref);
    if (other) clashes.push(`${item.code}: ref ${item.ref} clashes with the ref of ${other.code}; rename one of them`);
    else refs.set(item.ref, item);
  }
  if (clashes.length > 0) throw new SchemaError(clashes, source);

  const ancestors = new Map<string, ReadonlySet<string>>();
  for (const def of orderedTypes.values()) {
    const chain = new Set<string>();
    for (let d: TypeDef | undefined = def; d; d = d.parent === undefined ? undefined : orderedTypes.get(d.parent)) chain.add(d.code);
    ancestors.set(def.code, chain);
  }
  const isKindOf = (typeCode: string, ancestorCode: string): boolean => ancestors.get(typeCode)?.has(ancestorCode) ?? false;

  return Object.freeze({
    types: orderedTypes,
    attributes,
    qualifiers,
    labels,
    isKindOf,
    typeAndSubtypes: (code: string): readonly TypeDef[] => {
      const self = orderedTypes.get(code);
      if (!self) return [];
      return [self, ...[...orderedTypes.values()].filter((d) => d.code !== code && isKindOf(d.code, code))];
    },
    groupsOfType: (typeCode: string): readonly AttributeDef[] => groupsOfType.get(typeCode) ?? [],
    byRef: (ref: string) => refs.get(ref),
  });
};

// ---------------------------------------------------------------------------------------------
// Loading from a file

/** Offset of the first syntax error in `s` (a strict JSON scanner; used when V8 gives no position). */
const jsonErrorOffset = (s: string): number | undefined => {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < s.length && ' \t\n\r'.includes(s[i]!)) i++;
  };
  const expect = (ch: string) => (s[i] === ch ? i++ : fail());
  const string = () => {
    expect('"');
    for (;;) {
      const ch = s[i];
      if (ch === undefined || ch < ' ') fail();
      i++;
      if (ch === '"') return;
      if (ch === '\\') {
        if (s[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(i + 1, i + 5))) fail();
          i += 5;
        } else if (s[i] !== undefined && '"\\/bfnrt'.includes(s[i]!)) i++;
        else fail();
      }
    }
  };
  const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const value = (): void => {
    ws();
    const ch = s[i];
    if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      i++;
      ws();
      if (s[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (ch === '{') {
          ws();
          string();
          ws();
          expect(':');
        }
        value();
        ws();
        if (s[i] === ',') i++;
        else return void expect(close);
      }
    }
    if (ch === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (s.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    if (!NUMBER.test(s)) fail();
    i = NUMBER.lastIndex;
  };
  try {
    value();
    ws();
    if (i < s.length) fail();
    return undefined;
  } catch (at) {
    if (typeof at === 'number') return at;
    throw at;
  }
};

const jsonProblem = (text: string, err: unknown): string => {
  const message = err instanceof Error ? err.message : String(err);
  const position = /at position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : jsonErrorOffset(text);
  // V8 quotes the text around the error ('Unexpected token ..., "<text>" is not valid JSON'): drop it.
  const reason = message
    .replace(/,\s*(\.\.\.)?".*?"?(\.\.\.)?\s*is not valid JSON\s*$/s, '')
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/\s*at position \d+.*$/s, '')
    .slice(0, 120);
  if (offset === undefined) return `invalid JSON: ${reason}`;
  const before = text.slice(0, offset).split('\n');
  return `invalid JSON at line ${before.length}, column ${before[before.length - 1]!.length + 1}: ${reason}`;
};

export const loadSchema = (path: string): Schema => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SchemaError([code === 'ENOENT' ? `${path}: file not found` : `${path}: cannot read the file (${code ?? String(err)})`], path);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SchemaError([`${path}: ${jsonProblem(text, err)}`], path);
  }
  return parseSchema(json, path);
};
