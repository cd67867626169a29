/**
 * Control file validation, as Haplo's `haplo:data-import-framework:validate-control`
 * (haplo-behaviour.md §3.2): a list of error strings, empty when the control file is valid.
 *
 * The checks run in Haplo's order (version, model, instructions, files, recordProcessor) and give at most
 * one message each, with Haplo's exact wording. Two checks follow that Haplo does not have in its validator:
 * - `mapping` entries are well formed (one message at most);
 * - the build-time checks Haplo makes when a batch prepares its instructions (unknown destinations, names,
 *   qualifiers, mappings, missing `dateFormat`, ...), every one reported, since Haplo reports each of them.
 *   They need a known model and structurally valid instructions, so they run only when those checks passed.
 */
import type { DestinationDef, ModelDef, Models } from '../../domain/model.ts';

export interface ControlValidationContext {
  readonly models: Models;
  /** Names of the value filters that exist (`svc:username-to-ref`, ...). */
  readonly filters: readonly string[];
  /** Names of the input readers that exist (see `readerNames` in readers.ts). */
  readonly readers: readonly string[];
  /** API codes of the schema's qualifiers. */
  readonly qualifiers: readonly string[];
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** A value in a message, as Haplo's string concatenation shows it. */
const show = (v: unknown): string => {
  if (typeof v === 'string') return v;
  try {
    return String(v);
  } catch {
    return JSON.stringify(v) ?? typeof v;
  }
};

/** Required properties per action (Haplo's `instructionExpectedProperties`). */
const EXPECTED: Readonly<Record<string, readonly string[]>> = {
  field: ['source', 'destination', 'name'],
  'field-structured': ['structured', 'destination', 'name'],
  'set-attribute-group': ['source', 'destination', 'name'],
  'set-value': ['destination', 'name', 'value'],
  'remove-values': ['destination', 'name'],
  'if-exists': ['source'],
  'if-value-one-of': ['source'],
  'if-has-value': ['destination', 'name'],
  within: ['source'],
  'for-each': ['source'],
  'assert-destination': ['destination', 'exists'],
  'abort-record': ['message'],
  'log-error': ['message'],
  new: ['destination'],
  load: ['destination', 'using'],
};

/** Nested instruction lists per action. Haplo's validator skips `load`'s `otherwise`; this one checks it. */
const NESTED: Readonly<Record<string, readonly string[]>> = {
  'if-exists': ['then', 'else'],
  'if-value-one-of': ['then', 'else'],
  'if-has-value': ['then', 'else'],
  'for-each': ['instructions'],
  within: ['instructions'],
  load: ['otherwise'],
};

const ASSIGNMENTS: readonly string[] = ['field', 'field-structured', 'set-value', 'set-attribute-group'];
/** Actions whose value conversion takes filters and mapInputValue (Haplo's validator checks filters on `field` only). */
const CONVERTING: readonly string[] = ['field', 'set-value'];

export const OVERWRITE_IN_FOR_EACH =
  'Assigning values within for-each without a new/load statement or setting multivalue property will result in overwritten data';

const actionOf = (inst: Obj): unknown => inst.action || 'field';
const knownAction = (action: unknown): action is string => typeof action === 'string' && has(EXPECTED, action);

/**
 * Haplo's recursive `validateInstructions`: the first problem found, or undefined.
 * `singleAssign` is the list of destinations made ready by new/load inside the enclosing for-each
 * (undefined outside any for-each).
 */
const checkInstructions = (list: readonly unknown[], singleAssign: string[] | undefined, ctx: ControlValidationContext): string | undefined => {
  for (const inst of list) {
    if (!isObject(inst)) return 'Instruction is not an object';
    const action = actionOf(inst);
    if (!knownAction(action)) return `Unknown action in instruction: ${show(inst.action)}`;
    const notFound = (EXPECTED[action] ?? []).filter((p) => !has(inst, p));
    if (notFound.length) return `Expected property not found in ${action} instruction: ${notFound.join(', ')}`;
    if (singleAssign) {
      const destination = inst.destination;
      const permitted = typeof destination === 'string' && singleAssign.includes(destination);
      // Haplo exempts load destinations (cleared by each load); attribute-group pseudo-destinations are
      // likewise cleared by each set-attribute-group, which itself counts as an assignment.
      const isLoadDestination = typeof destination === 'string' && (destination.includes('load') || destination.includes(':attribute-group:'));
      if (ASSIGNMENTS.includes(action) && !isLoadDestination && !inst.multivalue && !permitted) {
        return OVERWRITE_IN_FOR_EACH;
      } else if ((action === 'new' || action === 'load') && !permitted && typeof destination === 'string') {
        singleAssign.push(destination);
      }
    }
    for (const prop of NESTED[action] ?? []) {
      const nested = inst[prop];
      if (!nested) continue;
      if (!Array.isArray(nested)) return `'${prop}' property of ${action} instruction is not an array`;
      const e = checkInstructions(nested, action === 'for-each' ? [] : singleAssign, ctx);
      if (e) return e;
    }
    if (CONVERTING.includes(action)) {
      if (has(inst, 'filters')) {
        const filters = inst.filters;
        if (!Array.isArray(filters)) return "'filters' property is not an array";
        for (const f of filters) {
          if (typeof f !== 'string' || !ctx.filters.includes(f)) return `Filter ${show(f)} is not available.`;
        }
      }
      if (has(inst, 'mapInputValue') && !isObject(inst.mapInputValue)) return "'mapInputValue' property is not an object";
    }
  }
  return undefined;
};

// --------------------------------------------------------------------------

const checkMapping = (mapping: unknown): string | undefined => {
  if (!isObject(mapping)) return "'mapping' property is not an object";
  for (const [name, m] of Object.entries(mapping)) {
    if (!isObject(m)) return `Invalid mapping ${name}: not an object`;
    if (m.using !== 'behaviour' && m.using !== 'title') return `Invalid mapping ${name}: using must be "behaviour" or "title"`;
    if (!isObject(m.values)) return `Invalid mapping ${name}: values must be an object`;
    if (!Object.values(m.values).every((v) => typeof v === 'string')) return `Invalid mapping ${name}: every value must be a string`;
    if (has(m, 'types') && !(Array.isArray(m.types) && m.types.every((t) => typeof t === 'string'))) {
      return `Invalid mapping ${name}: types must be an array of type codes`;
    }
    if (m.using === 'title' && !has(m, 'types')) return `Mapping ${name} does not specify types`;
  }
  return undefined;
};

// --------------------------------------------------------------------------

/** What Haplo reports while preparing instructions for a batch (`data_import_instructions.js`), for every instruction. */
const checkAgainstModel = (list: readonly Obj[], model: ModelDef, mappings: readonly string[], ctx: ControlValidationContext, out: string[]): void => {
  const destination = (name: unknown): DestinationDef | undefined =>
    typeof name === 'string' ? model.destinations.find((d) => d.name === name) : undefined;

  // Haplo's commonValueInstructionDecode, plus the unknown-mapping check of ref value transformers.
  const valueInstruction = (inst: Obj, action: string, sourceDetails: string): boolean => {
    if (has(inst, 'refMapping') && !(typeof inst.refMapping === 'string' && mappings.includes(inst.refMapping))) {
      out.push(`Unknown mapping: ${show(inst.refMapping)}`);
    }
    const dest = destination(inst.destination);
    if (!dest) {
      out.push(`Unknown destination in ${action}: ${show(inst.destination)}`);
      return false;
    }
    const name = dest.names.find((n) => n.name === inst.name);
    if (!name) {
      out.push(`Unknown name in ${action} ${show(inst.name)} for destination ${dest.name}`);
      return false;
    }
    if (name.type === 'datetime' && typeof inst.dateFormat !== 'string') {
      out.push(`Date format not specified for ${sourceDetails}`);
      out.push(`Couldn't create value transformer for ${action} ${dest.name}/${name.name}`);
      return false;
    }
    // An attribute group holds no values of its own: only set-attribute-group sets it.
    if (name.type === 'attribute-group' && action !== 'if-has-value') {
      out.push(`Couldn't create value transformer for ${action} ${dest.name}/${name.name}`);
      return false;
    }
    if (has(inst, 'qualifier') && !(typeof inst.qualifier === 'string' && ctx.qualifiers.includes(inst.qualifier))) {
      out.push(`Invalid qualifier '${show(inst.qualifier)}' in ${action} ${dest.name}/${name.name}`);
    }
    return true;
  };

  for (const inst of list) {
    const action = actionOf(inst) as string;
    switch (action) {
      case 'field':
        valueInstruction(inst, action, `input field ${show(inst.source)}`);
        break;
      case 'field-structured':
        if (valueInstruction(inst, action, `structured input field ${show(inst.structured)}`) && !destination(inst.structured)) {
          out.push(`Unknown structured value destination in field-structured: ${show(inst.structured)}`);
        }
        break;
      case 'set-value':
        valueInstruction(inst, action, `set value ${show(inst.destination)}/${show(inst.name)}`);
        break;
      case 'set-attribute-group': {
        const dest = destination(inst.destination);
        const name = dest?.names.find((n) => n.name === inst.name);
        const source = destination(inst.source);
        if (!dest) out.push(`Unknown destination in set-attribute-group: ${show(inst.destination)}`);
        else if (!name || name.type !== 'attribute-group') out.push(`Unknown name in set-attribute-group ${show(inst.name)} for destination ${dest.name}`);
        else if (!source?.attributeGroup || source.attributeGroup.destination !== dest.name || source.attributeGroup.group !== name.name) {
          out.push(`Unknown attribute group source in set-attribute-group: ${show(inst.source)}`);
        }
        break;
      }
      case 'if-has-value':
        valueInstruction(inst, action, `name ${show(inst.name)}`);
        break;
      case 'remove-values': {
        const dest = destination(inst.destination);
        if (!dest) out.push(`Unknown destination in remove-values: ${show(inst.destination)}`);
        else if (!dest.names.some((n) => n.name === inst.name)) out.push(`Unknown name in remove-values for destination ${dest.name}`);
        break;
      }
      case 'assert-destination': {
        const dest = destination(inst.destination);
        if (!dest) out.push(`Unknown destination in assert-destination: ${show(inst.destination)}`);
        else if (!dest.depends) out.push(`Can only use dependent destinations in assert-destination: ${dest.name}`);
        break;
      }
      case 'new':
        if (!destination(inst.destination)) out.push(`Unknown destination in new: ${show(inst.destination)}`);
        break;
      case 'load':
        if (!destination(inst.destination)) out.push(`Unknown destination in load: ${show(inst.destination)}`);
        if (!destination(inst.using)) out.push(`Unknown destination in load: ${show(inst.using)}`);
        break;
    }
    for (const prop of NESTED[action] ?? []) {
      const nested = inst[prop];
      if (Array.isArray(nested)) checkAgainstModel(nested as Obj[], model, mappings, ctx, out);
    }
  }
};

// --------------------------------------------------------------------------

/**
 * JSON nesting deeper than this is refused before any other check: the checks (and storing the
 * control file as an event) recurse, so an absurdly deep file would otherwise exhaust the stack.
 */
export const MAX_CONTROL_NESTING = 100;

/** Whether a JSON value nests deeper than `limit` levels (iterative, so any depth is safe to test). */
const nestsDeeperThan = (value: unknown, limit: number): boolean => {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
};

export const validateControlFile = (control: unknown, ctx: ControlValidationContext): string[] => {
  if (!isObject(control)) return ['Not a control file'];
  if (nestsDeeperThan(control, MAX_CONTROL_NESTING)) return [`Control file is nested too deeply (more than ${MAX_CONTROL_NESTING} levels)`];
  const c = control;
  const errors: string[] = [];

  // Version
  if (!has(c, 'dataImportControlFileVersion')) errors.push('Not a control file');
  else if (c.dataImportControlFileVersion !== 0) errors.push('Bad version of control file, should be 0');

  // Model
  let model: ModelDef | undefined;
  if (!has(c, 'model')) errors.push('Control file does not specify model in the model property');
  else {
    model = typeof c.model === 'string' ? ctx.models.get(c.model) : undefined;
    if (!model) errors.push(`Model not implemented: ${show(c.model)}`);
  }

  // Instructions
  let instructionsOk = false;
  if (!has(c, 'instructions') || !Array.isArray(c.instructions)) {
    errors.push('Control file does not specify processing instructions in the instructions property');
  } else {
    const e = checkInstructions(c.instructions, undefined, ctx);
    if (e) errors.push(e);
    else instructionsOk = true;
  }

  // Input files (as Haplo, the message for the last bad file is the one kept)
  if (!has(c, 'files') || !isObject(c.files)) {
    errors.push('Control file does not have files property');
  } else {
    let e: string | undefined;
    for (const [name, spec] of Object.entries(c.files)) {
      if (!isObject(spec) || !has(spec, 'read')) e = `Reader not specified for file ${name}`;
      else if (typeof spec.read !== 'string' || !ctx.readers.includes(spec.read)) e = `Unknown reader for file ${name}: ${show(spec.read)}`;
    }
    if (e) errors.push(e);
  }

  // Record processors: none are implemented
  if (has(c, 'recordProcessor')) {
    errors.push(`Unknown record processor specified in recordProcessor property: ${show(c.recordProcessor)}`);
  }

  // Mappings
  if (has(c, 'mapping')) {
    const e = checkMapping(c.mapping);
    if (e) errors.push(e);
  }

  // What Haplo would report when building a batch from this control file
  if (model && instructionsOk) {
    const mappings = isObject(c.mapping) ? Object.keys(c.mapping) : [];
    const found: string[] = [];
    checkAgainstModel(c.instructions as Obj[], model, mappings, ctx, found);
    errors.push(...new Set(found));
  }

  return errors;
};
