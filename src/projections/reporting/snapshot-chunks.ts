import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { isAscii } from 'node:buffer';
import type { Doc } from '../read-store.ts';
import { TextBlock } from './text-block.ts';

/**
 * How a snapshot chunk's entries are stored (`f: 4`): runs of entries of one collection, each run a
 * header line (a tab, the collection, a tab, the number of entries), then the run's ids one a line,
 * then their documents' JSON one a line (empty for a removal), each without its leading `"id":…`
 * member (the id is the line's), all Brotli-compressed. Lines, not one JSON array: a loader reads
 * every entry's collection and id without parsing its document, so it parses only the documents an
 * answer reads, and never a version a later delta overrides. Ids are random and hardly compress:
 * written once each and side by side, not twice on every line, snapshots of a 1M-event history took
 * 9% fewer bytes (8% more with the collection once per run instead of on every line). JSON text
 * never holds a raw tab or newline, and collection names and ids have theirs escaped. Compression
 * runs on libuv's thread pool, off the event loop, or where no loop serves anyone (a rebuild's
 * worker threads) on the calling thread (see Deflate); decompression on a thread of its own (see
 * InflateThread), or on the loop where there is none. The compressed text is stored as bytes (a
 * bytes field, see Doc): as base64 it took a third more, and snapshots were over a quarter of a
 * 1M-event read store. The stored JSON still names `z` (as null): versions that read formats up to
 * 3 look for `z` before they check the format, and without it took a format 4 chunk for an empty
 * one; with it they refuse it and replay from the log's start.
 *
 * Before: `f: 3`, the same text in base64; `f: 2`, one line per entry (`collection TAB id TAB
 * document JSON`), in base64; `z` alone (the entries as one JSON array); `entries` (plain). All
 * still load.
 */

/**
 * Brotli's quality. Measured on all 425 chunks of a 300k-event history (245 MB of lines): quality
 * 1 stored them in 49.5 MB (as base64), 4 in 43.6 MB, 5 in 39.3 MB, for about 2.9 times quality
 * 1's compression CPU (5.2 s instead of 1.8 s, on the thread pool, for the whole history); output
 * of quality 5 also decompresses faster. On the deltas of a 1M-event history 6 stores 2.5% less
 * than 5 for the same CPU (7: 4.4% less for 1.5 times it). Higher qualities gain little more at
 * much more CPU.
 */
const QUALITY = 6;

export type Entry = readonly [collection: string, id: string, doc: Doc | null];
/** An entry being written: its document parsed, or as JSON text (copied on from the store unparsed). */
export type NewEntry = readonly [collection: string, id: string, doc: Doc | string | null];

/** A chunk as stored: `z` with its format `f` (4 now: bytes; 3 and 2 before: base64); `z` alone and `entries` in stores written before. */
export type StoredChunk = { readonly id: string; readonly z?: Uint8Array | string; readonly f?: number; readonly entries?: readonly Entry[] };

/** A chunk written by a newer version, in a format this one does not read. */
export class UnreadableChunkError extends Error {
  constructor(readonly chunk: string, readonly format: number) {
    super(`Snapshot chunk ${chunk} is in format ${format}, which this version does not read`);
  }
}

const compress = promisify(brotliCompress);

/** Compresses a chunk's text into the bytes stored. */
export type Deflate = (text: Buffer) => Promise<Buffer>;

const brotliOptions = (text: Buffer) => ({ params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: text.length } });

/** On libuv's thread pool: the event loop goes on meanwhile (a chunk takes tens of milliseconds). */
export const deflateOnPool: Deflate = (text) => compress(text, brotliOptions(text));

/**
 * On the calling thread, for threads whose event loop serves no one (a rebuild's workers): handed
 * to the pool, each worker sat waiting for its chunks, 2-3.5 s of a 1M-event catch-up's 80 s (CPU
 * profiles of both), while the pool's thread took a core from the other. Same bytes as deflateOnPool.
 */
export const deflateHere: Deflate = async (text) => brotliCompressSync(text, brotliOptions(text));

