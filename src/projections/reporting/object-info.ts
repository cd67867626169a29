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
