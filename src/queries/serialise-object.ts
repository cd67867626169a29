import { readableDatetime, readablePersonName, readablePostalAddress, readableTelephone, slug } from '../objects/readable.ts';
import type { AttributeValue } from '../objects/values.ts';
import type { ObjectDoc } from '../projections/objects-projector.ts';
import type { WorkUnitDoc } from '../projections/work-units-projector.ts';
import { TYPE, type Schema } from '../schema/schema.ts';

/** Everything serialisation looks up besides the object itself, fetched before it runs. */
export interface SerialiseContext {
  readonly schema: Schema;
  readonly baseUrl: string;
  /** Objects the serialised object links to. */
  readonly linked: ReadonlyMap<string, ObjectDoc>;
  /** Usernames by profile ref, when the `svc:username` source is used. */
  readonly usernames?: ReadonlyMap<string, string>;
  /** Work units of the object, when `svc:workunit` is used. */
  readonly workUnits?: readonly WorkUnitDoc[];
  readonly sources: readonly string[];
}

export const behaviourOf = (doc: ObjectDoc): string | undefined => doc.behaviour ?? undefined;

export const objectUrl = (baseUrl: string, ref: string, title: string) => {
  const s = slug(title);
  return s ? `${baseUrl}/${ref}/${s}` : `${baseUrl}/${ref}`;
};

const serialiseLink = (attribute: string, v: AttributeValue & { type: 'link' }, ctx: SerialiseContext) => {
  const item = ctx.schema.byRef(v.ref);
  if (item) return { ref: v.ref, ...(attribute === TYPE || ctx.schema.types.has(item.code) ? { code: item.code } : {}), title: item.name };
  const target = ctx.linked.get(v.ref);
  const behaviour = target ? behaviourOf(target) : undefined;
  const username = ctx.usernames?.get(v.ref);
  return { ref: v.ref, ...(behaviour ? { behaviour } : {}), title: target?.title ?? '', ...(username ? { username } : {}) };
};

export const serialiseValue = (attribute: string, v: AttributeValue, ctx: SerialiseContext): Record<string, unknown> => {
  const common = {
    type: v.type,
    ...(v.qualifier ? { qualifier: v.qualifier } : {}),
    // Attribute group membership, `desc` as the group's API code (as std-dev 2025).
    ...(v.extension ? { extension: { desc: v.extension.desc, groupId: v.extension.groupId } } : {}),
  };
  switch (v.type) {
    case 'link':
      return { ...common, ...serialiseLink(attribute, v, ctx) };
    case 'datetime':
      return {
        ...common,
        start: v.start,
        end: v.end,
        specifiedAsRange: v.specifiedAsRange,
        precision: v.precision,
        ...(v.timezone ? { timezone: v.timezone } : {}),
        readable: readableDatetime(v),
      };
    case 'file':
      return {
        ...common,
        digest: v.digest,
        fileSize: v.fileSize,
        mimeType: v.mimeType,
        filename: v.filename,
        url: `${ctx.baseUrl}/api/v0-file/metadata/${v.digest}?fileSize=${v.fileSize}`,
      };
    case 'person-name':
      return { ...common, value: v.value, readable: readablePersonName(v.value) };
    case 'postal-address':
      return { ...common, value: v.value, readable: readablePostalAddress(v.value) };
    case 'telephone-number':
      return { ...common, value: v.value, readable: readableTelephone(v.value) };
    case 'integer':
    case 'number':
      // Haplo serialises every plain value in its string form.
      return { ...common, value: String(v.value) };
    default:
      return { ...common, value: v.value };
  }
};

const serialiseWorkUnit = (w: WorkUnitDoc, ctx: SerialiseContext) => ({
  workType: w.workType,
  createdAt: w.createdAt,
  openedAt: w.openedAt,
  deadline: w.deadline,
  closed: w.closed,
  data: w.data,
  tags: w.tags,
  ...(ctx.sources.includes('svc:workflow') ? { state: w.state, url: `${ctx.baseUrl}/api/admin/workflows/${w.id}` } : {}),
});

/** The `svc:object:0` serialisation (haplo-behaviour.md §5.4), keys in Haplo's order. */
export const serialiseObject = (doc: ObjectDoc, ctx: SerialiseContext) => {
  const type = ctx.schema.types.get(doc.objectType);
  const behaviour = behaviourOf(doc);
  const attributes: Record<string, unknown[]> = {};
  for (const [code, values] of Object.entries(doc.attributes)) attributes[code] = values.map((v) => serialiseValue(code, v, ctx));
  const username = ctx.usernames?.get(doc.ref);
  return {
    kind: 'svc:object:0',
    sources: ctx.sources,
    ref: doc.ref,
    url: objectUrl(ctx.baseUrl, doc.ref, doc.title),
    ...(behaviour ? { behaviour } : {}),
    recordVersion: doc.recordVersion,
    title: doc.title,
    labels: doc.labels.map((code) => {
      const label = ctx.schema.labels.get(code);
      return { ref: label?.ref ?? '', title: label?.name ?? code, code };
    }),
    deleted: doc.deleted,
    creationDate: doc.creationDate,
    lastModificationDate: doc.lastModificationDate,
    type: type
      ? { code: type.code, name: type.name, rootCode: type.rootCode, annotations: type.annotations }
      : { code: 'UNKNOWN', name: 'UNKNOWN', rootCode: 'UNKNOWN', annotations: [] },
    attributes,
    ...(ctx.workUnits ? { workflows: ctx.workUnits.map((w) => serialiseWorkUnit(w, ctx)) } : {}),
    ...(username ? { username } : {}),
  };
};

/** Refs of objects an object links to (not schema items). */
export const linkedRefs = (doc: ObjectDoc, schema: Schema): string[] => [
  ...new Set(
    Object.values(doc.attributes)
      .flat()
      .flatMap((v) => (v.type === 'link' && !schema.byRef(v.ref) ? [v.ref] : [])),
  ),
];
