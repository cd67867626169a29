import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import type { Doc } from '../read-store.ts';

/**
 * How a snapshot chunk's entries are stored: one line per entry (`collection TAB id TAB document
 * JSON`, the document empty for a removal), Brotli-compressed, in base64 (documents are JSON on
 * every engine). Lines, not one JSON array: a loader reads every entry's collection and id without
 * parsing its document, so it parses only the documents an answer reads, and never a version a
 * later delta overrides. JSON text never holds a raw tab or newline, and collection names and ids
 * have theirs escaped. Snapshot entries are whole documents with the same keys over and over:
 * Brotli stores them in about a seventh of their JSON at quality 1. Compression and decompression
 * run on libuv's thread pool, off the event loop.
 */

/**
 * Brotli's quality. Measured on all 425 chunks of a 300k-event history (245 MB of lines): quality
 * 1 stored them in 49.5 MB (as base64), 4 in 43.6 MB, 5 in 39.3 MB, for about 2.9 times quality
 * 1's compression CPU (5.2 s instead of 1.8 s, on the thread pool, for the whole history); output
 * of quality 5 also decompresses faster. Higher qualities gain little more at much more CPU.
 */
const QUALITY = 5;

export type Entry = readonly [collection: string, id: string, doc: Doc | null];

/**
 * A chunk as stored: `z` with `f: 2` (lines) now; `z` alone (the entries as one JSON array) and
 * `entries` (plain) in stores written before.
 */
export type StoredChunk = { readonly id: string; readonly z?: string; readonly f?: 2; readonly entries?: readonly Entry[] };

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Base64 makes 4 bytes of 3, and Brotli can grow data that does not compress by a few bytes:
 * entries' text up to this share of a chunk's bound always fits in it once stored.
 */
export const COMPRESSED_SHARE = 0.7;

const escape = (s: string) => (/[\\\t\n]/.test(s) ? s.replace(/[\\\t\n]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : '\\n')) : s);
const unescape = (s: string) => (s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => (c === 't' ? '\t' : c === 'n' ? '\n' : c)) : s);

/** The line of one entry. */
export const entryLine = ([collection, id, doc]: Entry): string => `${escape(collection)}\t${escape(id)}\t${doc ? JSON.stringify(doc) : ''}`;

/** The stored chunk `id` of entries already encoded as lines (entryLine), and its JSON. */
export const encodeChunk = async (id: string, lines: readonly string[]): Promise<{ doc: StoredChunk; json: string }> => {
  const text = lines.join('\n');
  const z = (
    await compress(text, {
      params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(text) },
    })
  ).toString('base64');
  const doc: StoredChunk = { id, f: 2, z };
  return { doc, json: JSON.stringify(doc) };
};

/**
 * Output buffer of one decompression: with zlib's default (16 kB) each chunk's text came back in
 * hundreds of pieces, each a turn of the event loop and a copy, and loading a chain took twice as
 * long as decompressing it in one call.
 */
const OUTPUT_CHUNK = 1024 * 1024;

/** An entry as a loader sees it: the document still as JSON text (empty: removed), or parsed (chunks written before lines). */
export type RawEntry = { readonly collection: string; readonly id: string; readonly json?: string; readonly doc?: Doc | null };

/**
 * Calls `each` for every entry of a stored chunk, in order, parsing no document; `text` is what
 * the entries' JSON texts are slices of (kept alive by them), or undefined.
 */
export const readChunk = async (chunk: StoredChunk): Promise<{ text?: string; entries: RawEntry[] }> => {
  if (chunk.z === undefined) return { entries: (chunk.entries ?? []).map(([collection, id, doc]) => ({ collection, id, doc })) };
  const text = (await decompress(Buffer.from(chunk.z, 'base64'), { chunkSize: OUTPUT_CHUNK })).toString('utf8');
  if (chunk.f !== 2) return { entries: (JSON.parse(text) as Entry[]).map(([collection, id, doc]) => ({ collection, id, doc })) };
  const entries: RawEntry[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const a = text.indexOf('\t', start);
    const b = text.indexOf('\t', a + 1);
    entries.push({ collection: unescape(text.slice(start, a)), id: unescape(text.slice(a + 1, b)), json: text.slice(b + 1, end) });
    start = end + 1;
  }
  return { text, entries };
};

/** The entries of a stored chunk, in order, documents parsed. */
export const chunkEntries = async (chunk: StoredChunk): Promise<readonly Entry[]> =>
  (await readChunk(chunk)).entries.map((e): Entry => [e.collection, e.id, e.json !== undefined ? (e.json === '' ? null : (JSON.parse(e.json) as Doc)) : (e.doc ?? null)]);
