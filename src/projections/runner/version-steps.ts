import type { WriteOp } from '../read-store.ts';

/** Steps remembered: a cache further behind than this drops everything. */
const STEPS = 64;
/** Ids one step may name; a commit writing more (a catch-up) is remembered as "anything changed". */
export const STEP_IDS = 4096;
/** Ids all the steps kept may name together (each runner keeps its own: a few hundred kilobytes at most). */
const KEPT_IDS = 2 * STEP_IDS;

/**
 * The ids a step wrote or removed, by collection; undefined when they are not known. Where `every`
 * is false only the collections in `ids` are known (the others may have changed anyhow).
 */
type Step = { readonly version: number; readonly ids: ReadonlyMap<string, ReadonlySet<string>> | undefined; readonly every: boolean };

/**
 * What each recent move of a projection's version changed: the documents its own commits wrote
 * (by collection), those another process's commits wrote where the projector names them from the
 * events (Projector.documentsOf), or "not known" (a rebuild switched in, a restart). A cache of
 * values derived from single documents then drops only the values of the documents that changed,
 * rather than everything whenever any document did: under a writer every 100 ms, the object GET
 * caches had been emptied ten times a second. Bounded: the last STEPS steps, each of at most
 * STEP_IDS ids, KEPT_IDS in all.
 */
export class VersionSteps {
  private readonly steps: Step[] = [];
  /** Ids named by the steps kept. */
  private ids = 0;

  /** The version moved to `version` on a commit of `ops`. */
  committed(version: number, ops: readonly WriteOp[]): void {
    this.push({ version, ids: ops.length > STEP_IDS ? undefined : idsOf(ops), every: true });
  }

  /**
   * The version moved to `version` on another process's commit, of which the documents of the
   * collections in `ids` are known (the others are not). Undefined: none is known.
   */
  observed(version: number, ids: ReadonlyMap<string, ReadonlySet<string>> | undefined): void {
    this.push({ version, ids: countOf(ids) > STEP_IDS ? undefined : ids, every: false });
  }

  /** The version moved to `version` for a reason that names no documents. */
  moved(version: number): void {
    this.push({ version, ids: undefined, every: false });
  }

  private push(step: Step): void {
    this.steps.push(step);
    this.ids += countOf(step.ids);
    while (this.steps.length > STEPS || (this.ids > KEPT_IDS && this.steps.length > 1)) this.ids -= countOf(this.steps.shift()!.ids);
  }

  /**
   * The ids of `collection` changed by the steps after `version` up to `current`, or undefined when
   * that is not known (a step names no ids, or is no longer remembered).
   */
  changedSince(collection: string, version: number, current: number): ReadonlySet<string> | undefined {
    if (version === current) return new Set();
    if (version > current) return undefined;
    const changed = new Set<string>();
    let next = version + 1;
    for (const step of this.steps) {
      if (step.version <= version) continue;
      // A step not remembered (or versions that moved without one) between: not known.
      if (step.version !== next || step.ids === undefined) return undefined;
      const ids = step.ids.get(collection);
      if (ids === undefined && !step.every) return undefined;
      for (const id of ids ?? []) changed.add(id);
      if (step.version === current) return changed;
      next++;
    }
    return undefined;
  }
}

const idsOf = (ops: readonly WriteOp[]): Map<string, Set<string>> => {
  const ids = new Map<string, Set<string>>();
  for (const op of ops) {
    let set = ids.get(op.collection);
    if (!set) ids.set(op.collection, (set = new Set()));
    set.add(op.kind === 'put' ? op.doc.id : op.id);
  }
  return ids;
};

const countOf = (ids: Step['ids']): number => {
  let n = 0;
  for (const set of ids?.values() ?? []) n += set.size;
  return n;
};