/**
 * Brotli can grow data that does not compress, by a few bytes: entries' text up to this share of a
 * chunk's bound always fits in it once stored.
 */
export const COMPRESSED_SHARE = 0.9;

const escape = (s: string) => (/[\\\t\n]/.test(s) ? s.replace(/[\\\t\n]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : '\\n')) : s);
const unescape = (s: string) => (s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c)) : s);

/**
 * An entry as it goes into a chunk: its collection, its id escaped, and its document's JSON
 * without the id: `{` and then `json` from `from` on (nothing for a removal), `bytes` long in UTF-8.
 * The text is cut from the document's JSON only as it is written into the chunk's bytes: made as a
 * string per entry, joined into one per chunk and then encoded, it was copied three times, which
 * took 3.6% of the CPU of a rebuild over 200k events (0.9% now).
 */
export type EncodedEntry = { readonly collection: string; readonly id: string; readonly json: string; readonly from: number; readonly bytes: number };

const ID_KEY = '{"id":';
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const TAB = 0x09;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;

/**
 * Where the id member at the start of `json` ends, or -1 where `json` does not start with it. An
 * id JSON writes as it is (no quote, backslash or control character in it) is found without
 * writing it again: a match is then exact, since an escaped character would show as a backslash
 * where the id has none, or as more backslashes than it has.
 */
const idEnd = (json: string, id: string): number => {
  if (json.startsWith('{"id":"') && json.startsWith(id, 7) && json.charCodeAt(7 + id.length) === QUOTE) return 8 + id.length;
  const head = `${ID_KEY}${JSON.stringify(id)}`;
  return json.startsWith(head) ? head.length : -1;
};

/**
 * One entry, encoded once (its size counts towards its chunk's bound). The document's id member
 * is left out: a document whose id is not its first member is written with it first (the order of
 * a document's members means nothing to a fold), so a loader always puts it back first.
 */
export const encodeEntry = ([collection, id, doc]: NewEntry): EncodedEntry => {
  if (doc === null) return { collection, id: escape(id), json: '', from: 0, bytes: 0 };
  let json = typeof doc === 'string' ? doc : JSON.stringify(doc);
  let end = idEnd(json, id);
  if (end < 0) {
    const { id: _, ...rest } = typeof doc === 'string' ? (JSON.parse(doc) as Doc) : doc;
    json = JSON.stringify({ id, ...rest });
    end = idEnd(json, id);
  }
  // What follows the id: `}` for a document that is only an id (written `{}`), else `,` and the other members.
  const from = json.charCodeAt(end) === COMMA ? end + 1 : end;
  // The id is ASCII where it takes a byte a character: the text before `from` then does too.
  const before = Buffer.byteLength(id) === id.length ? from : Buffer.byteLength(json.slice(0, from));
  return { collection, id: escape(id), json, from, bytes: 1 + Buffer.byteLength(json) - before };
};

/** Bytes an entry adds to a chunk's text: its id, its JSON and their newlines. */
export const entryBytes = (e: EncodedEntry): number => Buffer.byteLength(e.id) + e.bytes + 2;

/** A document's JSON as a chunk holds it (not empty), made whole again. */
export const withId = (id: string, json: string): string => `${ID_KEY}${JSON.stringify(id)}${json === '{}' ? '' : ','}${json.slice(1)}`;

/** The text of a chunk of entries already encoded (encodeEntry), as the bytes encodeChunk compresses. */
export const chunkText = (entries: readonly EncodedEntry[]): Buffer => {
  // One run per collection (a delta lists its changes as they came, collections mixed); each
  // document is in a chunk once, so their order within it means nothing.
  const runs = new Map<string, { readonly header: string; readonly entries: EncodedEntry[] }>();
  // Lines: a header per run, and an id and a document per entry, with a newline between two.
  let size = -1;
  for (const e of entries) {
    let run = runs.get(e.collection);
    if (!run) {
      runs.set(e.collection, (run = { header: `\t${escape(e.collection)}\t`, entries: [] }));
      size += Buffer.byteLength(run.header) + 1;
    }
    run.entries.push(e);
    size += entryBytes(e);
  }
  for (const run of runs.values()) size += String(run.entries.length).length;
  const text = Buffer.allocUnsafe(Math.max(0, size));
  let at = 0;
  const line = (s: string) => {
    if (at > 0) text[at++] = NEWLINE;
    at += text.write(s, at);
  };
  for (const run of runs.values()) {
    line(`${run.header}${run.entries.length}`);
    for (const e of run.entries) line(e.id);
    for (const e of run.entries) {
      text[at++] = NEWLINE;
      if (e.bytes === 0) continue;
      text[at++] = OPEN_BRACE;
      at += text.write(e.json.slice(e.from), at);
    }
  }
  // Sized from the same strings it writes: a difference would be a bug here, and a chunk cut short.
  if (at !== text.length) throw new Error(`Snapshot chunk text sized ${text.length} bytes, written ${at}`);
  return text;
};

