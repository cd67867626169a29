import type { DocAccess } from './projector.ts';
import type { Doc } from './read-store.ts';

/** Documents a fold's step reads and writes without waiting (see attempt). */
export interface HeldDocs {
  get<T extends Doc = Doc>(collection: string, id: string): T | null;
  put(collection: string, doc: Doc): void;
  delete(collection: string, id: string): void;
}

/** Thrown through a step when a document it reads is not at hand; not an Error, as no stack is wanted. */
class Miss {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {}
}

/**
 * One run of a step: reads see the run's own writes first, then what the caller fetched for it,
 * then what `docs` holds at hand. Writes reach `docs` only when the run completes.
 */
class Run implements HeldDocs {
  /** Newest last; a step writes a few documents, so reads look them up by a scan. */
  private writes: [collection: string, id: string, doc: Doc | null][] = [];
  private fetched: [collection: string, id: string, doc: Doc | null][] = [];

  constructor(private readonly docs: DocAccess) {}

  get<T extends Doc = Doc>(collection: string, id: string): T | null {
    for (let i = this.writes.length - 1; i >= 0; i--) {
      const [c, d, doc] = this.writes[i]!;
      if (d === id && c === collection) return doc as T | null;
    }
    for (const [c, d, doc] of this.fetched) if (d === id && c === collection) return doc as T | null;
    const held = this.docs.peek?.<T>(collection, id);
    if (held === undefined) throw new Miss(collection, id);
    return held;
  }

  put(collection: string, doc: Doc): void {
    this.writes.push([collection, doc.id, doc]);
  }

  delete(collection: string, id: string): void {
    this.writes.push([collection, id, null]);
  }

  async fetch(miss: Miss): Promise<void> {
    this.fetched.push([miss.collection, miss.id, await this.docs.get(miss.collection, miss.id)]);
  }

  /** The run's writes, in the order they were made (a document written twice ends as it was last). */
  commit(): void {
    for (const [collection, id, doc] of this.writes) {
      if (doc) this.docs.put(collection, doc);
      else this.docs.delete(collection, id);
    }
  }

  restart(): void {
    this.writes = [];
  }
}

/**
 * Runs `step` synchronously over the documents `docs` has at hand, and gives its result without a
 * promise when it needed nothing else: a rebuild from the start, or an answer replayed in memory,
 * never waits, and a promise (with its continuation) per read was a large part of what a fold
 * allocated per event. When the step reads a document `docs` cannot give at once, the run is
 * dropped, the document is fetched, and the step runs again from its start with it: a step must
 * therefore depend only on what it reads, and a dropped run's writes never reach `docs`. Each run
 * fetches one more document, so a step that reads n documents not at hand runs n + 1 times: keep
 * steps small (one document and what it links to), not a whole cascade of them.
 */
export const attempt = <A, R>(docs: DocAccess, step: (docs: HeldDocs, arg: A) => R, arg: A): R | Promise<R> => {
  const run = new Run(docs);
  const result = once(run, step, arg);
  return result instanceof Miss ? retry(run, step, arg, result) : result;
};

/** The step's result, its writes given to `docs`; or the miss that cut it short, having written nothing. */
const once = <A, R>(run: Run, step: (docs: HeldDocs, arg: A) => R, arg: A): R | Miss => {
  try {
    const result = step(run, arg);
    run.commit();
    return result;
  } catch (e) {
    if (e instanceof Miss) return e;
    throw e;
  }
};

const retry = async <A, R>(run: Run, step: (docs: HeldDocs, arg: A) => R, arg: A, miss: Miss): Promise<R> => {
  for (;;) {
    run.restart();
    await run.fetch(miss);
    const result = once(run, step, arg);
    if (!(result instanceof Miss)) return result;
    miss = result;
  }
};
