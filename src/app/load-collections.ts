import { readFileSync } from 'node:fs';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { Schema } from '../domain/schema.ts';
import { COLLECTION_NAME, FACT_TYPES, type CollectionDef, type FactSource } from '../domain/reporting/collection.ts';
import { FACT_FUNCTIONS } from '../projections/reporting/fact-functions.ts';

const Source: t.Type<FactSource> = t.recursion('FactSource', () =>
  t.union([
    t.intersection([
      t.type({ attribute: t.string }),
      t.partial({ qualifier: t.string, all: t.boolean, part: t.keyof({ start: null, end: null }), exists: t.boolean, count: t.boolean, linked: Source }),
    ]),
    t.type({ title: t.literal(true) }),
    t.type({ objectType: t.literal(true) }),
    t.type({ labels: t.literal(true) }),
    t.type({ deleted: t.literal(true) }),
    t.type({ function: t.string }),
    // Last: t.unknown also accepts a missing key, so this member would match anything before it.
    t.type({ constant: t.unknown }),
  ]) as t.Type<FactSource>,
);
const FactType = t.keyof(Object.fromEntries(FACT_TYPES.map((f) => [f, null])) as Record<(typeof FACT_TYPES)[number], null>);
const File = t.type({
  collections: t.array(
    t.type({
      name: t.string,
      description: t.string,
      categories: t.array(t.string),
      types: t.array(t.string),
      facts: t.array(t.type({ name: t.string, type: FactType, description: t.string, source: Source })),
    }),
  ),
});

export class CollectionsError extends Error {
  override readonly name = 'CollectionsError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid reporting collections:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

const FACT_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Validates `config/collections.json` against the schema: names, types, attributes, qualifiers, functions. */
export const parseCollections = (json: unknown, schema: Schema): CollectionDef[] => {
  const decoded = File.decode(json);
  if (isLeft(decoded)) {
    const paths = decoded.left.slice(0, 10).map((e) => e.context.map((c) => c.key).filter((k) => k !== '' && !/^\d$/.test(k) || /^\d+$/.test(k)).join('.'));
    throw new CollectionsError([...new Set(paths)].map((p) => `${p || '(root)'}: invalid`));
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  decoded.right.collections.forEach((c, ci) => {
    const at = `collections[${ci}]`;
    if (!COLLECTION_NAME.test(c.name)) problems.push(`${at}.name: must match ^[a-z0-9][a-z0-9_]+[a-z0-9]$`);
    if (seen.has(c.name)) problems.push(`${at}.name: duplicate collection ${c.name}`);
    seen.add(c.name);
    c.types.forEach((ty, i) => schema.types.has(ty) || problems.push(`${at}.types[${i}]: unknown type ${ty}`));
    const names = new Set<string>(['ref']);
    c.facts.forEach((f, fi) => {
      const fat = `${at}.facts[${fi}]`;
      if (!FACT_NAME.test(f.name)) problems.push(`${fat}.name: must be letters, digits and _ (starting with a letter)`);
      if (names.has(f.name)) problems.push(`${fat}.name: duplicate fact ${f.name}`);
      names.add(f.name);
      const check = (s: FactSource, path: string) => {
        if ('attribute' in s) {
          if (!schema.attributes.has(s.attribute)) problems.push(`${path}.attribute: unknown attribute ${s.attribute}`);
          if (s.qualifier && !schema.qualifiers.has(s.qualifier)) problems.push(`${path}.qualifier: unknown qualifier ${s.qualifier}`);
          if (s.linked) {
            if (schema.attributes.get(s.attribute)?.dataType !== 'link') problems.push(`${path}.linked: ${s.attribute} is not a link attribute`);
            check(s.linked, `${path}.linked`);
          }
        }
        if ('function' in s && !FACT_FUNCTIONS[s.function]) problems.push(`${path}.function: unknown fact function ${s.function}`);
      };
      check(f.source, `${fat}.source`);
    });
  });
  if (problems.length) throw new CollectionsError(problems);
  return decoded.right.collections;
};

export const loadCollections = (file: string, schema: Schema): CollectionDef[] => {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new CollectionsError([`${file}: ${(e as Error).message}`]);
  }
  return parseCollections(json, schema);
};
