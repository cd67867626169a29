import type { CollectionDef, FactDef } from '../domain/reporting/collection.ts';
import type { Schema } from '../domain/schema.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';
import type { RowDoc } from '../projections/read-models.ts';
import type { InfoSummary } from './live-infos.ts';
import type { Slices } from './answer-cache.ts';
import { binarySearch, byCodeUnits, sortPaused } from './paused-sort.ts';
import { Counts, cutsBefore, joinRuns, keyBits, runEnd, RunText } from './answer-runs.ts';
import type { Pause } from '../projections/projector.ts';

/** `"<ref>":{…}` of an object in the `objects` dictionary, kept per summary object (summaries are replaced, never changed). */
export type ObjectEntryMemo = WeakMap<InfoSummary, { readonly ref: string; readonly parentShown: boolean; readonly json: string }>;

/**
 * A row's JSON text in a live answer, with everything it was made from besides the row itself:
 * its object's title, whether its facts read through links were hidden, and whether each ref value
 * was shown (what the caller's access decides, so texts serve every caller alike). Kept per row
 * document (rows are replaced, never changed): an answer made after a write takes the text of
 * every row whose inputs are the same instead of making it again.
 */
type RowText = { readonly title: unknown; readonly hidden: boolean; readonly shown: readonly boolean[]; readonly json: string };
export type RowTextMemo = WeakMap<RowDoc, RowText>;

/** What an answer looks objects up in: a Map, or a view that reads each when asked. */
export type Lookup<T> = { get(ref: string): T | undefined };

/**
 * Rows (or objects) handled between two calls of `pause`, which gives the event loop back once its
 * slice of time is used: few enough that no stretch between two calls outlasts that slice by much.
 */
export const SLICE_ROWS = 128;

const PLAIN = 0;
const REF = 1;
const REF_LIST = 2;
const LABEL_LIST = 3;
const kindOf = (f: FactDef | undefined) => (f === undefined ? PLAIN : f.type === 'ref' ? REF : f.type === 'refList' ? REF_LIST : f.type === 'labelList' ? LABEL_LIST : PLAIN);

/** Whether a fact's value is read from another object through links. */
const readsThroughLinks = (f: FactDef | undefined): boolean => f !== undefined && 'attribute' in f.source && f.source.linked !== undefined;

const entryJson = (ref: string, info: InfoSummary, parentShown: boolean): string =>
  `${JSON.stringify(ref)}:${JSON.stringify({ title: info.title, ...(parentShown ? { parent: info.parent } : {}), ...(info.behaviour ? { behaviour: info.behaviour } : {}) })}`;

/** Every object the rows name: the rows' own objects, the objects they read through links and their ref values. */
export const mentionedRefs = async (c: CollectionDef, rows: readonly RowDoc[], pause: Pause): Promise<Set<string>> => {
  const kinds = c.facts.map(kindOf);
  const mentioned = new Set<string>();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    mentioned.add(row.id);
    for (const t of row.linkedTo) mentioned.add(t);
    for (let k = 1; k < row.values.length; k++) {
      const v = row.values[k];
      const kind = kinds[k - 1];
      if (kind === REF && typeof v === 'string') mentioned.add(v);
      else if (kind === REF_LIST && Array.isArray(v)) for (const r of v) mentioned.add(String(r));
    }
    if (i % SLICE_ROWS === SLICE_ROWS - 1) await pause();
  }
  return mentioned;
};

export interface MembersInput {
  readonly collection: CollectionDef;
  readonly schema: Schema;
  /** The rows, in id order. */
  readonly rows: readonly RowDoc[];
  /** Descriptions (titles, parents) of the objects the rows name. */
  readonly infos: Lookup<InfoSummary>;
  /** Labels now of the objects the rows name: who may read them. */
  readonly current: Lookup<Pick<InfoSummary, 'labels'>>;
  readonly access: ReadAccess;
  readonly pause: Pause;
  readonly entries?: ObjectEntryMemo;
  readonly rowTexts?: RowTextMemo;
}

