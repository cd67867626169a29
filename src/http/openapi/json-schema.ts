import * as t from 'io-ts';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1) as plain data. */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * A codec that validates as `type` does and carries JSON Schema keywords io-ts cannot express
 * (`format`, `pattern`, `description`, `minimum`): the document says them, the codec still decides.
 */
export class AnnotatedType<C extends t.Mixed> extends t.Type<t.TypeOf<C>, t.OutputOf<C>, unknown> {
  readonly _tag = 'AnnotatedType' as const;
  constructor(
    readonly type: C,
    readonly schema: JsonSchema,
  ) {
    super(type.name, type.is, type.validate, type.encode);
  }
}

export const annotate = <C extends t.Mixed>(codec: C, schema: JsonSchema) => new AnnotatedType(codec, schema);

export interface SchemaOptions {
  /**
   * Exact codecs as closed objects (`additionalProperties: false`). Right for answers, whose codecs
   * list every property; wrong for request bodies, where io-ts's exact strips unknown properties
   * instead of refusing them.
   */
  readonly closed?: boolean;
}

type Tagged = t.Mixed & { readonly _tag?: string };

const isPlainObject = (s: JsonSchema) =>
  s.type === 'object' && Object.keys(s).every((k) => ['type', 'properties', 'required', 'additionalProperties'].includes(k));

/** Intersections of objects (io-ts's way to say "some required, some optional") become one object. */
const mergeObjects = (members: readonly JsonSchema[], closed: boolean): JsonSchema | undefined => {
  if (!members.every(isPlainObject)) return undefined;
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  for (const m of members) {
    Object.assign(properties, m.properties ?? {});
    for (const r of (m.required as string[] | undefined) ?? []) required.add(r);
  }
  return {
    type: 'object',
    properties,
    ...(required.size > 0 ? { required: [...required] } : {}),
    ...(closed ? { additionalProperties: false } : {}),
  };
};

const object = (props: t.Props, required: boolean, options: SchemaOptions): JsonSchema => {
  const keys = Object.keys(props);
  return {
    type: 'object',
    properties: Object.fromEntries(keys.map((k) => [k, toJsonSchema(props[k]!, options)])),
    ...(required && keys.length > 0 ? { required: keys } : {}),
  };
};

/**
 * The JSON Schema of an io-ts codec: what the codec accepts, no more and no less where JSON Schema
 * can say it. A combinator it does not know is an error rather than an empty schema, so a codec
 * the document cannot describe is noticed when the document is built (and by its tests).
 */
export const toJsonSchema = (codec: t.Mixed, options: SchemaOptions = {}): JsonSchema => {
  const c = codec as Tagged;
  switch (c._tag) {
    case 'AnnotatedType': {
      const a = c as unknown as AnnotatedType<t.Mixed>;
      return { ...toJsonSchema(a.type, options), ...a.schema };
    }
    case 'StringType':
      return { type: 'string' };
    case 'NumberType':
      return { type: 'number' };
    case 'BooleanType':
      return { type: 'boolean' };
    case 'NullType':
      return { type: 'null' };
    case 'UnknownType':
    case 'AnyType':
      return {};
    case 'UnknownRecordType':
    case 'AnyDictionaryType':
      return { type: 'object' };
    case 'UnknownArrayType':
    case 'AnyArrayType':
      return { type: 'array' };
    case 'LiteralType':
      return { const: (c as unknown as t.LiteralType<string | number | boolean>).value };
    case 'KeyofType':
      return { type: 'string', enum: Object.keys((c as unknown as t.KeyofType<Record<string, unknown>>).keys) };
    case 'ArrayType':
    case 'ReadonlyArrayType':
      return { type: 'array', items: toJsonSchema((c as unknown as t.ArrayType<t.Mixed>).type, options) };
    case 'TupleType': {
      const types = (c as unknown as t.TupleType<t.Mixed[]>).types;
      return { type: 'array', prefixItems: types.map((m) => toJsonSchema(m, options)), minItems: types.length, maxItems: types.length };
    }
    case 'InterfaceType':
      return object((c as unknown as t.InterfaceType<t.Props>).props, true, options);
    case 'PartialType':
      return object((c as unknown as t.PartialType<t.Props>).props, false, options);
    case 'StrictType':
    case 'ExactType': {
      const inner = toJsonSchema((c as unknown as t.ExactType<t.Mixed>).type, options);
      return options.closed && inner.type === 'object' ? { ...inner, additionalProperties: false } : inner;
    }
    case 'ReadonlyType':
      return toJsonSchema((c as unknown as t.ReadonlyType<t.Mixed>).type, options);
    case 'IntersectionType': {
      // Members' own additionalProperties are dropped by the merge: each member lists only part of the properties.
      const members = (c as unknown as t.IntersectionType<t.Mixed[]>).types.map((m) => toJsonSchema(m, options));
      return mergeObjects(members, false) ?? { allOf: members };
    }
    case 'UnionType':
      return { anyOf: (c as unknown as t.UnionType<t.Mixed[]>).types.map((m) => toJsonSchema(m, options)) };
    case 'DictionaryType': {
      const d = c as unknown as t.DictionaryType<t.Mixed, t.Mixed>;
      const domain = d.domain as Tagged;
      const values = toJsonSchema(d.codomain, options);
      if (domain._tag === 'StringType') return { type: 'object', additionalProperties: values };
      if (domain._tag === 'KeyofType') {
        const keys = Object.keys((domain as unknown as t.KeyofType<Record<string, unknown>>).keys);
        return { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, values])), required: keys };
      }
      break;
    }
    case 'RefinementType':
      if (c.name === 'Int') return { type: 'integer' };
      break;
  }
  throw new Error(`No JSON Schema for the io-ts codec ${codec.name} (${c._tag ?? 'untagged'})`);
};
