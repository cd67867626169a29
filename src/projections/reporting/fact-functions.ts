import type { ObjectInfo } from './object-info.ts';

/**
 * The extension point for facts that need code. A function gets the row's object (as the fold
 * keeps it) and a look-up of other objects, and returns the raw value, normalised afterwards to the
 * fact's declared type like any other. It must be pure: the same inputs, the same value, so that
 * answers "as at" a past time equal the live rows as they were.
 */
export type FactFunction = (object: ObjectInfo, lookup: (ref: string) => ObjectInfo | undefined) => unknown;

/** Facts a function reads must be known to the fold: list the attribute codes each one uses. */
export interface FactFunctionDef {
  readonly attributes: readonly string[];
  /**
   * How many links deep the function looks objects up. Unset: as deep as the fold looks ahead for
   * any row (three links along every attribute it keeps), which costs every row that walk; 0 for
   * a function that reads only its own object.
   */
  readonly follows?: number;
  readonly compute: FactFunction;
}

export const FACT_FUNCTIONS: Readonly<Record<string, FactFunctionDef>> = {
  /** PhD progress (a number from 0 to 1) as a whole percentage. */
  'phd:progress-percent': {
    attributes: ['phd:attribute:progress'],
    follows: 0,
    compute: (object) => {
      const v = object.attributes['phd:attribute:progress']?.[0];
      return v && v.type === 'number' ? Math.round(v.value * 100) : null;
    },
  },
};
