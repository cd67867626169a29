/**
 * Single byte ranges of RFC 9110 §14: `Range: bytes=first-last`, `bytes=first-` and `bytes=-suffix`.
 * A header that does not parse, names another unit, or asks for several ranges is ignored (the
 * whole content is sent, as the RFC allows); a well-formed range that selects nothing is
 * unsatisfiable (416).
 */
export type RangeDecision =
  | { readonly kind: 'full' }
  | { readonly kind: 'partial'; readonly start: number; readonly end: number }
  | { readonly kind: 'unsatisfiable' };

const SINGLE = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i;
const FULL = { kind: 'full' } as const;
const UNSATISFIABLE = { kind: 'unsatisfiable' } as const;

export const decideRange = (header: string | undefined, size: number): RangeDecision => {
  if (header === undefined || header === '') return FULL;
  const match = SINGLE.exec(header);
  if (!match) return FULL;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return FULL;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return UNSATISFIABLE;
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start)) return UNSATISFIABLE;
  if (last !== '' && Number(last) < start) return UNSATISFIABLE;
  if (start >= size) return UNSATISFIABLE;
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return { kind: 'partial', start, end };
};

/** `If-Range` with an entity tag: the range applies only when it names the current one (strong comparison). */
export const ifRangeAllows = (ifRange: string | undefined, etag: string): boolean =>
  ifRange === undefined || ifRange === '' || ifRange.trim() === etag;

/** Whether `If-None-Match` names this entity tag (weak comparison, as RFC 9110 asks for GET). */
export const noneMatch = (ifNoneMatch: string | undefined, etag: string): boolean => {
  if (ifNoneMatch === undefined || ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => bare(tag) === bare(etag));
};