/**
 * What a row gives an answer: whether it is shown, the objects and labels it puts in the `objects`
 * dictionary, its JSON text, and the objects whose descriptions or labels all that was made from.
 * Never changed once made (a kept state is read by answers being made at the same time).
 */
interface RowPart {
  readonly row: RowDoc;
  readonly shown: boolean;
  readonly hidden: boolean;
  readonly deps: readonly string[];
  readonly refs: readonly string[];
  readonly labels: readonly string[];
  /** The row's JSON text; none for a row not shown. */
  readonly json?: string;
}

/** A run of an answer's rows (its parts from `start`) and their text, kept with its state. */
interface RowRun {
  readonly start: number;
  readonly length: number;
  readonly slices: readonly Buffer[];
  /** Heap bytes of the run's parts and text, roughly. */
  readonly bytes: number;
}

/** An entry of the `objects` dictionary, with the parent whose labels decided whether it names it. */
interface ObjectEntry {
  readonly parent: string | undefined;
  readonly json: string;
}

/** A run of the `objects` dictionary (its sortedRefs from `start`) and its text. */
interface ObjectRun {
  readonly start: number;
  readonly length: number;
  readonly slices: readonly Buffer[];
  /** The entry of each of its objects that has a description. */
  readonly entries: readonly (ObjectEntry | undefined)[];
  /** The parents of the run's objects: their labels decide whether an entry names its parent. */
  readonly parents: ReadonlySet<string>;
  readonly bytes: number;
}

/**
 * Everything an answer was made of, for one caller's access: the next answer for the same access
 * takes from it every row and object whose inputs are the same (MembersInput.previous), and the
 * bytes of every run of them that holds nothing else.
 */
export interface MembersState {
  /** The rows the answer was made of, in id order, and one part per row. */
  readonly rows: readonly RowDoc[];
  readonly parts: readonly RowPart[];
  /** 1 where a row's id starts a run (cutsBefore), kept so that rows taken again are not hashed again. */
  readonly cuts: Uint8Array;
  /** keyBits of each part's deps: a row is looked at for changed objects only where these meet theirs. */
  readonly depBits: Uint32Array;
  readonly rowRuns: readonly RowRun[];
  /** How many shown rows put each object (or label) in the dictionary. */
  readonly refCount: Counts;
  readonly labelCount: Counts;
  readonly sortedRefs: readonly string[];
  readonly sortedLabels: readonly string[];
  readonly objectRuns: readonly ObjectRun[];
  /** Heap bytes of all this, roughly (what a cache of states weighs it by). */
  readonly bytes: number;
}

export interface KeptMembersInput extends MembersInput {
  /** The state of an earlier answer for the same access, collection and lookups. */
  readonly previous?: MembersState;
  /** The objects whose descriptions or labels changed since `previous` was made (required with it). */
  readonly changed?: ReadonlySet<string>;
}

/**
 * The JSON members `"columns":…,"rows":…,"objects":…` of a collection-data answer: the rows the
 * principal may read, with the `objects` dictionary of every ref used as a fact value.
 *
 * A ref value whose object the principal may not read (or that the fold does not know: no title to
 * give) is null, so every ref left in `rows` is a key of `objects`; a fact read through links from
 * an object the principal may not read is null too. Written straight as JSON text, a slice of rows
 * at a time, with who may read each object decided once per answer, into slices of bytes that are
 * kept and sent as they are (never joined into one buffer).
 */
export const collectionMembers = async (input: MembersInput): Promise<Slices> => (await membersKept(input)).slices;

