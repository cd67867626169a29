/** What JSON.stringify writes for a value inside an array: undefined, functions and non-finite numbers become null. */
const inArray = (v: unknown): unknown =>
  v === undefined || typeof v === 'function' || typeof v === 'symbol' || (typeof v === 'number' && !Number.isFinite(v)) ? null : v;

/** Whether JSON.stringify leaves a property out. */
const omitted = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * `JSON.stringify(a) === JSON.stringify(b)` without writing either: the fold compares every
 * recomputed row with the stored one, and encoding both was a large share of its time. Key order
 * counts, as it does in the JSON. Values are plain JSON data (no toJSON).
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return !Number.isFinite(a) && !Number.isFinite(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    // null and a non-finite number are both written as null.
    const nullish = (v: unknown) => v === null || (typeof v === 'number' && !Number.isFinite(v));
    return nullish(a) && nullish(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bs = b as unknown[];
    if (a.length !== bs.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(inArray(a[i]), inArray(bs[i]))) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => !omitted(ao[k]));
  const bk = Object.keys(bo).filter((k) => !omitted(bo[k]));
  if (ak.length !== bk.length) return false;
  for (let i = 0; i < ak.length; i++) if (ak[i] !== bk[i] || !sameJson(ao[ak[i]!], bo[bk[i]!])) return false;
  return true;
};
