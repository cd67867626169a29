import type { Pause } from '../projections/projector.ts';

/** Elements sorted at once, and merged, between two calls of `pause`. */
const RUN = 512;

/**
 * `items` sorted by `compare` (a new array; equal elements keep their order), with `pause` called
 * every RUN elements sorted or merged: sorting tens of thousands of strings at once holds the event
 * loop for milliseconds, while the requests behind an answer wait for one run at most.
 */
export const sortPaused = async <T>(items: readonly T[], compare: (a: T, b: T) => number, pause: Pause): Promise<T[]> => {
  let from: T[] = [];
  for (let i = 0; i < items.length; i += RUN) {
    from.push(...items.slice(i, i + RUN).sort(compare));
    await pause();
  }
  let to = new Array<T>(from.length);
  for (let width = RUN; width < from.length; width *= 2) {
    let since = 0;
    for (let lo = 0; lo < from.length; lo += 2 * width) {
      const mid = Math.min(lo + width, from.length);
      const hi = Math.min(lo + 2 * width, from.length);
      let a = lo;
      let b = mid;
      for (let k = lo; k < hi; k++) {
        to[k] = a < mid && (b >= hi || compare(from[b]!, from[a]!) >= 0) ? from[a++]! : from[b++]!;
        if (++since === RUN) {
          since = 0;
          await pause();
        }
      }
    }
    [from, to] = [to, from];
  }
  return from;
};

/** Strings in code-unit order, as Array.prototype.sort orders them without a comparator. */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The index among `length` sorted items where `compare` (the item against the one looked for) is 0, or -1. */
export const binarySearch = (length: number, compare: (i: number) => number): number => {
  let lo = 0;
  let hi = length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const d = compare(mid);
    if (d === 0) return mid;
    if (d < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
};
