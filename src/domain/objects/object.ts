import { TYPE, type Schema } from '../schema.ts';
import { DomainError } from '../errors.ts';
import type { Decider } from '../decider.ts';
import type { ObjectEvent } from './events.ts';
import { sameValues, type Attributes, type AttributeValue } from './values.ts';

export type StoreObject = {
  readonly ref: string;
  /** Type API code (the first `dc:attribute:type` value). */
  readonly objectType: string;
  readonly attributes: Attributes;
  /** Label API codes. */
  readonly labels: readonly string[];
  readonly deleted: boolean;
  readonly recordVersion: number;
  readonly creationDate: string;
  readonly lastModificationDate: string;
};

/** One change to an object's attribute values. */
export type AttributeChange =
  /** Replaces the values that have this qualifier (none given = unqualified values), keeping the others. */
  | { readonly op: 'replace'; readonly attribute: string; readonly qualifier?: string; readonly values: readonly AttributeValue[] }
  | { readonly op: 'append'; readonly attribute: string; readonly values: readonly AttributeValue[] }
  /** Replaces every value of the attribute, whatever its qualifier. */
  | { readonly op: 'set'; readonly attribute: string; readonly values: readonly AttributeValue[] }
  /** Removes every value (or only those with `qualifier`). */
  | { readonly op: 'remove'; readonly attribute: string; readonly qualifier?: string };

/** An object's state without its dates: all that deciding a change needs, and folded without recorded times. */
export type ObjectState = Omit<StoreObject, 'creationDate' | 'lastModificationDate'>;

/** `evolveObject` without the dates (a state that has them keeps them unchanged). */
export const evolveObjectState = (state: ObjectState | null, event: ObjectEvent): ObjectState => {
  if (event.type === 'ObjectCreated') {
    return {
      ref: event.data.ref,
      objectType: event.data.objectType,
      attributes: event.data.attributes,
      labels: event.data.labels,
      deleted: false,
      recordVersion: 1,
    };
  }
  if (!state) throw new Error(`${event.type} for ${event.data.ref} before ObjectCreated`);
  const next = { ...state, recordVersion: state.recordVersion + 1 };
  switch (event.type) {
    case 'ObjectAttributesChanged': {
      const attributes: Record<string, readonly AttributeValue[]> = { ...state.attributes };
      for (const [code, values] of Object.entries(event.data.set)) {
        if (values.length === 0) delete attributes[code];
        else attributes[code] = values;
      }
      return { ...next, attributes, objectType: event.data.objectType ?? state.objectType, labels: event.data.labels ?? state.labels };
    }
    case 'ObjectLabelsChanged':
      return { ...next, labels: event.data.labels };
    case 'ObjectDeleted':
      return { ...next, deleted: true };
    case 'ObjectUndeleted':
      return { ...next, deleted: false };
  }
};

export const evolveObject = (state: StoreObject | null, event: ObjectEvent, recordedAt: Date): StoreObject => {
  const at = recordedAt.toISOString();
  const next = evolveObjectState(state, event);
  return { ...next, creationDate: event.type === 'ObjectCreated' || !state ? at : state.creationDate, lastModificationDate: at };
};

const applyChange = (current: readonly AttributeValue[], change: AttributeChange): readonly AttributeValue[] => {
  switch (change.op) {
    case 'append':
      return [...current, ...change.values];
    case 'set':
      return change.values;
    case 'remove':
      return change.qualifier === undefined ? [] : current.filter((v) => v.qualifier !== change.qualifier);
    case 'replace': {
      const kept = current.filter((v) => v.qualifier !== change.qualifier);
      return [...kept, ...change.values.map((v) => (change.qualifier === undefined ? v : { ...v, qualifier: change.qualifier }))];
    }
  }
};

/** Type code of the first `dc:attribute:type` value; undefined when it is missing or not a type. */
export const typeOfAttributes = (attributes: Attributes, schema: Schema): string | undefined => {
  const first = attributes[TYPE]?.[0];
  if (!first || first.type !== 'link') return undefined;
  const item = schema.byRef(first.ref);
  return item && schema.types.has(item.code) ? item.code : undefined;
};

