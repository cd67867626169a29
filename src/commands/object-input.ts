import { OBJECTS, type ObjectDoc } from '../projections/read-models.ts';
import { linkRefsIn, parseValue } from './parse-value.ts';
import type { Attributes, AttributeValue } from '../domain/objects/values.ts';
import { TYPE } from '../domain/schema.ts';
import { DomainError } from '../domain/errors.ts';
import type { CommandDeps } from './context.ts';

const invalid = (field: string, message: string) => new DomainError('invalid', 'svc:object:bad-value', `${field}: ${message}`);

/** Parses `{code: value | [values]}` from a request into stored values, naming the first bad field. */
export const parseAttributes = async (deps: CommandDeps, input: unknown, field = 'attributes'): Promise<Attributes> => {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid(field, 'must be an object keyed by attribute code');
  const record = input as Record<string, unknown>;
  const targets = await deps.reads.getMany<ObjectDoc>(OBJECTS, linkRefsIn(record));
  const linkTargets = new Map([...targets].map(([ref, doc]) => [ref, doc.objectType]));
  const out: Record<string, AttributeValue[]> = {};
  for (const [code, given] of Object.entries(record)) {
    const def = deps.schema.attributes.get(code);
    if (!def) throw new DomainError('invalid', 'svc:object:unknown-attribute', `${field}.${code}: unknown attribute`);
    const list = Array.isArray(given) ? given : [given];
    if (list.length === 0) continue;
    out[code] = list.map((v, i) => {
      const parsed = parseValue(def, v, { schema: deps.schema, linkTargets });
      if ('error' in parsed) throw invalid(`${field}.${code}[${i}]`, parsed.error);
      return parsed.value;
    });
  }
  return out;
};

/** The `dc:attribute:type` value for a type code. */
export const typeValue = (deps: CommandDeps, typeCode: unknown, field = 'type'): AttributeValue => {
  const def = typeof typeCode === 'string' ? deps.schema.types.get(typeCode) : undefined;
  if (!def) throw new DomainError('invalid', 'svc:object:unknown-type', `${field}: unknown type ${JSON.stringify(typeCode)}`);
  return { type: 'link', ref: def.ref };
};

export const withType = (attributes: Attributes, type: AttributeValue): Attributes => {
  if (attributes[TYPE]) {
    throw new DomainError('invalid', 'svc:object:bad-value', `attributes.${TYPE}: set the type with the type field, not as an attribute`);
  }
  return { [TYPE]: [type], ...attributes };
};
