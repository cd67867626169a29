/**
 * Input readers (haplo-behaviour.md §3.3): turn one input file (for push-data, the request body) into
 * records, as `files.<name>.read` in a control file selects. Every failure is a ReaderError whose
 * message quotes at most 100 characters of the input.
 */
import { TextDecoder } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import type { FileSpec } from '../../domain/control-file.ts';

export type ImportRecord = Record<string, unknown>;
export type Reader = (body: Buffer, spec: FileSpec) => ImportRecord[];

export class ReaderError extends Error {
  override readonly name = 'ReaderError';
}

/** Longest part of a message that may come from the input (parser messages can quote it). */
const MAX_QUOTED = 100;

/** A parser's message, flattened to one line and cut so it can never carry much of the input. */
const reason = (e: unknown): string => {
  const text = (e instanceof Error ? e.message : String(e)).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
};

/** Sets a field as an own property, so keys such as `__proto__` from the input stay plain data. */
const setField = (record: ImportRecord, key: string, value: unknown): void => {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
};

const isPlainRecord = (v: unknown): v is ImportRecord => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Decoder {
  decode(bytes: Uint8Array): string;
}

/** Bytes 0x80-0x9F of windows-1252 (WHATWG's table: the five it leaves undefined stay C1 code points). */
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * Node's TextDecoder accepts the label windows-1252 (and the labels WHATWG maps to it: latin1, cp1252, ...) but
 * decodes it as ISO-8859-1, turning €, ƒ and curly quotes into C1 control characters; those bytes are mapped here.
 */
const windows1252: Decoder = {
  decode(bytes) {
    let out = '';
    for (let i = 0; i < bytes.length; i += 8192) {
      const chunk = bytes.subarray(i, i + 8192);
      out += String.fromCharCode(...Array.from(chunk, (b) => (b >= 0x80 && b <= 0x9f ? CP1252_HIGH.charCodeAt(b - 0x80) : b)));
    }
    return out;
  },
};

/** A decoder for a charset label, or undefined when the label is unknown. */
const decoderFor = (charset: string): Decoder | undefined => {
  let d: TextDecoder;
  try {
    d = new TextDecoder(charset);
  } catch {
    return undefined;
  }
  return d.encoding === 'windows-1252' ? windows1252 : d;
};

const decoder = (charset: string, what: string): Decoder => {
  const d = decoderFor(charset);
  if (!d) throw new ReaderError(`Unknown charset for ${what}: ${charset.slice(0, MAX_QUOTED)}`);
  return d;
};

// --------------------------------------------------------------------------
// json

/** Decoding keeps no state between calls (no `stream` option), so one decoder serves every body. */
const UTF8 = new TextDecoder('utf-8');

const readJson: Reader = (body, spec) => {
  let parsed: unknown;
  try {
    // TextDecoder drops a leading byte order mark, which JSON.parse would reject.
    parsed = JSON.parse(UTF8.decode(body));
  } catch (e) {
    throw new ReaderError(`Invalid JSON in request body: ${reason(e)}`);
  }
  if (spec.singleRecord) {
    if (!isPlainRecord(parsed)) throw new ReaderError('Invalid JSON in request body: singleRecord is set, so the body must be one JSON object');
    return [parsed];
  }
  if (!Array.isArray(parsed)) {
    throw new ReaderError('Invalid JSON in request body: expected an array of records (set "singleRecord": true to send one object)');
  }
  parsed.forEach((r, i) => {
    if (!isPlainRecord(r)) throw new ReaderError(`Invalid JSON in request body: record ${i} is not an object`);
  });
  return parsed as ImportRecord[];
};

// --------------------------------------------------------------------------
// XML

const PREDEFINED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * Entity handling for fast-xml-parser: only the five predefined entities and character references.
 * Entity declarations in a DOCTYPE are refused, so nothing can expand (no "billion laughs").
 */
const entityDecoder = {
  reset(): void {},
  setXmlVersion(): void {},
  setExternalEntities(): void {},
  addInputEntities(entities: Record<string, string>): void {
    if (Object.keys(entities).length > 0) throw new Error('entity declarations (DOCTYPE) are not allowed');
  },
  decode(text: string): string {
    if (!text.includes('&')) return text;
    return text.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z_][\w.-]*);/g, (_m, ref: string) => {
      if (ref.startsWith('#')) {
        const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
        if (!(code > 0 && code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) throw new Error(`invalid character reference &${ref.slice(0, 20)};`);
        return String.fromCodePoint(code);
      }
      const c = PREDEFINED[ref];
      if (c === undefined) throw new Error(`undefined entity &${ref.slice(0, 40)};`);
      return c;
    });
  },
};

const xmlParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  entityDecoder,
});

/** fast-xml-parser's ordered form: `{ tag: children, ':@'?: attributes }` or `{ '#text': text }`. */
type XmlNode = Record<string, unknown>;
interface XmlElement {
  readonly tag: string;
  readonly children: readonly XmlNode[];
  readonly attributes: Readonly<Record<string, string>>;
}

const asElement = (node: XmlNode): XmlElement | undefined => {
  const tag = Object.keys(node).find((k) => k !== ':@');
  if (tag === undefined || tag === '#text' || tag.startsWith('?') || tag.startsWith('!')) return undefined;
  const children = node[tag];
  const attributes = node[':@'];
  return {
    tag,
    children: Array.isArray(children) ? (children as XmlNode[]) : [],
    attributes: isPlainRecord(attributes) ? (attributes as Record<string, string>) : {},
  };
};

const childElements = (el: XmlElement): XmlElement[] => el.children.map(asElement).filter((c): c is XmlElement => c !== undefined);

const localName = (qname: string): string => qname.slice(qname.indexOf(':') + 1);

/** Text content of an element: all descendant text (CDATA included), concatenated in order. */
const textContent = (el: XmlElement): string =>
  el.children
    .map((node) => {
      if ('#text' in node) return String(node['#text']);
      const child = asElement(node);
      return child ? textContent(child) : '';
    })
    .join('');

/** Charset of an XML document: byte order mark, else the declaration's `encoding`, else UTF-8. */
const xmlCharset = (body: Buffer): string => {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be';
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le';
  const head = body.subarray(0, 1024).toString('latin1');
  const m = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*(["'])([^"']*)\1/.exec(head);
  return m?.[2] ?? 'utf-8';
};

const parseXmlRoot = (body: Buffer): XmlElement => {
  const charset = xmlCharset(body);
  const d = decoderFor(charset);
  if (!d) throw new ReaderError(`Invalid XML: unsupported encoding ${charset.slice(0, MAX_QUOTED)}`);
  const text = d.decode(body);
  let nodes: unknown;
  try {
    nodes = xmlParser.parse(text, true);
  } catch (e) {
    throw new ReaderError(`Invalid XML: ${reason(e)}`);
  }
  const roots = (Array.isArray(nodes) ? (nodes as XmlNode[]) : []).map(asElement).filter((e): e is XmlElement => e !== undefined);
  const [root] = roots;
  if (!root) throw new ReaderError('Invalid XML: no root element');
  if (roots.length > 1) throw new ReaderError('Invalid XML: more than one root element');
  return root;
};

/** As Haplo's xmlReaderImpl: records are the root's child elements, or the root itself with singleRecord. */
const xmlReader =
  (decode: (el: XmlElement) => ImportRecord): Reader =>
  (body, spec) => {
    const root = parseXmlRoot(body);
    return spec.singleRecord ? [decode(root)] : childElements(root).map(decode);
  };

const readXmlTextOfChildren = xmlReader((el) => {
  const record: ImportRecord = {};
  for (const child of childElements(el)) setField(record, localName(child.tag), textContent(child));
  return record;
});

const readXmlAttributes = xmlReader((el) => {
  const record: ImportRecord = {};
  for (const [name, value] of Object.entries(el.attributes)) {
    // Namespace declarations are not data.
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    setField(record, name, value);
  }
  return record;
});

// --------------------------------------------------------------------------
// tsv-with-name-row

const readTsv: Reader = (body, spec) => {
  const separator = String(spec.separator || '\t');
  const charset = String(spec.charset || 'utf-8');
  const text = decoder(charset, 'tsv-with-name-row').decode(body);
  // As Haplo, lines are split on runs of CR/LF; empty lines (including the one a final newline leaves) are dropped.
  const lines = text.split(/[\r\n]+/).filter((line) => line !== '');
  const [nameRow, ...rows] = lines;
  if (nameRow === undefined) return [];
  const headers = nameRow.split(separator);
  return rows.map((line) => {
    const cells = line.split(separator);
    const record: ImportRecord = {};
    headers.forEach((header, i) => {
      const v = cells[i];
      if (v) setField(record, header, v);
    });
    return record;
  });
};

// --------------------------------------------------------------------------

/** Keyed by `files.<name>.read`; a null-prototype object, so names such as `constructor` are not readers. */
export const READERS: Readonly<Record<string, Reader>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, Reader>, {
    json: readJson,
    'xml-text-of-children': readXmlTextOfChildren,
    'xml-attributes': readXmlAttributes,
    'tsv-with-name-row': readTsv,
  }),
);

export const readerNames: readonly string[] = Object.freeze(Object.keys(READERS));