/**
 * `alsoOf`: further types whose attributes the object may hold, as a data-import destination over
 * several annotated types offers the attributes of each of them (haplo-behaviour.md, annotatedTypes).
 */
const checkAttributes = (schema: Schema, objectType: string, attributes: Attributes, alsoOf: readonly string[] = []): void => {
  const type = schema.types.get(objectType);
  if (!type) throw new DomainError('invalid', 'svc:object:unknown-type', `Unknown type ${objectType}`);
  // Members of the type's attribute groups may hold values too (those of group instances, and others).
  const groups = schema.groupsOfType(objectType);
  const offered = alsoOf.flatMap((t) => schema.types.get(t)?.attributes ?? []);
  for (const [code, values] of Object.entries(attributes)) {
    const def = schema.attributes.get(code);
    if (!def) throw new DomainError('invalid', 'svc:object:unknown-attribute', `attributes.${code}: unknown attribute`);
    if (code !== TYPE && !type.attributes.includes(code) && !offered.includes(code) && !groups.some((g) => g.groupAttributes?.includes(code))) {
      throw new DomainError('invalid', 'svc:object:attribute-not-in-type', `attributes.${code}: not an attribute of type ${objectType}`);
    }
    values.forEach((v, i) => {
      if (v.type !== def.dataType) {
        throw new DomainError('invalid', 'svc:object:bad-value', `attributes.${code}[${i}]: ${def.code} holds ${def.dataType} values, not ${v.type}`);
      }
      if (v.extension && !groups.some((g) => g.code === v.extension!.desc && g.groupAttributes?.includes(code))) {
        throw new DomainError(
          'invalid',
          'svc:object:bad-value',
          `attributes.${code}[${i}]: ${v.extension.desc} is not an attribute group of type ${objectType} with member ${code}`,
        );
      }
    });
  }
};

const noSuchObject = (ref: string) => new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);

const requireLive = (state: ObjectState | null, ref: string): ObjectState => {
  if (!state) throw noSuchObject(ref);
  if (state.deleted) throw new DomainError('conflict', 'svc:object:deleted', `Object ${ref} is deleted; undelete it first`);
  return state;
};

const checkLabels = (schema: Schema, labels: readonly string[]) => {
  for (const label of labels) {
    if (!schema.labels.has(label)) throw new DomainError('invalid', 'svc:object:unknown-label', `labels: unknown label ${label}`);
  }
};

export interface LabelChanges {
  readonly add?: readonly string[];
  readonly remove?: readonly string[];
}

export type ObjectCommand =
  | { readonly type: 'CreateObject'; readonly ref: string; readonly attributes: Attributes; readonly labels: readonly string[]; readonly alsoOf?: readonly string[] }
  /** One save: attribute changes and label changes together make one new version (or none when nothing changes). */
  | { readonly type: 'ChangeObject'; readonly ref: string; readonly changes?: readonly AttributeChange[]; readonly labels?: LabelChanges }
  /** Saves a complete new attribute map (as a data import does after editing a copy); the import decides which objects it edits. */
  | { readonly type: 'SetObjectAttributes'; readonly ref: string; readonly attributes: Attributes; readonly alsoOf?: readonly string[] }
  | { readonly type: 'DeleteObject'; readonly ref: string }
  | { readonly type: 'UndeleteObject'; readonly ref: string };

const create = (schema: Schema, state: ObjectState | null, command: { ref: string; attributes: Attributes; labels: readonly string[]; alsoOf?: readonly string[] }): ObjectEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:object:exists', `Object ${command.ref} already exists`);
  const objectType = typeOfAttributes(command.attributes, schema);
  if (!objectType) throw new DomainError('invalid', 'svc:object:no-type', `attributes.${TYPE}: an object needs a type`);
  checkAttributes(schema, objectType, command.attributes, command.alsoOf);
  checkLabels(schema, command.labels);
  return [{ type: 'ObjectCreated', data: { ref: command.ref, objectType, attributes: command.attributes, labels: [...new Set(command.labels)] } }];
};

