import { MemoryDocs } from '../batch-docs.ts';
import type { Doc } from '../read-store.ts';
import { withId } from './snapshot-chunks.ts';
import type { TextBlock } from './text-block.ts';
import { noPause, type Pause } from '../projector.ts';

/** Documents read (parsed where they are not yet) between two pauses. */
const DOC_SLICE = 128;
/** Entries copied between two pauses (a copy only moves references). */
const COPY_SLICE = 4096;

/**
 * One collection of a fold state loaded from a snapshot: documents kept as their JSON text until
 * first read, then parsed once. An answer "as at" an instant reads the rows and the objects they
 * mention, a fraction of the state it loads; parsing everything was most of what loading cost.
 * Iterating parses whatever is left. An unparsed text is a string of its own (never a slice of a
 * larger one) or a text of a TextBlock, made a string when read; what the map weighs is its
 * documents and those texts (`unparsedChars`). A block's parsed texts stay until the last of its
 * documents is parsed or dropped: that count leaves them out.
 */
export class LazyDocMap extends Map<string, Doc> {
  /**
   * Documents not read here yet. A cell is shared with the copies of this map: a document parsed
   * through one of them is parsed for all (answers from one kept state read mostly the same ones).
   */
  private readonly raw = new Map<string, Cell>();
  /** Characters of the texts in `raw`. */
  private rawChars = 0;
  /**
   * The kept map this one is a view of (see `view`): what this one neither holds nor has removed
   * is read there. Never changed through this one.
   */
  private base: LazyDocMap | undefined;
  /** Ids the base holds that were removed here. */
  private readonly removed = new Set<string>();

  /**
   * A map that reads `base` wherever it holds nothing of its own and keeps its own changes: a
   * replay onto a kept state for one answer changes a few documents of tens of thousands, and
   * copying them all took about as long as the replay. `base` must not change while views of it live.
   */
  static view(base: LazyDocMap): LazyDocMap {
    const out = new LazyDocMap();
    out.base = base;
    return out;
  }

  /** Whether the base's version of `id` is the one this map shows. */
  private fromBase(id: string): boolean {
    return !super.has(id) && !this.raw.has(id) && this.baseShows(id);
  }

  /** `fromBase` where this map is known to hold nothing of `id` itself (its lookups already missed). */
  private baseShows(id: string): boolean {
    return this.base !== undefined && !this.removed.has(id);
  }

  /** Takes in what the base shows, so this map holds everything itself (to iterate or count it). */
  private detach(): void {
    const base = this.base;
    if (base === undefined) return;
    // The base's parsed documents (Map's own entries: the override would parse the rest).
    for (const [id, doc] of Map.prototype.entries.call(base) as MapIterator<[string, Doc]>) if (this.fromBase(id)) super.set(id, doc);
    for (const [id, cell] of base.raw) if (this.fromBase(id)) this.putRaw(id, cell);
    this.base = undefined;
    this.removed.clear();
  }

  /** A document as JSON text (without its id member when `idless`). */
  setRaw(id: string, json: string, idless = false): void {
    this.setCell(id, { json, block: undefined, index: 0, chars: json.length, idless, doc: undefined, part: undefined });
  }

  /** A document as the `index`th text of `block` (see setRaw). */
  setText(id: string, block: TextBlock, index: number, idless = false): void {
    this.setCell(id, { json: undefined, block, index, chars: block.size(index), idless, doc: undefined, part: undefined });
  }

  private setCell(id: string, cell: Cell): void {
    super.delete(id);
    if (this.base !== undefined) this.removed.delete(id);
    this.putRaw(id, cell);
  }

  private putRaw(id: string, cell: Cell): void {
    this.dropRaw(id);
    this.raw.set(id, cell);
    this.rawChars += cell.chars;
  }

  private dropRaw(id: string): boolean {
    const cell = this.raw.get(id);
    if (cell === undefined) return false;
    this.raw.delete(id);
    this.rawChars -= cell.chars;
    return true;
  }

  /** Documents not read here yet. */
  get unparsed(): number {
    this.detach();
    return this.raw.size;
  }

  /** Characters of the texts of the documents not read here yet (what they weigh besides their entries). */
  get unparsedChars(): number {
    this.detach();
    return this.rawChars;
  }

  override get(id: string): Doc | undefined {
    const doc = super.get(id);
    if (doc !== undefined) return doc;
    const cell = this.raw.get(id);
    if (cell === undefined) return this.baseShows(id) ? this.base!.get(id) : undefined;
    const parsed = cell.doc ?? parse(id, cell);
    this.dropRaw(id);
    super.set(id, parsed);
    return parsed;
  }

  override has(id: string): boolean {
    return super.has(id) || this.raw.has(id) || (this.fromBase(id) && this.base!.has(id));
  }

  override set(id: string, doc: Doc): this {
    // Map's constructor may call set before the fields exist.
    if (this.raw !== undefined) this.dropRaw(id);
    if (this.base !== undefined) this.removed.delete(id);
    return super.set(id, doc);
  }

  override delete(id: string): boolean {
    const baseHas = this.base?.has(id) === true;
    const shown = baseHas && this.fromBase(id);
    const had = this.dropRaw(id);
    if (baseHas) this.removed.add(id);
    return super.delete(id) || had || shown;
  }

  override clear(): void {
    this.base = undefined;
    this.removed.clear();
    this.raw.clear();
    this.rawChars = 0;
    super.clear();
  }

  override get size(): number {
    this.detach();
    return super.size + this.raw.size;
  }