/**
 * collectionMembers, from the state of an earlier answer where one is given: a row is made again
 * only if it is another row document (LiveRows replaces a row it reads again) or an object it was
 * made from is in `changed`; an object's entry only if it or its parent is. After a write, an answer
 * over 10,000 rows then looks up a handful of objects instead of every object every row names
 * (tens of thousands of lookups in maps of tens of thousands of entries), and of its text makes
 * again only the runs (answer-runs.ts) holding what changed: the other runs' bytes are the earlier
 * answer's, neither written nor encoded again.
 */
export const membersKept = async ({ collection: c, schema, rows: all, infos, current, access, pause, entries, rowTexts, previous, changed }: KeptMembersInput): Promise<{ slices: Slices; state: MembersState }> => {
  // Rows name the same objects again and again (a department, a supervisor): each is decided once per answer.
  const readableOnce = new Map<string, boolean>();
  const readable = (ref: string): boolean => {
    if (access.all) return true;
    let ok = readableOnce.get(ref);
    if (ok === undefined) {
      const info = current.get(ref);
      ok = info !== undefined && canRead(access, info.labels);
      readableOnce.set(ref, ok);
    }
    return ok;
  };
  const kinds = c.facts.map(kindOf);
  const throughLinks = c.facts.map(readsThroughLinks);
  const stale = (deps: readonly string[]) => {
    for (const d of deps) if (changed!.has(d)) return true;
    return false;
  };
  const reuse = previous && changed ? previous : undefined;

  // Which rows are shown and what they name: taken from the earlier answer where their inputs are the same.
  const parts: RowPart[] = new Array(all.length);
  const made: boolean[] = new Array(all.length);
  const cuts = new Uint8Array(all.length);
  const depBits = new Uint32Array(all.length);
  const changedBits = changed ? keyBits(changed) : 0;
  const refCount = Counts.from(reuse?.refCount);
  const labelCount = Counts.from(reuse?.labelCount);
  // The objects and labels whose counts changed: the dictionary's keys moved if one of them came or went.
  const touchedRefs = new Set<string>();
  const touchedLabels = new Set<string>();
  const count = (counts: Counts, touched: Set<string>, keys: readonly string[], by: number): void => {
    for (const k of keys) {
      counts.add(k, by);
      touched.add(k);
    }
  };
  const add = (part: RowPart, by: number) => {
    if (!part.shown) return;
    count(refCount, touchedRefs, part.refs, by);
    count(labelCount, touchedLabels, part.labels, by);
  };
  const prevParts = reuse?.parts ?? [];
  const prevRows = reuse?.rows ?? [];
  // Objects looked up since the last pause: a row made looks up each it names, a row taken looks up none.
  let work = 0;
  let p = 0;
  for (let i = 0; i < all.length; i++) {
    const row = all[i]!;
    // The same row document as the earlier answer's at its place (most rows): no ids compared.
    const same = prevRows[p] === row;
    if (same) cuts[i] = reuse!.cuts[p]!;
    else {
      cuts[i] = cutsBefore(row.id) ? 1 : 0;
      // Rows of the earlier answer before this one's id are gone: what they named goes with them.
      while (p < prevRows.length && prevRows[p]!.id < row.id) add(prevParts[p++]!, -1);
    }
    const at = same || (p < prevRows.length && prevRows[p]!.id === row.id) ? p++ : -1;
    // Most rows name none of the objects changed: their bits tell without reading their parts.
    if (same && ((reuse!.depBits[at]! & changedBits) === 0 || !stale(prevParts[at]!.deps))) {
      parts[i] = prevParts[at]!;
      depBits[i] = reuse!.depBits[at]!;
      made[i] = false;
    } else {
      const before = at >= 0 ? prevParts[at] : undefined;
      const part = rowPart(row);
      depBits[i] = keyBits(part.deps);
      if (before) add(before, -1);
      add(part, 1);
      parts[i] = part;
      made[i] = true;
      work += part.deps.length;
    }
    if (++work >= SLICE_ROWS) {
      work = 0;
      await pause();
    }
  }
  for (; p < prevParts.length; p++) add(prevParts[p]!, -1);
  const moved = (touched: Set<string>, before: Counts, now: Counts) => {
    for (const k of touched) if (before.has(k) !== now.has(k)) return true;
    return false;
  };
  const refsMoved = !reuse || moved(touchedRefs, reuse.refCount, refCount);
  const labelsMoved = !reuse || moved(touchedLabels, reuse.labelCount, labelCount);
  function rowPart(row: RowDoc): RowPart {
    const deps = [row.id];
    if (!readable(row.id)) return { row, shown: false, hidden: false, deps, refs: [], labels: [] };
    const hiddenLinks = row.linkedTo.some((t) => !readable(t));
    deps.push(...row.linkedTo);
    const values = row.values;
    if (typeof values[0] === 'string') deps.push(values[0]);
    const refs: string[] = [];
    const labels: string[] = [];
    for (let k = 1; k < values.length; k++) {
      const v = values[k];
      if (hiddenLinks && throughLinks[k - 1]) continue;
      const kind = kinds[k - 1];
      if (kind === REF && typeof v === 'string') {
        deps.push(v);
        if (readable(v)) refs.push(v);
      } else if (kind === REF_LIST && Array.isArray(v)) {
        for (const x of v) {
          const r = String(x);
          deps.push(r);
          if (readable(r)) refs.push(r);
        }
      } else if (kind === LABEL_LIST && Array.isArray(v)) for (const r of v) labels.push(String(r));
    }
    return { row, shown: true, hidden: hiddenLinks, deps, refs, labels };
  }

  const sortedRefs = refsMoved ? await sortPaused(refCount.keys(), byCodeUnits, pause) : reuse!.sortedRefs;
  const sortedLabels = labelsMoved ? await sortPaused(labelCount.keys(), byCodeUnits, pause) : reuse!.sortedLabels;
  const labelTitles = new Map<string, string>();
  for (const ref of sortedLabels) {
    const label = schema.byRef(ref);
    if (label) labelTitles.set(ref, `${JSON.stringify(ref)}:${JSON.stringify({ title: label.name })}`);
  }
  // An object in the dictionary: named by a shown row and described (an entry taken from the earlier
  // answer is of an object not changed since, so described still).
  const described = (ref: string) => refCount.has(ref) && infos.get(ref) !== undefined;
  const knownOnce = new Map<string, boolean>();
  const known = (v: string): boolean => {
    let ok = knownOnce.get(v);
    if (ok === undefined) {
      ok = readable(v) && (labelTitles.has(v) || described(v));
      knownOnce.set(v, ok);
    }
    return ok;
  };

  // The objects dictionary, a run of objects at a time: a run is the earlier answer's if it holds the
  // same objects and none of them or their parents changed (and no label came or went: a label that
  // is also a described object takes the object's place).
  const objectRun = async (start: number, end: number, before?: ObjectRun): Promise<ObjectRun> => {
    const text = new RunText();
    const runEntries = new Array<ObjectEntry | undefined>(end - start);
    const parents = new Set<string>();
    let bytes = 64;
    for (let i = start; i < end; i++) {
      const ref = sortedRefs[i]!;
      // An entry of the same run before, of an object not changed since (nor its parent), is taken as it was.
      const prior = before?.entries[i - start];
      let entry: ObjectEntry | undefined;
      if (prior && !changed!.has(ref) && !(prior.parent !== undefined && changed!.has(prior.parent))) entry = prior;
      else {
        const info = infos.get(ref);
        if (info) {
          const parentShown = !!info.parent && readable(info.parent);
          const kept = entries?.get(info);
          let json: string;
          if (kept && kept.ref === ref && kept.parentShown === parentShown) json = kept.json;
          else {
            json = entryJson(ref, info, parentShown);
            entries?.set(info, { ref, parentShown, json });
          }
          entry = { parent: info.parent ?? undefined, json };
        }
      }
      runEntries[i - start] = entry;
      if (entry) {
        if (entry.parent !== undefined) parents.add(entry.parent);
        const shown = labelTitles.get(ref) ?? entry.json;
        text.add(shown);
        bytes += 100 + shown.length;
      }
      if (++work >= SLICE_ROWS) {
        work = 0;
        await pause();
      }
    }
    return { start, length: end - start, slices: text.end(), entries: runEntries, parents, bytes };
  };
  const dirty = reuse && !labelsMoved ? dirtyRuns(reuse, changed!) : undefined;
  const sameRefs = (before: ObjectRun, start: number, end: number): boolean => {
    if (before.length !== end - start) return false;
    if (sortedRefs === reuse!.sortedRefs) return before.start === start;
    for (let k = 0; k < before.length; k++) if (reuse!.sortedRefs[before.start + k] !== sortedRefs[start + k]) return false;
    return true;
  };
  const objectRuns: ObjectRun[] = [];
  const prevObjectRuns = reuse?.objectRuns ?? [];
  for (let start = 0, old = 0; start < sortedRefs.length; ) {
    while (old < prevObjectRuns.length && reuse!.sortedRefs[prevObjectRuns[old]!.start]! < sortedRefs[start]!) old++;
    const before = prevObjectRuns[old];
    // The same refs as the earlier answer's: the same runs, with no ref hashed again.
    const end = sortedRefs === reuse?.sortedRefs ? start + before!.length : runEnd(start, sortedRefs.length, (i) => cutsBefore(sortedRefs[i]!));
    const same = before !== undefined && dirty !== undefined && sameRefs(before, start, end);
    if (same && !dirty.has(before)) objectRuns.push(before.start === start ? before : { ...before, start });
    else objectRuns.push(await objectRun(start, end, same ? before : undefined));
    if (++work >= SLICE_ROWS) {
      work = 0;
      await pause();
    }
    start = end;
  }

  const rowJson = (doc: RowDoc, hiddenLinks: boolean): string => {
    const values = doc.values;
    // Haplo's second column: the title of the row's object.
    const title = infos.get(values[0] as string)?.title ?? null;
    const kept = rowTexts?.get(doc);
    if (kept && kept.title === title && kept.hidden === hiddenLinks && sameShown(values, hiddenLinks, kept.shown)) return kept.json;
    const shownRefs: boolean[] = [];
    const row = new Array<unknown>(values.length + 1);
    row[0] = values[0];
    row[1] = title;
    for (let k = 1; k < values.length; k++) {
      const v = values[k];
      const kind = kinds[k - 1];
      if (hiddenLinks && throughLinks[k - 1]) row[k + 1] = null;
      else if (kind === REF && typeof v === 'string') {
        const ok = known(v);
        shownRefs.push(ok);
        row[k + 1] = ok ? v : null;
      } else if (kind === REF_LIST && Array.isArray(v)) {
        row[k + 1] = v.map(String).filter((r) => {
          const ok = known(r);
          shownRefs.push(ok);
          return ok;
        });
      } else row[k + 1] = v;
    }
    const json = JSON.stringify(row);
    rowTexts?.set(doc, { title, hidden: hiddenLinks, shown: shownRefs, json });
    return json;
  };

  /** Whether the ref values of `values` are shown as they were when `kept` was made. */
  const sameShown = (values: readonly unknown[], hiddenLinks: boolean, kept: readonly boolean[]): boolean => {
    let j = 0;
    for (let k = 1; k < values.length; k++) {
      if (hiddenLinks && throughLinks[k - 1]) continue;
      const v = values[k];
      const kind = kinds[k - 1];
      if (kind === REF && typeof v === 'string') {
        if (kept[j++] !== known(v)) return false;
      } else if (kind === REF_LIST && Array.isArray(v)) for (const r of v) if (kept[j++] !== known(String(r))) return false;
    }
    return j === kept.length;
  };

  // The rows, a run at a time: a run is the earlier answer's if it holds the same parts (no row in it
  // made again; a label that came or went has every row text checked again).
  const rowRun = async (start: number, end: number): Promise<RowRun> => {
    const text = new RunText();
    let bytes = 64;
    for (let i = start; i < end; i++) {
      let part = parts[i]!;
      if (part.shown && (made[i] || labelsMoved)) {
        // Field by field: a spread of the part copied it several times slower.
        part = parts[i] = { row: part.row, shown: part.shown, hidden: part.hidden, deps: part.deps, refs: part.refs, labels: part.labels, json: rowJson(part.row, part.hidden) };
        work += part.deps.length;
      }
      bytes += 200 + 16 * part.deps.length;
      if (part.json !== undefined) {
        text.add(part.json);
        bytes += part.json.length;
      }
      if (++work >= SLICE_ROWS) {
        work = 0;
        await pause();
      }
    }
    return { start, length: end - start, slices: text.end(), bytes };
  };
  const sameParts = (before: RowRun, start: number, end: number): boolean => {
    if (labelsMoved || before.length !== end - start) return false;
    for (let k = 0; k < before.length; k++) if (prevParts[before.start + k] !== parts[start + k]) return false;
    return true;
  };
  const rowRuns: RowRun[] = [];
  const prevRowRuns = reuse?.rowRuns ?? [];
  for (let start = 0, old = 0; start < parts.length; ) {
    const end = runEnd(start, parts.length, (i) => cuts[i] === 1);
    const id = parts[start]!.row.id;
    while (old < prevRowRuns.length && prevRows[prevRowRuns[old]!.start]!.id < id) old++;
    const before = prevRowRuns[old];
    if (before && sameParts(before, start, end)) rowRuns.push(before.start === start ? before : { ...before, start });
    else rowRuns.push(await rowRun(start, end));
    if (++work >= SLICE_ROWS) {
      work = 0;
      await pause();
    }
    start = end;
  }

  // In Haplo's order: the objects, then the labels (a label that is also a described object has the object's place).
  const labelText = new RunText();
  for (const [ref, json] of labelTitles) if (!described(ref)) labelText.add(json);
  const slices: Buffer[] = [Buffer.from(`"columns":${JSON.stringify(['ref', 'objectTitle', ...c.facts.map((f) => f.name)])},"rows":[`)];
  joinRuns(slices, rowRuns);
  slices.push(Buffer.from('],"objects":{'));
  joinRuns(slices, [...objectRuns, { slices: labelText.end() }]);
  slices.push(Buffer.from('}'));
  let bytes = 80 * (refCount.held + labelCount.held) + 5 * all.length;
  for (const run of rowRuns) bytes += run.bytes;
  for (const run of objectRuns) bytes += run.bytes;
  return { slices, state: { rows: all, parts, cuts, depBits, rowRuns, refCount, labelCount, sortedRefs, sortedLabels, objectRuns, bytes } };
};

/**
 * The earlier answer's object runs that hold an object in `changed` or name one as a parent (its
 * labels decide whether the entry shows it), found from the changed objects rather than by looking
 * at every object; all of them (undefined) when nearly everything changed.
 */
const dirtyRuns = (state: MembersState, changed: ReadonlySet<string>): ReadonlySet<ObjectRun> | undefined => {
  const runs = state.objectRuns;
  if (changed.size > 1 + runs.length) return undefined;
  const dirty = new Set<ObjectRun>();
  for (const ref of changed) {
    const at = binarySearch(state.sortedRefs.length, (i) => byCodeUnits(state.sortedRefs[i]!, ref));
    if (at >= 0) dirty.add(runs[binarySearch(runs.length, (i) => (runs[i]!.start + runs[i]!.length <= at ? -1 : runs[i]!.start > at ? 1 : 0))]!);
    for (const run of runs) if (run.parents.has(ref)) dirty.add(run);
  }
  return dirty;
};
