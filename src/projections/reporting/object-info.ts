import type { AttributeValue, Attributes } from '../../domain/objects/values.ts';

/**
 * What a collection's fold keeps of every store object: enough to compute its facts (only the
 * attributes the collection reads) and to describe it in the `objects` dictionary.
 */
export type ObjectInfo = {
  readonly id: string;
  readonly objectType: string;
  readonly title: string;
  readonly parent: string | null;
  readonly behaviour: string | null;
  readonly deleted: boolean;
  readonly labels: readonly string[];
  readonly attributes: Attributes;
};

export const firstLink = (values: readonly AttributeValue[] | undefined): string | null => {
  const v = values?.find((x) => x.type === 'link');
  return v && v.type === 'link' ? v.ref : null;
};

/** What an answer says of an object the rows name: who may read it (labels) and how it is described. */
export type ObjectDescription = Pick<ObjectInfo, 'title' | 'parent' | 'behaviour' | 'labels'>;

const ATTRIBUTES_KEY = ',"attributes":';

const isDescription = (d: unknown): d is ObjectDescription => {
  if (typeof d !== 'object' || d === null) return false;
  const o = d as Record<string, unknown>;
  return (
    typeof o.title === 'string' &&
    (o.parent === null || typeof o.parent === 'string') &&
    (o.behaviour === null || typeof o.behaviour === 'string') &&
    Array.isArray(o.labels)
  );
};

/** An object's description: a new object holding only those fields. */
export const described = ({ title, parent, behaviour, labels }: ObjectDescription): ObjectDescription => ({ title, parent, behaviour, labels });

/**
 * The description of an object from its fold document's JSON text, without parsing its attributes:
 * the fold writes them last, and they are most of the text (an `at` answer describes about 18,000
 * objects and reads none of their attributes). JSON text never holds an unescaped quote inside a
 * string, so the first `,"attributes":` is a key; the text before it, closed, is the rest of the
 * document. A document written otherwise (attributes not last, a field missing) is parsed whole.
 */
export const describeObject = (json: string): ObjectDescription => {
  const cut = json.indexOf(ATTRIBUTES_KEY);
  if (cut > 0) {
    try {
      const head: unknown = JSON.parse(`${json.slice(0, cut)}}`);
      if (isDescription(head)) return described(head);
    } catch {
      // Not the fold's layout: read below as a whole.
    }
  }
  return described(JSON.parse(json) as ObjectInfo);
};
