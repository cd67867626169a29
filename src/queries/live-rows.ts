import type { ReadStore } from '../projections/read-store.ts';
import type { RowDoc } from '../projections/read-models.ts';
import { collectionNames, projectionName } from '../projections/reporting/collection-fold.ts';
import type { ChangedObjects } from './changed-objects.ts';
import { OneAtATime } from './one-at-a-time.ts';
import type { RowTextMemo } from './collection-members.ts';
import { binarySearch, byCodeUnits } from './paused-sort.ts';
import type { Pause } from '../projections/projector.ts';

interface Mirror {
  /** The checkpoint every row is at least as new as. */
  position: number;
  generation: number;
  readonly rows: Map<string, RowDoc>;
  /** Rows by the objects their facts read through links (RowDoc.linkedTo). */
  readonly linking: Map<string, Set<string>>;
  /** The rows in id order: a new array after a change (an answer being made keeps reading its own). */
  ordered: readonly RowDoc[];
  bytes: number;
}

/** Rows read from the store per call. */
const PAGE = 250;

// Heap bytes of a kept row, roughly: its strings (UTF-16 at worst) and the objects around them,
// and its JSON text kept in `texts` (about as long as its values, one byte a character).
const sizeOf = (row: RowDoc): number => {
  let n = 300 + 3 * row.id.length;
  for (const v of row.values) n += typeof v === 'string' ? 32 + 3 * v.length : Array.isArray(v) ? 32 + 56 * v.length : 24;
  for (const l of row.labels) n += 24 + 2 * l.length;
  for (const t of row.linkedTo) n += 64 + 2 * t.length;
  return n;
};

/**
 * The rows of live collection-data answers, kept between versions of the collection's projection
 * (as LiveInfos keeps the objects' descriptions): a request finds the object events recorded since
 * the checkpoint the rows were brought to and reads again only the rows of those objects and the
 * rows that read them through links (the fold changes a row only on those: RowDoc.linkedTo). New
 * rows are among the objects the events are about; a row gone from the store leaves the mirror.
 * A switched-in rebuild, a checkpoint gone back or a long way behind reads them all again; a
 * collection whose rows would take more than `maxBytes` is read each time.
 */
export class LiveRows {
  private readonly mirrors = new Map<string, Mirror>();
  /** One refresh per collection at a time: each moves its mirror's position. */
  private readonly refreshes = new OneAtATime();
  /**
   * The JSON text of the rows in answers, live and past (they go with their row documents: the rows
   * kept here, and those of the fold states kept for answers `at` past instants).
   */
  readonly texts: RowTextMemo = new WeakMap();

  constructor(
    private readonly reads: ReadStore,
    private readonly changes: ChangedObjects,
    readonly maxBytes: number,
  ) {}

  /** The collection's rows in id order, at least as new as its checkpoint when this is called. */
  rows(collection: string, pause: Pause): Promise<readonly RowDoc[]> {
    return this.refreshes.run(collection, () => this.refresh(collection, pause));
  }

  /** Bytes of the rows kept, over every collection. */
  get bytes(): number {
    let n = 0;
    for (const m of this.mirrors.values()) n += m.bytes;
    return n;
  }

  private async refresh(collection: string, pause: Pause): Promise<readonly RowDoc[]> {
    const table = collectionNames(collection).rows;
    const checkpoint = await this.reads.getCheckpoint(projectionName(collection));
    const generation = checkpoint?.generation ?? 0;
    let mirror = this.mirrors.get(collection);
    if (!checkpoint || (mirror && (mirror.generation !== generation || mirror.position > checkpoint.position))) mirror = undefined;
    if (mirror && mirror.position < checkpoint!.position) {
      const changed = await this.changes.since(mirror.position, checkpoint!.position);
      if (changed === undefined) mirror = undefined;
      else await this.reread(mirror, table, changed, pause);
    }
    if (!mirror) {
      this.mirrors.delete(collection);
      mirror = { position: 0, generation, rows: new Map(), linking: new Map(), ordered: [], bytes: 0 };
      await this.readAll(mirror, table, pause);
    }
    if (checkpoint) mirror.position = checkpoint.position;
    if (checkpoint && mirror.bytes <= this.maxBytes) this.mirrors.set(collection, mirror);
    else this.mirrors.delete(collection);
    return mirror.ordered;
  }

