import { readFileSync } from 'node:fs';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { ATTRIBUTE_GROUP, TITLE, TYPE, type Schema } from '../domain/schema.ts';
import { attributeGroupDestination, LOAD_BY_REF, PERSON_NAME, POSTAL_ADDRESS, type DestinationDef, type ModelDef, type Models, type NameDef } from '../domain/model.ts';

const DictName = t.intersection([t.type({ description: t.string }), t.partial({ type: t.string, required: t.boolean, multivalue: t.boolean })]);
const NameOverride = t.partial({ type: t.string, description: t.string, required: t.boolean, multivalue: t.boolean });
const Destination = t.intersection([
  t.type({ name: t.string, kind: t.keyof({ object: null, dictionary: null }) }),
  t.partial({
    title: t.string,
    optional: t.boolean,
    depends: t.string,
    displaySort: t.number,
    excludeFromGenerator: t.boolean,
    implicit: t.boolean,
    objectType: t.string,
    annotatedTypes: t.array(t.string),
    objectDependsWithAttribute: t.string,
    without: t.array(t.string),
    objectAttributesOverride: t.record(t.string, NameOverride),
    dictionaryNames: t.record(t.string, DictName),
    commit: t.keyof({ 'user-sync-user': null, 'user-sync-tags': null }),
  }),
]);
const ModelsFile = t.type({
  models: t.array(t.type({ name: t.string, title: t.string, description: t.string, destinations: t.array(Destination) })),
  autoModels: t.array(t.string),
});