  /**
   * What `fromJson` makes of a document's JSON text (which may lack its id member: see setRaw), or
   * `fromDoc` of the document where it is parsed already, without parsing it here: for an answer
   * that reads a few fields of many documents. What `fromJson` returns is kept with the text for
   * the next caller (and the copies of this map), so it must be the same function for every caller.
   */
  part<P>(id: string, fromJson: (json: string) => P, fromDoc: (doc: Doc) => P): P | undefined {
    const doc = super.get(id);
    if (doc !== undefined) return fromDoc(doc);
    const cell = this.raw.get(id);
    if (cell === undefined) return this.baseShows(id) ? this.base!.part(id, fromJson, fromDoc) : undefined;
    if (cell.doc !== undefined) return fromDoc(cell.doc);
    return (cell.part ??= fromJson(textOf(cell))) as P;
  }

  /** Every id, parsing nothing (a view takes in what its base shows first). */
  ids(): string[] {
    this.detach();
    return [...super.keys(), ...this.raw.keys()];
  }

  /** The documents parsed so far, here or through a copy (parses nothing). */
  *parsed(): Generator<Doc> {
    this.detach();
    yield* super.values();
    for (const cell of this.raw.values()) if (cell.doc !== undefined) yield cell.doc;
  }

  private parseAll(): void {
    this.detach();
    for (const id of [...this.raw.keys()]) this.get(id);
  }

  override keys(): MapIterator<string> {
    this.parseAll();
    return super.keys();
  }

  override values(): MapIterator<Doc> {
    this.parseAll();
    return super.values();
  }

  override entries(): MapIterator<[string, Doc]> {
    this.parseAll();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, Doc]> {
    return this.entries();
  }

  override forEach(callback: (value: Doc, key: string, map: Map<string, Doc>) => void, thisArg?: unknown): void {
    this.parseAll();
    super.forEach(callback, thisArg);
  }

  /**
   * A copy sharing the documents (parsed or not): replays never change a document in place. Made
   * a slice at a time, from lists taken at once: a document parsed meanwhile (it moves from the
   * unparsed cells to the parsed ones) stays in the copy's cell, which shares the parse.
   */
  async copy(pause: Pause = noPause): Promise<LazyDocMap> {
    this.detach();
    const parsed = [...super.entries()];
    const cells = [...this.raw];
    const out = new LazyDocMap();
    for (let i = 0; i < parsed.length; i++) {
      out.set(parsed[i]![0], parsed[i]![1]);
      if (i % COPY_SLICE === COPY_SLICE - 1) await pause();
    }
    for (let i = 0; i < cells.length; i++) {
      out.putRaw(cells[i]![0], cells[i]![1]);
      if (i % COPY_SLICE === COPY_SLICE - 1) await pause();
    }
    return out;
  }
}

/**
 * A document's JSON text (a string, or a text of a block) until some copy parses it, then the
 * document; its size, and what `part` made of the text.
 */
type Cell = { json: string | undefined; block: TextBlock | undefined; readonly index: number; readonly chars: number; readonly idless: boolean; doc: Doc | undefined; part: unknown };

const textOf = (cell: Cell): string => cell.json ?? cell.block!.text(cell.index);

/** Parses a cell's text for every copy sharing it, and lets the text go. */
const parse = (id: string, cell: Cell): Doc => {
  const text = textOf(cell);
  cell.doc = JSON.parse(cell.idless ? withId(id, text) : text) as Doc;
  cell.json = undefined;
  cell.block = undefined;
  return cell.doc;
};

/** The collection `name` of `state` as a LazyDocMap (one is put in its place if it holds another kind of map). */
export const lazyCollection = (state: MemoryDocs, name: string): LazyDocMap => {
  const found = state.collections.get(name);
  if (found instanceof LazyDocMap) return found;
  const lazy = new LazyDocMap();
  if (found) for (const [id, doc] of found) lazy.set(id, doc);
  state.collections.set(name, lazy);
  return lazy;
};

const eachCollection = (state: MemoryDocs, lazy: (docs: LazyDocMap) => LazyDocMap): MemoryDocs => {
  const out = new MemoryDocs();
  for (const [name, docs] of state.collections) out.collections.set(name, docs instanceof LazyDocMap ? lazy(docs) : new Map(docs));
  return out;
};

/** A copy of a state to replay further events onto, keeping what is not parsed unparsed. */
export const copyState = async (state: MemoryDocs, pause: Pause): Promise<MemoryDocs> => {
  const out = new MemoryDocs();
  for (const [name, docs] of state.collections) out.collections.set(name, docs instanceof LazyDocMap ? await docs.copy(pause) : new Map(docs));
  return out;
};

/**
 * Calls `each` with every document of a fold collection, `pause` between slices: a lazy map
 * parses them one by one as they are read instead of all at once.
 */
export const eachDoc = async (docs: ReadonlyMap<string, Doc>, each: (doc: Doc) => void, pause: Pause): Promise<void> => {
  const ids = docs instanceof LazyDocMap ? docs.ids() : [...docs.keys()];
  for (let i = 0; i < ids.length; i++) {
    const doc = docs.get(ids[i]!);
    if (doc !== undefined) each(doc);
    if (i % DOC_SLICE === DOC_SLICE - 1) await pause();
  }
};

/**
 * A state to replay onto for one answer, reading `state` for what the replay leaves alone (see
 * LazyDocMap.view); `state` must not change while it is read so.
 */
export const viewState = (state: MemoryDocs): MemoryDocs => eachCollection(state, LazyDocMap.view);
