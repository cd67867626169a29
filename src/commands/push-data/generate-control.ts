/**
 * The admin "Generate control file" tool and the model explorer (haplo-behaviour.md §3.4, §3.11),
 * as Haplo's `data_import_admin_ui.js`.
 */
import type { ControlFile, Instruction } from '../../domain/control-file.ts';
import { attributeGroupDestination, LOAD_BY_REF, PERSON_NAME, POSTAL_ADDRESS, type DestinationDef, type ModelDef, type NameDef } from '../../domain/model.ts';

export const PERSON_MODEL = 'svc:person';
export const USER_SYNC_MODEL = 'svc:user-sync';

/** Destinations in display order (`displaySort`, then declaration order). */
const inDisplayOrder = (model: ModelDef): DestinationDef[] =>
  model.destinations
    .map((d, i) => ({ d, i }))
    .sort((a, b) => a.d.displaySort - b.d.displaySort || a.i - b.i)
    .map(({ d }) => d);

// --------------------------------------------------------------------------
// Generate control file

export interface GeneratorSelection {
  readonly destination: string;
  readonly name: string;
  /** The "multivalue" checkbox; only honoured for multi-value Names, as in Haplo. */
  readonly multivalue?: boolean;
}

const STRUCTURED_PARTS: Readonly<Record<string, { readonly destination: string; readonly parts: readonly string[] }>> = {
  'person-name': { destination: PERSON_NAME, parts: ['title', 'first', 'middle', 'last', 'suffix'] },
  'postal-address': { destination: POSTAL_ADDRESS, parts: ['street1', 'street2', 'city', 'county', 'postcode', 'country'] },
};

/**
 * `TODO-` plus the Name's last `:` segment, upper-cased. Haplo's clean-up regex has no `g` flag, so it only
 * ever replaces the first run of other characters, which is the hyphen after `TODO`.
 */
const todoSource = (name: string): string => `TODO-${name.split(':').pop()!.toUpperCase()}`.replace(/[^A-Z0-9]+/, '-');

const key = (destination: string, name: string) => `${destination}^${name}`;

/** The instructions that set one Name from `source`: a field (or field-structured, after its parts), last. */
const fieldInstructions = (source: string, destination: string, name: NameDef): Record<string, unknown>[] => {
  const out: Record<string, unknown>[] = [];
  let inst: Record<string, unknown> = { source, destination, name: name.name };
  const structured = Object.hasOwn(STRUCTURED_PARTS, name.type) ? STRUCTURED_PARTS[name.type] : undefined;
  switch (name.type) {
    case 'ref':
      inst.refMapping = 'TODO-DEFINE-MAPPING';
      break;
    case 'object-type':
      inst.mapInputValue = { 'TODO-N1': 'TODO-type:code' };
      inst.mapInputValueDefault = 'TODO-default-type:code';
      break;
    case 'telephone-number':
      inst.country = 'GB';
      break;
    case 'datetime':
      inst.dateFormat = 'yyyy-MM-dd';
      break;
    case 'url':
      inst.filters = ['svc:fix-up-url'];
      break;
  }
  if (structured) {
    for (const part of structured.parts) out.push({ source: `${source}-${part.toUpperCase()}`, destination: structured.destination, name: part });
    inst = { action: 'field-structured', structured: structured.destination, destination, name: name.name };
  }
  out.push(inst);
  return out;
};

