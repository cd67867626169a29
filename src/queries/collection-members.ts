import type { CollectionDef, FactDef } from '../domain/reporting/collection.ts';
import type { Schema } from '../domain/schema.ts';
import { canRead, type ReadAccess } from '../domain/users/users.ts';
import type { RowDoc } from '../projections/read-models.ts';
import type { InfoSummary } from './live-infos.ts';
import type { Slices } from './answer-cache.ts';
import { byCodeUnits, sortPaused } from './paused-sort.ts';
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
 * The JSON members `"columns":…,"rows":…,"objects":…` of a collection-data answer: the rows the
 * principal may read, with the `objects` dictionary of every ref used as a fact value.
 *
 * A ref value whose object the principal may not read (or that the fold does not know: no title to
 * give) is null, so every ref left in `rows` is a key of `objects`; a fact read through links from
 * an object the principal may not read is null too. Written straight as JSON text, a slice of rows
 * at a time, with who may read each object decided once per answer, into slices of bytes that are
 * kept and sent as they are (never joined into one buffer).
 */
export const collectionMembers = async ({ collection: c, schema, rows: all, infos, current, access, pause, entries, rowTexts }: MembersInput): Promise<Slices> => {
  const readableMemo = new Map<string, boolean>();
  const readable = (ref: string): boolean => {
    if (access.all) return true;
    let r = readableMemo.get(ref);
    if (r === undefined) {
      const info = current.get(ref);
      r = info !== undefined && canRead(access, info.labels);
      readableMemo.set(ref, r);
    }
    return r;
  };
  const kinds = c.facts.map(kindOf);
  const throughLinks = c.facts.map(readsThroughLinks);

  // Which rows are shown, and which objects their values name.
  const shown: RowDoc[] = [];
  const hidden: boolean[] = [];
  const refs = new Set<string>();
  const labelRefs = new Set<string>();
  for (let i = 0; i < all.length; i++) {
    const row = all[i]!;
    if (readable(row.id)) {
      const hiddenLinks = row.linkedTo.some((t) => !readable(t));
      shown.push(row);
      hidden.push(hiddenLinks);
      const values = row.values;
      for (let k = 1; k < values.length; k++) {
        const v = values[k];
        if (hiddenLinks && throughLinks[k - 1]) continue;
        const kind = kinds[k - 1];
        if (kind === REF && typeof v === 'string') {
          if (readable(v)) refs.add(v);
        } else if (kind === REF_LIST && Array.isArray(v)) {
          for (const r of v) if (readable(String(r))) refs.add(String(r));
        } else if (kind === LABEL_LIST && Array.isArray(v)) for (const r of v) labelRefs.add(String(r));
      }
    }
    if (i % SLICE_ROWS === SLICE_ROWS - 1) await pause();
  }

  const objects = new Map<string, string>();
  let n = 0;
  for (const ref of await sortPaused([...refs], byCodeUnits, pause)) {
    const info = infos.get(ref);
    if (!info) continue;
    const parentShown = !!info.parent && readable(info.parent);
    const kept = entries?.get(info);
    if (kept && kept.ref === ref && kept.parentShown === parentShown) objects.set(ref, kept.json);
    else {
      const text = entryJson(ref, info, parentShown);
      entries?.set(info, { ref, parentShown, json: text });
      objects.set(ref, text);
    }
    if (++n % SLICE_ROWS === 0) await pause();
  }
  for (const ref of await sortPaused([...labelRefs], byCodeUnits, pause)) {
    const label = schema.byRef(ref);
    if (label) objects.set(ref, `${JSON.stringify(ref)}:${JSON.stringify({ title: label.name })}`);
  }
  const known = (v: string) => readable(v) && objects.has(v);

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

  const out = new SliceWriter();
  out.write(`"columns":${JSON.stringify(['ref', 'objectTitle', ...c.facts.map((f) => f.name)])},"rows":[`);
  for (let i = 0; i < shown.length; i++) {
    const json = rowJson(shown[i]!, hidden[i]!);
    out.write(i === 0 ? json : `,${json}`);
    if (i % SLICE_ROWS === SLICE_ROWS - 1) await pause();
  }
  out.write('],"objects":{');
  n = 0;
  for (const entry of objects.values()) {
    out.write(n === 0 ? entry : `,${entry}`);
    if (++n % SLICE_ROWS === 0) await pause();
  }
  out.write('}');
  return out.end();
};

/** Characters of JSON text encoded into one slice of bytes (a slice is encoded and copied at once). */
const SLICE_CHARS = 64 * 1024;

/** JSON text as slices of bytes of about SLICE_CHARS characters each. */
class SliceWriter {
  private readonly slices: Buffer[] = [];
  private text = '';

  write(s: string): void {
    this.text += s;
    if (this.text.length >= SLICE_CHARS) this.flush();
  }

  end(): Slices {
    this.flush();
    return this.slices;
  }

  private flush(): void {
    if (this.text.length === 0) return;
    this.slices.push(Buffer.from(this.text));
    this.text = '';
  }
}