/** The stored chunk `id` of a chunk's text (chunkText). */
export const encodeChunk = async (id: string, text: Buffer, deflate: Deflate = deflateOnPool): Promise<StoredChunk> => ({ id, f: 4, z: await deflate(text) });

/**
 * Output buffer of one decompression: with zlib's default (16 kB) each chunk's text came back in
 * hundreds of pieces, each a copy, and loading a chain took twice as long as decompressing it in
 * one piece.
 */
const OUTPUT_CHUNK = 1024 * 1024;

/**
 * Entries of one collection as a loader sees them, in order: their ids, and by index each one's
 * document as JSON text (empty: removed; without its id member when `idless`, see withId), cut
 * from the chunk's bytes only when asked (a loader skips the entries a later delta overrides), or
 * parsed in `docs` (chunks written before lines: `json` gives undefined).
 */
export interface RawRun {
  readonly collection: string;
  readonly ids: readonly string[];
  readonly idless: boolean;
  json(i: number): string | undefined;
  readonly docs?: readonly (Doc | null)[];
  /** Runs of text: whether an entry removes its document, without making its text a string. */
  removed?(i: number): boolean;
  /** Runs of text: the texts of the entries at `indexes` (none removed), in that order, copied into a block. */
  cut?(indexes: readonly number[]): TextBlock;
}

/**
 * A decompressed chunk, read as text a line (or field) at a time. A string of a whole chunk (a few
 * hundred kB) is allocated in V8's large-object space: making one ran at about 230 MB/s here, below
 * Brotli's own 650 MB/s, while entry-sized strings are made at several GB/s. Lines and fields end at
 * ASCII bytes (newline, tab), never inside a UTF-8 sequence, so each piece decodes on its own.
 */
class ChunkBytes {
  private readonly encoding: 'latin1' | 'utf8';

  constructor(private readonly bytes: Buffer) {
    // ASCII (JSON escapes nothing else, so most text is) copies into strings without UTF-8 decoding.
    this.encoding = isAscii(bytes) ? 'latin1' : 'utf8';
  }

  get length(): number {
    return this.bytes.length;
  }

  /** Where the first `byte` at or after `from` is, or the end. */
  find(byte: number, from: number): number {
    const at = this.bytes.indexOf(byte, from);
    return at < 0 ? this.bytes.length : at;
  }

  text(start: number, end: number): string {
    return this.bytes.toString(this.encoding, start, end);
  }

  /**
   * The `count` lines from `from` on, and where the line after them starts. Found by a loop over
   * the bytes and made strings by one decoding: for lines as short as a run's ids, a search and a
   * string per line were calls out of JavaScript that cost more than the bytes they covered.
   */
  lines(from: number, count: number): { readonly texts: string[]; readonly next: number } {
    if (count === 0) return { texts: [], next: from };
    const bytes = this.bytes;
    let at = from;
    for (let seen = 0; at < bytes.length; at++) if (bytes[at] === NEWLINE && ++seen === count) break;
    return { texts: this.text(from, at).split('\n'), next: at + 1 };
  }

  /** The texts at `ranges` (start and end of each, in turn), copied out (see TextBlock). */
  block(ranges: readonly number[]): TextBlock {
    return TextBlock.copy(this.bytes, this.encoding, ranges);
  }
}