export const generateControlFile = (
  model: ModelDef,
  include: readonly GeneratorSelection[],
): { control: ControlFile } | { errors: string[] } => {
  const errors: string[] = [];
  const included = new Set<string>();
  const multivalue = new Set<string>();
  for (const sel of include) {
    const dest = model.destinations.find((d) => d.name === sel.destination);
    if (!dest) {
      errors.push(`Unknown destination in model ${model.name}: ${sel.destination}`);
    } else if (dest.excludeFromGenerator) {
      errors.push(`Destination ${sel.destination} cannot be used when generating a control file`);
    } else if (!dest.names.some((n) => n.name === sel.name)) {
      errors.push(`Unknown name ${sel.name} for destination ${sel.destination}`);
    } else {
      included.add(key(sel.destination, sel.name));
      if (sel.multivalue) multivalue.add(key(sel.destination, sel.name));
    }
  }
  if (errors.length) return { errors: [...new Set(errors)] };

  const isUserSync = model.name === USER_SYNC_MODEL;
  const instructions: Instruction[] = [];
  const madeAvailable = new Set<string>();

  // As Haplo for its person model: load the profile of the user named in the input.
  if (model.name === PERSON_MODEL) {
    instructions.push({ source: 'TODO-USERNAME', destination: LOAD_BY_REF, name: 'ref', filters: ['svc:username-to-ref'] });
    instructions.push({ action: 'load', destination: 'profile', using: LOAD_BY_REF });
    madeAvailable.add('profile');
  }

  for (const destination of inDisplayOrder(model).filter((d) => !d.excludeFromGenerator)) {
    for (const name of destination.names) {
      const k = key(destination.name, name.name);
      if (!included.has(k)) continue;
      if (!madeAvailable.has(destination.name)) {
        // Independent destinations must be made ready with new (or load); user sync does this implicitly.
        if (!(isUserSync || destination.depends)) instructions.push({ action: 'new', destination: destination.name });
        madeAvailable.add(destination.name);
      }
      const source = todoSource(name.name);
      const group = name.type === 'attribute-group' ? model.destinations.find((d) => d.name === attributeGroupDestination(destination.name, name.name)) : undefined;
      if (group) {
        // An attribute group: its members into the group's pseudo-destination, then one set-attribute-group.
        for (const member of group.names) instructions.push(...fieldInstructions(`${source}-${todoSource(member.name).slice('TODO-'.length)}`, group.name, member));
        if (name.multivalue && multivalue.has(k)) instructions.push({ action: 'remove-values', destination: destination.name, name: name.name });
        instructions.push({
          action: 'set-attribute-group', source: group.name, destination: destination.name, name: name.name, ...(name.multivalue && multivalue.has(k) ? { multivalue: true } : {}),
        });
        continue;
      }
      const fields = fieldInstructions(source, destination.name, name);
      const inst = fields.pop()!;
      instructions.push(...fields);
      if (name.multivalue && multivalue.has(k)) {
        inst.multivalue = true;
        instructions.push({ action: 'remove-values', destination: destination.name, name: name.name });
      }
      instructions.push(inst as Instruction);
    }
  }

  return {
    control: {
      dataImportControlFileVersion: 0,
      model: model.name,
      files: { [isUserSync ? 'TODO' : 'DEFAULT']: { read: 'json' } },
      instructions,
    },
  };
};

// --------------------------------------------------------------------------
// Model explorer

export interface NameDescription {
  readonly name: string;
  readonly type: string;
  readonly multivalue: boolean;
  readonly required: boolean;
  readonly description: string;
  readonly refTypes?: readonly string[];
}

export interface DestinationDescription {
  readonly name: string;
  readonly title: string;
  readonly kind: 'object' | 'dictionary';
  /** The "Depends on X" badge. */
  readonly dependsOn?: string;
  readonly optional: boolean;
  readonly pseudo: boolean;
  /** What a control file writes to use this destination. */
  readonly snippet: { readonly destination: string };
  readonly names: readonly NameDescription[];
}

export interface ModelDescription {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly destinations: readonly DestinationDescription[];
}

export const describeModel = (model: ModelDef): ModelDescription => ({
  name: model.name,
  title: model.title,
  description: model.description,
  destinations: inDisplayOrder(model).map((d) => ({
    name: d.name,
    title: d.title,
    kind: d.kind,
    ...(d.depends ? { dependsOn: d.depends } : {}),
    optional: d.optional,
    pseudo: d.pseudo,
    snippet: { destination: d.name },
    names: d.names.map((n) => ({
      name: n.name,
      type: n.type,
      multivalue: n.multivalue,
      required: n.required,
      description: n.description,
      ...(n.refTypes ? { refTypes: n.refTypes } : {}),
    })),
  })),
});