/** Emits nothing when the result equals the stored values. */
const setAttributes = (schema: Schema, state: ObjectState, after: Attributes, alsoOf?: readonly string[]): ObjectEvent[] => {
  const objectType = typeOfAttributes(after, schema);
  if (!objectType) throw new DomainError('invalid', 'svc:object:no-type', `attributes.${TYPE}: an object needs a type`);
  checkAttributes(schema, objectType, after, alsoOf);
  const set: Record<string, readonly AttributeValue[]> = {};
  for (const code of new Set([...Object.keys(state.attributes), ...Object.keys(after)])) {
    if (!sameValues(state.attributes[code], after[code])) set[code] = after[code] ?? [];
  }
  if (Object.keys(set).length === 0) return [];
  return [
    {
      type: 'ObjectAttributesChanged',
      data: { ref: state.ref, set, ...(objectType !== state.objectType ? { objectType } : {}) },
    },
  ];
};

const changeAttributes = (schema: Schema, state: ObjectState | null, ref: string, changes: readonly AttributeChange[]): ObjectEvent[] => {
  const current = requireLive(state, ref);
  const after: Record<string, readonly AttributeValue[]> = { ...current.attributes };
  for (const change of changes) after[change.attribute] = applyChange(after[change.attribute] ?? [], change);
  return setAttributes(schema, current, after);
};

const changeLabels = (schema: Schema, state: ObjectState | null, ref: string, command: LabelChanges): ObjectEvent[] => {
  const current = requireLive(state, ref);
  checkLabels(schema, [...(command.add ?? []), ...(command.remove ?? [])]);
  const labels = [...new Set([...current.labels, ...(command.add ?? [])])].filter((l) => !(command.remove ?? []).includes(l));
  const same = labels.length === current.labels.length && labels.every((l) => current.labels.includes(l));
  return same ? [] : [{ type: 'ObjectLabelsChanged', data: { ref, labels } }];
};

const change = (schema: Schema, state: ObjectState | null, command: ObjectCommand & { type: 'ChangeObject' }): ObjectEvent[] => {
  const { ref } = command;
  if (!state) throw noSuchObject(ref);
  const events = command.changes?.length ? changeAttributes(schema, state, ref, command.changes) : [];
  const afterChanges = events.reduce<ObjectState>((s, e) => evolveObjectState(s, e), state);
  const labels = command.labels ? changeLabels(schema, afterChanges, ref, command.labels) : [];
  // One request is one save: a label change joins the attribute change rather than adding a version.
  const [changed] = events;
  const [relabelled] = labels;
  if (changed?.type === 'ObjectAttributesChanged' && relabelled?.type === 'ObjectLabelsChanged') {
    return [{ ...changed, data: { ...changed.data, labels: relabelled.data.labels } }];
  }
  return [...events, ...labels];
};

/**
 * The decider of store objects under a schema. Its state has no dates (deciding needs none), so
 * push-data's kept states and the admin commands fold the same way.
 */
export const objectDecider = (schema: Schema): Decider<ObjectCommand, ObjectState | null, ObjectEvent> => ({
  initialState: null,
  evolve: evolveObjectState,
  decide(command, state) {
    switch (command.type) {
      case 'CreateObject':
        return create(schema, state, command);
      case 'ChangeObject':
        return change(schema, state, command);
      case 'SetObjectAttributes':
        if (!state) throw noSuchObject(command.ref);
        return setAttributes(schema, state, command.attributes, command.alsoOf);
      case 'DeleteObject':
        if (!state) throw noSuchObject(command.ref);
        return state.deleted ? [] : [{ type: 'ObjectDeleted', data: { ref: command.ref } }];
      case 'UndeleteObject':
        if (!state) throw noSuchObject(command.ref);
        return state.deleted ? [{ type: 'ObjectUndeleted', data: { ref: command.ref } }] : [];
    }
  },
});
