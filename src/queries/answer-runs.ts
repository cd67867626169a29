/**
 * What lets a collection-data answer made after a write keep most of the answer before it: its rows
 * and objects cut into runs at places chosen by their ids alone, so that a change moves the cuts only
 * around itself and every other run keeps its bytes (content-defined chunking, as rsync and backup
 * tools cut files), and counts that an answer changes for a few keys without copying the others.
 */

/** Items in a run, on average (a power of two). */
const RUN = 128;
/** A run is cut here whatever its ids, so that no run is more than a few slices of text long. */
const MAX_RUN = 8 * RUN;

/** FNV-1a of a key's code units, its high bits folded in. */
const hashOf = (key: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 16);
};

/** Whether a run starts at the item with `key`, whatever comes before it. */
export const cutsBefore = (key: string): boolean => (hashOf(key) & (RUN - 1)) === 0;

/**
 * One bit of 32 for each of `keys` (a one-word Bloom filter): two sets of keys whose bits do not
 * meet have no key in common, so a row is checked against the objects changed only when they might.
 */
export const keyBits = (keys: Iterable<string>): number => {
  let bits = 0;
  for (const k of keys) bits |= 1 << (hashOf(k) >>> 27);
  return bits;
};

/** Where the run starting at item `start` of `length` ends: at the next item `cut` says starts one, or MAX_RUN on. */
export const runEnd = (start: number, length: number, cut: (i: number) => boolean): number => {
  let end = start + 1;
  while (end < length && end - start < MAX_RUN && !cut(end)) end++;
  return end;
};

/** Characters of JSON text encoded into one slice of bytes (a slice is encoded and copied at once). */
const SLICE_CHARS = 64 * 1024;

/**
 * The text of a run of items as slices of bytes, each item's text preceded by a comma (the answer
 * drops the first one: `joinRuns`), in slices of about SLICE_CHARS characters.
 */
export class RunText {
  private readonly slices: Buffer[] = [];
  private text = '';

  add(json: string): void {
    this.text += `,${json}`;
    if (this.text.length >= SLICE_CHARS) this.flush();
  }

  end(): Buffer[] {
    this.flush();
    return this.slices;
  }

  private flush(): void {
    if (this.text.length === 0) return;
    this.slices.push(Buffer.from(this.text));
    this.text = '';
  }
}

/** The slices of runs made by RunText, as the items of a JSON array or object: with no comma before the first. */
export const joinRuns = (out: Buffer[], runs: readonly { readonly slices: readonly Buffer[] }[]): void => {
  let first = true;
  for (const run of runs) {
    for (const slice of run.slices) {
      out.push(first ? slice.subarray(1) : slice);
      first = false;
    }
  }
};

/**
 * Counts by key, as an answer leaves them for the next: a new Counts takes the one before's and
 * holds only its own changes on top of them, folded in once they are many. Copying tens of thousands
 * of counts for every answer after a write was a good part of that answer's time.
 */
export class Counts {
  private constructor(
    private readonly base: ReadonlyMap<string, number>,
    /** Counts changed since `base` (0: gone). */
    private readonly own: Map<string, number>,
  ) {}

  /** Counts starting as `before`'s (never changed by this one's changes), or empty. */
  static from(before?: Counts): Counts {
    if (!before) return new Counts(new Map(), new Map());
    if (before.own.size * 8 <= before.base.size + 64) return new Counts(before.base, new Map(before.own));
    const folded = new Map(before.base);
    for (const [k, n] of before.own) {
      if (n === 0) folded.delete(k);
      else folded.set(k, n);
    }
    return new Counts(folded, new Map());
  }

  get(key: string): number {
    const n = this.own.get(key);
    return n !== undefined ? n : (this.base.get(key) ?? 0);
  }

  has(key: string): boolean {
    return this.get(key) > 0;
  }

  add(key: string, by: number): void {
    this.own.set(key, this.get(key) + by);
  }

  /** The keys counted, in no particular order. */
  keys(): string[] {
    const out: string[] = [];
    for (const k of this.base.keys()) if (this.get(k) > 0) out.push(k);
    for (const [k, n] of this.own) if (n > 0 && !this.base.has(k)) out.push(k);
    return out;
  }

  /** Entries held (what the state weighs). */
  get held(): number {
    return this.base.size + this.own.size;
  }
}
