/**
 * Value filters (haplo-behaviour.md §3.9). An instruction's `filters` run in order after
 * `mapInputValue` and before the data-type conversion. The engine calls `make` once per batch, so a
 * filter may keep state in its closure; a filter returns `undefined` for "no value".
 */
import { isRef } from '../../domain/objects/ref.ts';
import { RefValue, type ImportLookups } from '../../domain/control-file.ts';

export type FilterFunction = (value: unknown) => unknown | Promise<unknown>;

export interface FilterDef {
  readonly description: string;
  make(lookups: ImportLookups): FilterFunction;
}

const toRef = (ref: string | undefined): RefValue | undefined => (ref === undefined ? undefined : new RefValue(ref));

const URL_COULD_BE_FIXED = /^[a-zA-Z][a-zA-Z+.\-/]+$/;

export const FILTERS: Readonly<Record<string, FilterDef>> = Object.freeze({
  'svc:string-to-ref': {
    description: 'Convert a string representation of a ref into the Ref value. Refs pass through; anything else gives no value.',
    make: () => (value: unknown) => {
      if (value instanceof RefValue) return value;
      return isRef(value) ? new RefValue(value) : undefined;
    },
  },
  'svc:code-to-ref': {
    description: 'Convert a behaviour code into the Ref of the object with that configured behaviour. Refs pass through.',
    make: (lookups) => {
      // Behaviour codes do not move between objects, so found refs are kept for the batch.
      const found = new Map<string, RefValue>();
      return async (value: unknown) => {
        if (value instanceof RefValue) return value;
        if (typeof value !== 'string') return undefined;
        const cached = found.get(value);
        if (cached) return cached;
        const ref = toRef(await lookups.refByBehaviour(value));
        if (ref) found.set(value, ref);
        return ref;
      };
    },
  },
  'svc:username-to-ref': {
    description: 'Convert a username (case-insensitive) into the Ref of the user’s profile object.',
    // Not cached: a user-sync batch may create the user this very batch looks up later.
    make: (lookups) => async (value: unknown) =>
      typeof value === 'string' ? toRef(await lookups.profileRefByUsername(value.toLowerCase())) : undefined,
  },
  'svc:email-to-ref': {
    description: 'Convert the email address of a user into the Ref of the user’s profile object.',
    make: (lookups) => async (value: unknown) => (typeof value === 'string' ? toRef(await lookups.profileRefByEmail(value)) : undefined),
  },
  'svc:fix-up-url': {
    description: 'Add https:// to URLs without a scheme, such as www.example.org.',
    make: () => (value: unknown) => {
      if (typeof value !== 'string') return undefined;
      return !value.includes(':') && URL_COULD_BE_FIXED.test(value) ? `https://${value}` : value;
    },
  },
  'svc:to-lower-case': {
    description: 'Convert text to lower case. Other values pass through.',
    make: () => (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value),
  },
  'svc:to-upper-case': {
    description: 'Convert text to upper case. Other values pass through.',
    make: () => (value: unknown) => (typeof value === 'string' ? value.toUpperCase() : value),
  },
  'svc:to-string': {
    description: 'Convert any value to text, for example numbers to their decimal representation.',
    make: () => (value: unknown) => (value === undefined || value === null ? undefined : String(value)),
  },
});

export const filterNames: readonly string[] = Object.keys(FILTERS);

/** Instantiates every filter for one batch (filter instances may hold per-batch state). */
export const makeFilterInstances = (lookups: ImportLookups): ReadonlyMap<string, FilterFunction> =>
  new Map(Object.entries(FILTERS).map(([name, def]) => [name, def.make(lookups)]));

/**
 * The filter instances of one batch, each made when it is first asked for (`get`): a batch uses
 * few of them. Iterating shows only those made so far.
 */
export class BatchFilters extends Map<string, FilterFunction> {
  constructor(private readonly lookups: ImportLookups) {
    super();
  }

  override get(name: string): FilterFunction | undefined {
    let made = super.get(name);
    if (!made && Object.hasOwn(FILTERS, name)) super.set(name, (made = FILTERS[name]!.make(this.lookups)));
    return made;
  }
}
