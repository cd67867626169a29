import { TYPE, type Schema } from '../schema.ts';
import { DomainError } from '../errors.ts';
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

const checkAttributes = (schema: Schema, objectType: string, attributes: Attributes): void => {
  const type = schema.types.get(objectType);
  if (!type) throw new DomainError('invalid', 'svc:object:unknown-type', `Unknown type ${objectType}`);
  // Members of the type's attribute groups may hold values too (those of group instances, and others).
  const groups = schema.groupsOfType(objectType);
  for (const [code, values] of Object.entries(attributes)) {
    const def = schema.attributes.get(code);
    if (!def) throw new DomainError('invalid', 'svc:object:unknown-attribute', `attributes.${code}: unknown attribute`);
    if (code !== TYPE && !type.attributes.includes(code) && !groups.some((g) => g.groupAttributes?.includes(code))) {
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

export const decideCreate = (
  state: StoreObject | null,
  command: { ref: string; attributes: Attributes; labels: readonly string[] },
  schema: Schema,
): ObjectEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:object:exists', `Object ${command.ref} already exists`);
  const objectType = typeOfAttributes(command.attributes, schema);
  if (!objectType) throw new DomainError('invalid', 'svc:object:no-type', `attributes.${TYPE}: an object needs a type`);
  checkAttributes(schema, objectType, command.attributes);
  checkLabels(schema, command.labels);
  return [{ type: 'ObjectCreated', data: { ref: command.ref, objectType, attributes: command.attributes, labels: [...new Set(command.labels)] } }];
};

const requireLive = (state: StoreObject | null, ref: string): StoreObject => {
  if (!state) throw new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);
  if (state.deleted) throw new DomainError('conflict', 'svc:object:deleted', `Object ${ref} is deleted; undelete it first`);
  return state;
};

/** Applies the changes; emits nothing when the result equals the stored values. */
export const decideChangeAttributes = (
  state: StoreObject | null,
  command: { ref: string; changes: readonly AttributeChange[] },
  schema: Schema,
): ObjectEvent[] => {
  const current = requireLive(state, command.ref);
  const after: Record<string, readonly AttributeValue[]> = { ...current.attributes };
  for (const change of command.changes) after[change.attribute] = applyChange(after[change.attribute] ?? [], change);
  return decideSetAttributes(current, after, schema);
};

/** Saves a complete new attribute map (as a data import does after editing a copy). */
export const decideSetAttributes = (state: ObjectState, after: Attributes, schema: Schema): ObjectEvent[] => {
  const objectType = typeOfAttributes(after, schema);
  if (!objectType) throw new DomainError('invalid', 'svc:object:no-type', `attributes.${TYPE}: an object needs a type`);
  checkAttributes(schema, objectType, after);
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

const checkLabels = (schema: Schema, labels: readonly string[]) => {
  for (const label of labels) {
    if (!schema.labels.has(label)) throw new DomainError('invalid', 'svc:object:unknown-label', `labels: unknown label ${label}`);
  }
};

export const decideChangeLabels = (
  state: StoreObject | null,
  command: { ref: string; add?: readonly string[]; remove?: readonly string[] },
  schema: Schema,
): ObjectEvent[] => {
  const current = requireLive(state, command.ref);
  checkLabels(schema, [...(command.add ?? []), ...(command.remove ?? [])]);
  const labels = [...new Set([...current.labels, ...(command.add ?? [])])].filter((l) => !(command.remove ?? []).includes(l));
  const same = labels.length === current.labels.length && labels.every((l) => current.labels.includes(l));
  return same ? [] : [{ type: 'ObjectLabelsChanged', data: { ref: command.ref, labels } }];
};

export const decideDelete = (state: StoreObject | null, ref: string): ObjectEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);
  return state.deleted ? [] : [{ type: 'ObjectDeleted', data: { ref } }];
};

export const decideUndelete = (state: StoreObject | null, ref: string): ObjectEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);
  return state.deleted ? [{ type: 'ObjectUndeleted', data: { ref } }] : [];
};