export class ModelsError extends Error {
  override readonly name = 'ModelsError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid models:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/** The Name of an attribute: `ref` for links (with the linkable types), else its data type (`attribute-group` for groups). */
const attributeName = (schema: Schema, code: string, required: boolean): NameDef => {
  const attr = schema.attributes.get(code)!;
  return {
    name: code,
    type: code === TYPE ? 'object-type' : attr.dataType === 'link' ? 'ref' : attr.dataType,
    description: attr.name,
    multivalue: true,
    required,
    ...(attr.dataType === 'link' && code !== TYPE ? { refTypes: attr.linkTypes } : {}),
  };
};

/** Names of an object destination: one per attribute of its type(s), as §3.4 describes. */
const objectNames = (schema: Schema, types: readonly string[], without: readonly string[], overrides: Record<string, t.TypeOf<typeof NameOverride>>): NameDef[] => {
  const codes = [...new Set(types.flatMap((code) => schema.types.get(code)?.attributes ?? []))].filter((c) => !without.includes(c));
  return codes.map((code) => ({ ...attributeName(schema, code, code === TITLE), ...overrides[code] }));
};

/**
 * The attribute-group pseudo-destinations of an object destination (the 2022 docs'
 * `<destination>:attribute-group:<descriptor>`, the descriptor being the group's API code): one per
 * attribute group among its Names, whose Names are the group's members (typed as object Names).
 * `set-attribute-group` turns what they collect into a group instance of the object.
 */
const attributeGroupDestinations = (schema: Schema, object: DestinationDef): DestinationDef[] =>
  object.names
    .filter((n) => n.type === ATTRIBUTE_GROUP && schema.attributes.get(n.name)?.dataType === ATTRIBUTE_GROUP)
    .map((n) => {
      const group = schema.attributes.get(n.name)!;
      return {
        name: attributeGroupDestination(object.name, group.code),
        title: `${group.name} (attribute group of ${object.title})`,
        kind: 'dictionary',
        optional: true,
        pseudo: true,
        excludeFromGenerator: true,
        displaySort: 10_000,
        names: (group.groupAttributes ?? []).map((member) => attributeName(schema, member, false)),
        attributeGroup: { destination: object.name, group: group.code },
      };
    });

const pseudoDestinations = (): DestinationDef[] => {
  const dict = (name: string, title: string, names: NameDef[]): DestinationDef => ({
    name, title, kind: 'dictionary', optional: true, pseudo: true, excludeFromGenerator: true, displaySort: 10_000, names,
  });
  const text = (name: string, description: string, required = false): NameDef => ({ name, type: 'text', description, multivalue: false, required });
  return [
    dict(LOAD_BY_REF, 'Load by ref', [{ name: 'ref', type: 'ref', description: 'Ref of object', multivalue: false, required: false }]),
    dict(PERSON_NAME, 'Person name', [text('title', 'Title'), text('first', 'First name'), text('middle', 'Middle name'), text('last', 'Last name', true), text('suffix', 'Suffix')]),
    dict(POSTAL_ADDRESS, 'Postal address', [
      text('street1', 'Street line 1'), text('street2', 'Street line 2'), text('city', 'City'), text('county', 'County'),
      text('postcode', 'Postcode'), text('country', 'Country (two-letter ISO code)', true),
    ]),
  ];
};

export const parseModels = (json: unknown, schema: Schema, source = 'models'): Models => {
  const decoded = ModelsFile.decode(json);
  if (isLeft(decoded)) {
    throw new ModelsError(decoded.left.slice(0, 10).map((e) => `${e.context.map((c) => c.key).filter((k) => k && !/^\d$/.test(k)).join('.')}: invalid (${source})`));
  }
  const problems: string[] = [];
  const models = new Map<string, ModelDef>();
  for (const [mi, m] of decoded.right.models.entries()) {
    const destinations: DestinationDef[] = m.destinations.map((d, di) => {
      const at = `models[${mi}].destinations[${di}]`;
      const types = d.objectType ? [d.objectType] : (d.annotatedTypes ?? []);
      for (const ty of types) if (!schema.types.has(ty)) problems.push(`${at}: unknown type ${ty}`);
      if (d.kind === 'object' && types.length === 0) problems.push(`${at}: object destinations need objectType or annotatedTypes`);
      if (d.objectDependsWithAttribute && !schema.attributes.has(d.objectDependsWithAttribute)) problems.push(`${at}: unknown attribute ${d.objectDependsWithAttribute}`);
      const names: NameDef[] =
        d.kind === 'object'
          ? objectNames(schema, types.filter((ty) => schema.types.has(ty)), d.without ?? [], d.objectAttributesOverride ?? {})
          : Object.entries(d.dictionaryNames ?? {}).map(([name, n]) => ({
              name, type: n.type ?? 'text', description: n.description, multivalue: n.multivalue ?? false, required: n.required ?? false,
            }));
      return {
        name: d.name,
        title: d.title ?? d.name,
        kind: d.kind,
        optional: d.optional ?? false,
        ...(d.depends ? { depends: d.depends } : {}),
        pseudo: false,
        excludeFromGenerator: d.excludeFromGenerator ?? false,
        displaySort: d.displaySort ?? 0,
        names,
        ...(d.objectType ? { objectType: d.objectType } : {}),
        ...(d.annotatedTypes ? { annotatedTypes: d.annotatedTypes } : {}),
        ...(d.objectDependsWithAttribute ? { objectDependsWithAttribute: d.objectDependsWithAttribute } : {}),
        ...(d.commit ? { commit: d.commit } : {}),
        ...(d.implicit ? { implicit: true } : {}),
      };
    });
    for (const d of destinations) {
      if (d.depends && !destinations.some((p) => p.name === d.depends)) problems.push(`models[${mi}]: ${d.name} depends on unknown destination ${d.depends}`);
    }
    const hasObjects = destinations.some((d) => d.kind === 'object');
    const groups = destinations.filter((d) => d.kind === 'object').flatMap((d) => attributeGroupDestinations(schema, d));
    models.set(m.name, {
      name: m.name, title: m.title, description: m.description, destinations: [...destinations, ...(hasObjects ? pseudoDestinations() : []), ...groups],
    });
  }
  for (const code of decoded.right.autoModels) {
    const type = schema.types.get(code);
    if (!type) {
      problems.push(`autoModels: unknown type ${code}`);
      continue;
    }
    const object: DestinationDef = {
      name: 'object', title: type.name, kind: 'object', optional: false, pseudo: false, excludeFromGenerator: false, displaySort: 0,
      names: objectNames(schema, [code], [], {}), objectType: code,
    };
    models.set(`TYPE:${code}`, {
      name: `TYPE:${code}`, title: type.name, description: `Objects of type ${type.name}`,
      destinations: [object, ...pseudoDestinations(), ...attributeGroupDestinations(schema, object)],
    });
  }
  if (problems.length) throw new ModelsError(problems);
  return { get: (name) => models.get(name), list: () => [...models.values()] };
};

export const loadModels = (file: string, schema: Schema): Models => {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ModelsError([`${file}: ${(e as Error).message}`]);
  }
  return parseModels(json, schema, file);
};