/** Decompresses a snapshot chunk's stored bytes into its text. */
export type Inflate = (z: Uint8Array) => Promise<Buffer>;

/** Decompresses a chunk's stored bytes on this thread (see InflateThread for another). */
export const inflateHere: Inflate = async (z) => brotliDecompressSync(z, { chunkSize: OUTPUT_CHUNK });

/** Decompresses a stored chunk (with `inflate`) and lists its entries in runs, parsing no document. */
export const readChunk = async (chunk: StoredChunk, inflate: Inflate = inflateHere): Promise<RawRun[]> => {
  if (chunk.z === undefined) return parsedRuns(chunk.entries ?? []);
  if (chunk.f !== undefined && chunk.f !== 2 && chunk.f !== 3 && chunk.f !== 4) throw new UnreadableChunkError(chunk.id, chunk.f);
  const z = typeof chunk.z === 'string' ? Buffer.from(chunk.z, 'base64') : chunk.z;
  const bytes = await inflate(z);
  if (chunk.f === 3 || chunk.f === 4) return textRuns(new ChunkBytes(bytes));
  if (chunk.f === 2) return lineRuns(new ChunkBytes(bytes));
  return parsedRuns(JSON.parse(bytes.toString('utf8')) as Entry[]);
};

const parsedRuns = (entries: readonly Entry[]): RawRun[] =>
  entries.map(([collection, id, doc]) => ({ collection, ids: [id], idless: false, json: () => undefined, docs: [doc] }));

const textRuns = (chunk: ChunkBytes): RawRun[] => {
  const runs: RawRun[] = [];
  let at = 0;
  /** The line starting at `at`; `at` moves to the next one. */
  const line = (): [start: number, end: number] => {
    const start = at;
    const end = chunk.find(NEWLINE, at);
    at = end + 1;
    return [start, end];
  };
  while (at < chunk.length) {
    const [from, to] = line();
    const tab = chunk.find(TAB, from + 1);
    const collection = unescape(chunk.text(from + 1, tab));
    const count = Number(chunk.text(tab + 1, to));
    const { texts: ids, next } = chunk.lines(at, count);
    for (let i = 0; i < ids.length; i++) ids[i] = unescape(ids[i]!);
    at = next;
    // Where each document's line starts, and (the last) where the line after the run's last starts.
    const starts = new Int32Array(count + 1);
    for (let i = 0; i < count; i++) {
      starts[i] = at;
      line();
    }
    starts[count] = at;
    const end = (i: number) => starts[i + 1]! - 1;
    runs.push({
      collection,
      ids,
      idless: true,
      json: (i) => chunk.text(starts[i]!, end(i)),
      removed: (i) => end(i) === starts[i],
      cut: (indexes) => {
        const ranges = new Array<number>(2 * indexes.length);
        for (let j = 0; j < indexes.length; j++) {
          ranges[2 * j] = starts[indexes[j]!]!;
          ranges[2 * j + 1] = end(indexes[j]!);
        }
        return chunk.block(ranges);
      },
    });
  }
  return runs;
};

const lineRuns = (chunk: ChunkBytes): RawRun[] => {
  const runs: RawRun[] = [];
  let start = 0;
  while (start < chunk.length) {
    const end = chunk.find(NEWLINE, start);
    const a = chunk.find(TAB, start);
    const b = chunk.find(TAB, a + 1);
    runs.push({ collection: unescape(chunk.text(start, a)), ids: [unescape(chunk.text(a + 1, b))], idless: false, json: () => chunk.text(b + 1, end) });
    start = end + 1;
  }
  return runs;
};

/** The entries of a stored chunk, in order, documents parsed. */
export const chunkEntries = async (chunk: StoredChunk): Promise<readonly Entry[]> =>
  (await readChunk(chunk)).flatMap((run) =>
    run.ids.map((id, i): Entry => {
      const json = run.json(i);
      return [run.collection, id, json !== undefined ? (json === '' ? null : (JSON.parse(run.idless ? withId(id, json) : json) as Doc)) : (run.docs?.[i] ?? null)];
    }),
  );
