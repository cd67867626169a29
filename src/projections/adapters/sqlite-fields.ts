import type Database from 'better-sqlite3';
import type { Doc } from '../read-store.ts';

/** A field's column as SQLite names it, and as SQL refers to it. */
export const columnName = (field: string) => (field === 'id' ? 'id' : `f_${field.replaceAll('.', '__')}`);
export const column = (field: string) => (field === 'id' ? 'id' : `"${columnName(field)}"`);

/** A declared field kept in a column the store writes itself (see storedFields). */
export interface StoredField {
  readonly field: string;
  /** The column's name, quoted for SQL. */
  readonly column: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * What `json_extract(doc, '$.<path>')` gives for the document's JSON, so a column written from the
 * document holds what a column generated from its JSON would: a text, a number, 1 or 0 for a
 * boolean, NULL for null, an absent member or a bytes field (null in the JSON), the JSON text of an
 * array or object.
 */
export const fieldValue = (doc: Doc, path: string): string | number | null => {
  let v: unknown = doc;
  for (const key of path.split('.')) {
    if (!isPlainObject(v) || !Object.hasOwn(v, key)) return null;
    v = v[key];
  }
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'boolean':
      return v ? 1 : 0;
    case 'object':
      if (v === null || v instanceof Uint8Array) return null;
      return JSON.stringify(v);
    default:
      return null;
  }
};

/**
 * The declared fields of `table` kept in plain columns, which its writes fill from the document.
 * Tables made by earlier versions generate their columns from the JSON (`GENERATED ALWAYS AS
 * json_extract(…)`): those are left to SQLite. A generated column changes whenever the document
 * does, so SQLite rewrote every index of a document written again; a plain column is set only when
 * its value changed, and the other indexes are left alone.
 */
export const storedFields = (db: Database.Database, table: string, declared: Iterable<string>): StoredField[] => {
  const plain = new Set(
    (db.prepare('SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0').all(table) as { name: string }[]).map((c) => c.name),
  );
  const out: StoredField[] = [];
  for (const field of declared) if (field !== 'id' && plain.has(columnName(field))) out.push({ field, column: column(field) });
  return out;
};