  /** Every row, a page per read, in id order. */
  private async readAll(mirror: Mirror, table: string, pause: Pause): Promise<void> {
    let last: string | undefined;
    const ordered: RowDoc[] = [];
    for (;;) {
      const page = await this.reads.find<RowDoc>(table, { ...(last !== undefined ? { where: { id: { $gt: last } } } : {}), sort: [['id', 'asc']], limit: PAGE });
      for (const row of page) {
        this.put(mirror, row);
        ordered.push(row);
      }
      await pause();
      if (page.length < PAGE) break;
      last = page[page.length - 1]!.id;
    }
    // The store sorts ids as bytes; refs are ASCII, where that is JavaScript's order too.
    mirror.ordered = inOrder(ordered) ? ordered : ordered.sort(byId);
  }

  /** The rows of the changed objects and of the rows linking them, read again. */
  private async reread(mirror: Mirror, table: string, changed: ReadonlySet<string>, pause: Pause): Promise<void> {
    const ids = new Set(changed);
    for (const ref of changed) for (const row of mirror.linking.get(ref) ?? []) ids.add(row);
    const list = [...ids];
    for (let i = 0; i < list.length; i += PAGE) {
      const slice = list.slice(i, i + PAGE);
      const found = await this.reads.getMany<RowDoc>(table, slice);
      for (const id of slice) {
        const row = found.get(id);
        if (row) this.put(mirror, row);
        else this.remove(mirror, id);
      }
      await pause();
    }
    mirror.ordered = reordered(mirror.ordered, ids, mirror.rows);
  }

  private put(mirror: Mirror, row: RowDoc): void {
    this.remove(mirror, row.id);
    mirror.rows.set(row.id, row);
    mirror.bytes += sizeOf(row);
    for (const t of row.linkedTo) {
      let set = mirror.linking.get(t);
      if (!set) mirror.linking.set(t, (set = new Set()));
      set.add(row.id);
    }
  }

  private remove(mirror: Mirror, id: string): void {
    const old = mirror.rows.get(id);
    if (!old) return;
    mirror.rows.delete(id);
    mirror.bytes -= sizeOf(old);
    for (const t of old.linkedTo) {
      const set = mirror.linking.get(t);
      set?.delete(id);
      if (set?.size === 0) mirror.linking.delete(t);
    }
  }
}

/** Rows in id order (code units, as the answers list them). */
export const byId = (a: RowDoc, b: RowDoc): number => byCodeUnits(a.id, b.id);

const inOrder = (rows: readonly RowDoc[]): boolean => {
  for (let i = 1; i < rows.length; i++) if (rows[i - 1]!.id >= rows[i]!.id) return false;
  return true;
};

/** Where the row with `id` stands in `rows` (in id order), or -1. */
const indexOf = (rows: readonly RowDoc[], id: string): number => binarySearch(rows.length, (i) => byCodeUnits(rows[i]!.id, id));

/**
 * `before` (rows in id order) after the rows of `touched` were read again into `rows`: a copy with
 * each changed row in its predecessor's place, rows gone left out and new ones merged in. Sorting
 * every row again after each write held the event loop for milliseconds per answer at 10,000 rows.
 */
export const reordered = (before: readonly RowDoc[], touched: Iterable<string>, rows: ReadonlyMap<string, RowDoc>): readonly RowDoc[] => {
  const out = before.slice();
  const gone = new Set<string>();
  const added: RowDoc[] = [];
  for (const id of touched) {
    const at = indexOf(out, id);
    const row = rows.get(id);
    if (at >= 0) {
      if (row) out[at] = row;
      else gone.add(id);
    } else if (row) added.push(row);
  }
  if (gone.size === 0 && added.length === 0) return out;
  const kept = gone.size === 0 ? out : out.filter((r) => !gone.has(r.id));
  added.sort(byId);
  const merged: RowDoc[] = [];
  let a = 0;
  let b = 0;
  while (a < kept.length || b < added.length) merged.push(b >= added.length || (a < kept.length && kept[a]!.id < added[b]!.id) ? kept[a++]! : added[b++]!);
  return merged;
};
