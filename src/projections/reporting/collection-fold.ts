import type { EventDecoder } from '../../events/decode.ts';
import type { RecordedEvent } from '../../events/event-store.ts';
import { OBJECT_EVENT_TYPES, type ObjectEvent } from '../../domain/objects/events.ts';
import { titleOf } from '../readable.ts';
import type { Attributes, AttributeValue } from '../../domain/objects/values.ts';
import type { DocAccess, Pause, Projector } from '../projector.ts';
import { BEHAVIOUR, PARENT, TITLE, type Schema } from '../../domain/schema.ts';
import type { CollectionDef } from '../../domain/reporting/collection.ts';
import { attributesRead, firstLinkRef, linkedTargets, lookAhead, rowValues } from './facts.ts';
import { firstLink, type ObjectInfo } from './object-info.ts';
import type { RowDoc } from '../read-models.ts';
import { sameJson } from './same-json.ts';
import type { MemoryDocs } from '../batch-docs.ts';
import { eachDoc } from './lazy-docs.ts';
import { attempt, type HeldDocs } from '../held-docs.ts';

type DependentsDoc = { readonly id: string; readonly rows: readonly string[] };

const NO_ROWS: readonly string[] = [];

export const collectionNames = (name: string) => ({
  rows: `rc_${name}_rows`,
  objects: `rc_${name}_objects`,
  dependents: `rc_${name}_deps`,
});

/** How many links away from a row's object its facts may read (a row is recomputed when any of them changes). */
const LOOK_AHEAD = 3;

export const projectionName = (collection: string) => `collection:${collection}`;

/** Whether a change sets an attribute the fold keeps or derives a field from. */
const readsAny = (set: Attributes, keep: ReadonlySet<string>): boolean => {
  for (const code in set) if (keep.has(code) || code === TITLE || code === PARENT || code === BEHAVIOUR) return true;
  return false;
};

