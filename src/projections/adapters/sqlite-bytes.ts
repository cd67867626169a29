import type { BytesFields, Doc } from '../read-store.ts';

/**
 * How the embedded store keeps a document's bytes fields: apart from its JSON, in the row's `bin`
 * BLOB (null when it has none), each field as its name's length (2 bytes), its name (UTF-8), its
 * length (4 bytes) and its bytes. JSON has no bytes; base64 in it would store a third more.
 */
export const packBytes = (fields: BytesFields): Buffer | null => {
  if (!fields) return null;
  const parts: Buffer[] = [];
  for (const [field, bytes] of fields) {
    const name = Buffer.from(field, 'utf8');
    const head = Buffer.alloc(6 + name.length);
    head.writeUInt16BE(name.length, 0);
    name.copy(head, 2);
    head.writeUInt32BE(bytes.byteLength, 2 + name.length);
    parts.push(head, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
  return Buffer.concat(parts);
};

/** A row's document: its JSON (bytes fields null), with the fields packed in `bin` put back (views on it, not copies). */
export const unpackDoc = <T extends Doc>(json: string, bin: Buffer | null): T => {
  const doc = JSON.parse(json) as Record<string, unknown>;
  if (bin === null) return doc as T;
  for (let at = 0; at < bin.length; ) {
    const nameLength = bin.readUInt16BE(at);
    const field = bin.toString('utf8', at + 2, at + 2 + nameLength);
    const length = bin.readUInt32BE(at + 2 + nameLength);
    const start = at + 6 + nameLength;
    doc[field] = bin.subarray(start, start + length);
    at = start + length;
  }
  return doc as T;
};
