import { readableDatetime, readablePersonName, readablePostalAddress, readableTelephone, slug } from '../projections/readable.ts';
import type { AttributeValue } from '../domain/objects/values.ts';
import type { ObjectDoc, WorkUnitDoc } from '../projections/read-models.ts';
import { TYPE, type Schema } from '../domain/schema.ts';

/** Everything serialisation looks up besides the object itself, fetched before it runs. */
export interface SerialiseContext {
  readonly schema: Schema;
  readonly baseUrl: string;
  /** What links show of the objects the serialised object links to: only those the caller may read. */
  readonly linked: ReadonlyMap<string, LinkTarget>;
  /** Usernames by profile ref, when the `std:username` source is used. */
  readonly usernames?: ReadonlyMap<string, string>;
  /** Work units of the object, when `std:workunit` is used. */
  readonly workUnits?: readonly WorkUnitDoc[];
  readonly sources: readonly string[];
  /** Slugs of titles serialised before; without it each is made afresh. */
  readonly slugs?: SlugMemo;
}

/** All a link's serialisation takes from the object it points to (labels: to decide who may see it). */
export type LinkTarget = Pick<ObjectDoc, 'title' | 'labels'> & { readonly behaviour?: string | null };

export const behaviourOf = (doc: LinkTarget): string | undefined => doc.behaviour ?? undefined;

/** Slugs of recent titles, kept between answers: the slug is a pure function of the title and costs a Unicode normalisation. */
export type SlugMemo = Map<string, string>;
const SLUG_MEMO_SIZE = 4096;

const slugOf = (title: string, slugs: SlugMemo | undefined): string => {
  if (!slugs) return slug(title);
  let s = slugs.get(title);
  if (s === undefined) {
    s = slug(title);
    if (slugs.size >= SLUG_MEMO_SIZE) slugs.clear();
    slugs.set(title, s);
  }
  return s;
};

export const objectUrl = (baseUrl: string, ref: string, title: string, slugs?: SlugMemo) => {
  const s = slugOf(title, slugs);
  return s ? `${baseUrl}/${ref}/${s}` : `${baseUrl}/${ref}`;
};

// The serialisers below build each object property by property, in the order of Haplo's keys,
// rather than by spreading partial objects: it is the hot path of every Object API answer.

const addLink = (out: Record<string, unknown>, attribute: string, v: AttributeValue & { type: 'link' }, ctx: SerialiseContext): void => {
  out.ref = v.ref;
  const item = ctx.schema.byRef(v.ref);
  if (item) {
    if (attribute === TYPE || ctx.schema.types.has(item.code)) out.code = item.code;
    out.title = item.name;
    return;
  }
  const target = ctx.linked.get(v.ref);
  // A target that is gone or that the caller may not read keeps its ref and shows nothing of
  // itself, as Haplo's serialiser leaves out the title of an object it cannot load.
  if (!target) return;
  const behaviour = behaviourOf(target);
  if (behaviour) out.behaviour = behaviour;
  out.title = target.title;
  const username = ctx.usernames?.get(v.ref);
  if (username) out.username = username;
};

export const serialiseValue = (attribute: string, v: AttributeValue, ctx: SerialiseContext): Record<string, unknown> => {
  const out: Record<string, unknown> = { type: v.type };
  if (v.qualifier) out.qualifier = v.qualifier;
  // Attribute group membership, `desc` as the group's API code (as std-dev 2025).
  if (v.extension) out.extension = { desc: v.extension.desc, groupId: v.extension.groupId };
  switch (v.type) {
    case 'link':
      addLink(out, attribute, v, ctx);
      return out;
    case 'datetime':
      out.start = v.start;
      out.end = v.end;
      out.specifiedAsRange = v.specifiedAsRange;
      out.precision = v.precision;
      if (v.timezone) out.timezone = v.timezone;
      out.readable = readableDatetime(v);
      return out;
    case 'file':
      out.digest = v.digest;
      out.fileSize = v.fileSize;
      out.mimeType = v.mimeType;
      out.filename = v.filename;
      out.url = `${ctx.baseUrl}/api/v0-file/metadata/${v.digest}?fileSize=${v.fileSize}`;
      return out;
    case 'person-name':
      out.value = v.value;
      out.readable = readablePersonName(v.value);
      return out;
    case 'postal-address':
      out.value = v.value;
      out.readable = readablePostalAddress(v.value);
      return out;
    case 'telephone-number':
      out.value = v.value;
      out.readable = readableTelephone(v.value);
      return out;
    case 'integer':
    case 'number':
      // Haplo serialises every plain value in its string form.
      out.value = String(v.value);
      return out;
    default:
      out.value = v.value;
      return out;
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
  // Haplo's workflow `target` is kept in the work unit's tags; `url` is the admin API's address of the work unit.
  ...(ctx.sources.includes('std:workflow') ? { state: w.state, target: w.tags.target ?? null, url: `${ctx.baseUrl}/api/admin/workflows/${w.id}` } : {}),
});

/** The `svc:object:0` serialisation (haplo-behaviour.md §5.4), keys in Haplo's order. */
export const serialiseObject = (doc: ObjectDoc, ctx: SerialiseContext) => {
  const type = ctx.schema.types.get(doc.objectType);
  const behaviour = behaviourOf(doc);
  const attributes: Record<string, unknown[]> = {};
  for (const code in doc.attributes) {
    const values = doc.attributes[code]!;
    const out = new Array<unknown>(values.length);
    for (let i = 0; i < values.length; i++) out[i] = serialiseValue(code, values[i]!, ctx);
    attributes[code] = out;
  }
  const username = ctx.usernames?.get(doc.ref);
  const object: Record<string, unknown> = {
    kind: 'svc:object:0',
    sources: ctx.sources,
    ref: doc.ref,
    url: objectUrl(ctx.baseUrl, doc.ref, doc.title, ctx.slugs),
  };
  if (behaviour) object.behaviour = behaviour;
  object.recordVersion = doc.recordVersion;
  object.title = doc.title;
  object.labels = doc.labels.map((code) => {
    const label = ctx.schema.labels.get(code);
    return { ref: label?.ref ?? '', title: label?.name ?? code, code };
  });
  object.deleted = doc.deleted;
  object.creationDate = doc.creationDate;
  object.lastModificationDate = doc.lastModificationDate;
  object.type = type
    ? { code: type.code, name: type.name, rootCode: type.rootCode, annotations: type.annotations }
    : { code: 'UNKNOWN', name: 'UNKNOWN', rootCode: 'UNKNOWN', annotations: [] };
  object.attributes = attributes;
  if (ctx.workUnits) object.workflows = ctx.workUnits.map((w) => serialiseWorkUnit(w, ctx));
  if (username) object.username = username;
  return object;
};

/** Refs of objects an object links to (not schema items), each once, in order of first appearance. */
export const linkedRefs = (doc: ObjectDoc, schema: Schema): string[] => {
  const refs = new Set<string>();
  for (const code in doc.attributes) {
    for (const v of doc.attributes[code]!) if (v.type === 'link' && !refs.has(v.ref) && !schema.byRef(v.ref)) refs.add(v.ref);
  }
  return [...refs];
};
