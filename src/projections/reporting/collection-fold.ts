import type { EventDecoder } from '../../events/decode.ts';
import type { RecordedEvent } from '../../events/event-store.ts';
import { OBJECT_EVENT_TYPES, type ObjectEvent } from '../../domain/objects/events.ts';
import { titleOf } from '../readable.ts';
import type { Attributes, AttributeValue } from '../../domain/objects/values.ts';
import type { DocAccess, Projector } from '../projector.ts';
import { BEHAVIOUR, PARENT, TITLE, type Schema } from '../../domain/schema.ts';
import type { CollectionDef } from '../../domain/reporting/collection.ts';
import { attributesRead, linkedTargets, rowValues } from './facts.ts';
import { firstLink, type ObjectInfo } from './object-info.ts';
import type { RowDoc } from '../read-models.ts';

type DependentsDoc = { readonly id: string; readonly rows: readonly string[] };

export const collectionNames = (name: string) => ({
  rows: `rc_${name}_rows`,
  objects: `rc_${name}_objects`,
  dependents: `rc_${name}_deps`,
});

export const projectionName = (collection: string) => `collection:${collection}`;

const evolveInfo = (info: ObjectInfo | null, event: ObjectEvent, keep: ReadonlySet<string>): ObjectInfo | null => {
  const pick = (set: Attributes, base: Attributes): Attributes => {
    const out: Record<string, readonly AttributeValue[]> = { ...base };
    for (const [code, values] of Object.entries(set)) {
      if (!keep.has(code)) continue;
      if (values.length) out[code] = values;
      else delete out[code];
    }
    return out;
  };
  switch (event.type) {
    case 'ObjectCreated': {
      const a = event.data.attributes;
      const behaviour = a[BEHAVIOUR]?.[0];
      return {
        id: event.data.ref,
        objectType: event.data.objectType,
        title: titleOf(a),
        parent: firstLink(a[PARENT]),
        behaviour: behaviour?.type === 'configuration-name' ? behaviour.value : null,
        deleted: false,
        labels: event.data.labels,
        attributes: pick(a, {}),
      };
    }
    case 'ObjectAttributesChanged': {
      if (!info) return null;
      const set = event.data.set;
      const { objectType, labels } = event.data;
      // Most changes touch attributes this collection never reads: the fold keeps the same object.
      const relevant =
        (objectType !== undefined && objectType !== info.objectType) ||
        (labels !== undefined && JSON.stringify(labels) !== JSON.stringify(info.labels)) ||
        Object.keys(set).some((code) => keep.has(code) || code === TITLE || code === PARENT || code === BEHAVIOUR);
      if (!relevant) return info;
      const behaviour = set[BEHAVIOUR] ? set[BEHAVIOUR][0] : undefined;
      return {
        ...info,
        objectType: event.data.objectType ?? info.objectType,
        labels: event.data.labels ?? info.labels,
        ...(set[TITLE] ? { title: titleOf({ [TITLE]: set[TITLE] }) } : {}),
        ...(set[PARENT] ? { parent: firstLink(set[PARENT]) } : {}),
        ...(set[BEHAVIOUR] ? { behaviour: behaviour?.type === 'configuration-name' ? behaviour.value : null } : {}),
        attributes: pick(set, info.attributes),
      };
    }
    case 'ObjectLabelsChanged':
      return info && { ...info, labels: event.data.labels };
    case 'ObjectDeleted':
      return info && { ...info, deleted: true };
    case 'ObjectUndeleted':
      return info && { ...info, deleted: false };
  }
};

/**
 * The fold of one collection over object events: it keeps what it needs of every object and one
 * row per live object of the collection's types. The same fold makes the live read model (run by
 * the projection runner) and the answer for a past instant (replayed in memory from a snapshot).
 */
export const collectionFold = (collection: CollectionDef, schema: Schema, decode: EventDecoder): Projector => {
  const names = collectionNames(collection.name);
  // Titles are kept as `title`; attribute values only where a fact reads them.
  const keep = attributesRead(collection);
  const isRowType = (info: ObjectInfo) => collection.types.some((t) => schema.isKindOf(info.objectType, t));

  /** Objects a row's facts may read: link targets, then theirs (for nested `linked` facts). */
  const prefetch = async (info: ObjectInfo, docs: DocAccess): Promise<Map<string, ObjectInfo>> => {
    const found = new Map<string, ObjectInfo>();
    let frontier = [info];
    for (let depth = 0; depth < 3 && frontier.length; depth++) {
      const next: ObjectInfo[] = [];
      for (const o of frontier) {
        for (const values of Object.values(o.attributes)) {
          for (const v of values) {
            if (v.type !== 'link' || found.has(v.ref)) continue;
            const target = await docs.get<ObjectInfo>(names.objects, v.ref);
            if (target) {
              found.set(v.ref, target);
              next.push(target);
            }
          }
        }
      }
      frontier = next;
    }
    return found;
  };

  const setDependents = async (docs: DocAccess, target: string, row: string, add: boolean) => {
    const current = (await docs.get<DependentsDoc>(names.dependents, target))?.rows ?? [];
    const rows = add ? [...new Set([...current, row])] : current.filter((r) => r !== row);
    if (rows.length) docs.put(names.dependents, { id: target, rows });
    else docs.delete(names.dependents, target);
  };

  const recompute = async (ref: string, docs: DocAccess) => {
    const info = await docs.get<ObjectInfo>(names.objects, ref);
    const old = await docs.get<RowDoc>(names.rows, ref);
    const live = info && !info.deleted && isRowType(info);
    const known = live ? await prefetch(info, docs) : undefined;
    const linkedTo = known ? linkedTargets(collection, info!, (r) => known.get(r)) : [];
    for (const t of old?.linkedTo ?? []) if (!linkedTo.includes(t)) await setDependents(docs, t, ref, false);
    for (const t of linkedTo) if (!old?.linkedTo.includes(t)) await setDependents(docs, t, ref, true);
    if (!live || !known) {
      if (old) docs.delete(names.rows, ref);
      return;
    }
    const row: RowDoc = { id: ref, values: rowValues(collection, info, (r) => known.get(r), schema), labels: info.labels, linkedTo };
    // A row changes only when a fact (or its labels) changes.
    if (!old || JSON.stringify(old.values) !== JSON.stringify(row.values) || JSON.stringify(old.labels) !== JSON.stringify(row.labels) || JSON.stringify(old.linkedTo) !== JSON.stringify(linkedTo)) {
      docs.put(names.rows, row);
    }
  };

  return {
    name: projectionName(collection.name),
    collections: [
      { name: names.rows, indexes: [] },
      { name: names.objects, indexes: [] },
      { name: names.dependents, indexes: [] },
    ],
    handles: OBJECT_EVENT_TYPES,
    async apply(recorded: RecordedEvent, docs: DocAccess) {
      const event = decode<ObjectEvent>(recorded);
      const ref = event.data.ref;
      const before = await docs.get<ObjectInfo>(names.objects, ref);
      const info = evolveInfo(before, event, keep);
      // Unchanged: neither its row nor any row reading it through a link can change.
      if (!info || info === before) return;
      docs.put(names.objects, info);
      await recompute(ref, docs);
      for (const row of (await docs.get<DependentsDoc>(names.dependents, ref))?.rows ?? []) await recompute(row, docs);
    },
  };
};