const evolveInfo = (info: ObjectInfo | null, event: ObjectEvent, keep: ReadonlySet<string>): ObjectInfo | null => {
  const pick = (set: Attributes, base: Attributes): Attributes => {
    const out: Record<string, readonly AttributeValue[]> = { ...base };
    for (const code in set) {
      if (!keep.has(code)) continue;
      const values = set[code]!;
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
        (objectType !== undefined && objectType !== info.objectType) || (labels !== undefined && !sameJson(labels, info.labels)) || readsAny(set, keep);
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

  const ahead = lookAhead(collection, LOOK_AHEAD);

  /** Objects a row's facts may read: link targets, then theirs (for nested `linked` facts). */
  const prefetch = (info: ObjectInfo, docs: HeldDocs): Map<string, ObjectInfo> => (ahead.walk ? walkLinks(info, docs) : followChains(info, docs));

  /** The objects along the facts' `linked` chains: all that the facts can look up. */
  const followChains = (info: ObjectInfo, docs: HeldDocs): Map<string, ObjectInfo> => {
    const found = new Map<string, ObjectInfo>();
    for (let s of ahead.chains) {
      let from: ObjectInfo = info;
      while ('attribute' in s && s.linked) {
        const ref = firstLinkRef(from, s);
        if (ref === undefined) break;
        let target = found.get(ref);
        if (!target) {
          const got = docs.get<ObjectInfo>(names.objects, ref);
          if (!got) break;
          found.set(ref, (target = got));
        }
        from = target;
        s = s.linked;
      }
    }
    return found;
  };

  /** Every object up to LOOK_AHEAD links away, along any attribute the fold keeps. */
  const walkLinks = (info: ObjectInfo, docs: HeldDocs): Map<string, ObjectInfo> => {
    const found = new Map<string, ObjectInfo>();
    let frontier = [info];
    for (let depth = 0; depth < LOOK_AHEAD && frontier.length; depth++) {
      const next: ObjectInfo[] = [];
      for (const o of frontier) {
        for (const code in o.attributes) {
          for (const v of o.attributes[code]!) {
            if (v.type !== 'link' || found.has(v.ref)) continue;
            const target = docs.get<ObjectInfo>(names.objects, v.ref);
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

  const setDependents = (docs: HeldDocs, target: string, row: string, add: boolean) => {
    const current = docs.get<DependentsDoc>(names.dependents, target)?.rows ?? [];
    if (add && current.includes(row)) {
      // Already listed: the document is put again unchanged, as a set of the same rows was.
      docs.put(names.dependents, { id: target, rows: current });
      return;
    }
    const rows = add ? [...current, row] : current.filter((r) => r !== row);
    if (rows.length) docs.put(names.dependents, { id: target, rows });
    else docs.delete(names.dependents, target);
  };

  const recompute = (docs: HeldDocs, ref: string): void => {
    const info = docs.get<ObjectInfo>(names.objects, ref);
    const old = docs.get<RowDoc>(names.rows, ref);
    const live = info && !info.deleted && isRowType(info);
    const known = live ? prefetch(info, docs) : undefined;
    const linkedTo = known ? linkedTargets(collection, info!, (r) => known.get(r)) : [];
    for (const t of old?.linkedTo ?? []) if (!linkedTo.includes(t)) setDependents(docs, t, ref, false);
    for (const t of linkedTo) if (!old?.linkedTo.includes(t)) setDependents(docs, t, ref, true);
    if (!live || !known) {
      if (old) docs.delete(names.rows, ref);
      return;
    }
    const values = rowValues(collection, info, (r) => known.get(r), schema);
    // A row changes only when a fact (or its labels) changes.
    if (!old || !sameJson(old.values, values) || !sameJson(old.labels, info.labels) || !sameJson(old.linkedTo, linkedTo)) {
      docs.put(names.rows, { id: ref, values, labels: info.labels, linkedTo } satisfies RowDoc);
    }
  };

  /** The object's new state and its own row; the rows that read it through links are recomputed after, each on its own. */
  const applyOwn = (docs: HeldDocs, event: ObjectEvent): readonly string[] => {
    const ref = event.data.ref;
    const before = docs.get<ObjectInfo>(names.objects, ref);
    const info = evolveInfo(before, event, keep);
    // Unchanged: neither its row nor any row reading it through a link can change.
    if (!info || info === before) return NO_ROWS;
    docs.put(names.objects, info);
    recompute(docs, ref);
    return docs.get<DependentsDoc>(names.dependents, ref)?.rows ?? NO_ROWS;
  };

  /** Recomputes rows from the `from`th on, waiting only where a row needs a document not at hand. */
  const recomputeAll = (docs: DocAccess, rows: readonly string[], from: number): void | Promise<void> => {
    for (let i = from; i < rows.length; i++) {
      const done = attempt(docs, recompute, rows[i]!);
      if (done instanceof Promise) return done.then(() => recomputeAll(docs, rows, i + 1));
    }
  };

  /**
   * The dependents of a state, made from its rows: a row lists in `linkedTo` every object it reads
   * through links, and the dependents document of an object lists the rows that read it (the fold
   * keeps both in step). Snapshots leave the dependents out: they are long lists of refs that
   * hardly compress, rewritten whole whenever one row joins or leaves, and they were most of a
   * snapshot's bytes. The order of the rows in a list may differ from the fold's; it means nothing.
   */
  const deriveDependents = async (state: MemoryDocs, pause: Pause) => {
    const lists = new Map<string, string[]>();
    await eachDoc(
      state.collections.get(names.rows) ?? new Map(),
      (doc) => {
        const row = doc as RowDoc;
        for (const target of row.linkedTo) {
          const list = lists.get(target);
          if (list) list.push(row.id);
          else lists.set(target, [row.id]);
        }
      },
      pause,
    );
    const dependents = new Map<string, DependentsDoc>();
    for (const [id, rows] of lists) dependents.set(id, { id, rows });
    state.collections.set(names.dependents, dependents);
  };

  return {
    name: projectionName(collection.name),
    derived: { collections: [names.dependents], derive: deriveDependents },
    collections: [
      { name: names.rows, indexes: [] },
      { name: names.objects, indexes: [] },
      { name: names.dependents, indexes: [] },
    ],
    handles: OBJECT_EVENT_TYPES,
    apply(recorded: RecordedEvent, docs: DocAccess): void | Promise<void> {
      const rows = attempt(docs, applyOwn, decode<ObjectEvent>(recorded));
      return rows instanceof Promise ? rows.then((r) => recomputeAll(docs, r, 0)) : recomputeAll(docs, rows, 0);
    },
  };
};
