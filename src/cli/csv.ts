/**
 * A spreadsheet opening the file runs a cell that starts with one of these as a formula (CSV
 * injection); such text gets a leading `'`, which spreadsheets show as text. Numbers are left alone.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180 CSV: a field is quoted when it holds a comma, quote, or line break. */
const field = (v: unknown): string => {
  const raw = v === null || v === undefined ? '' : Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(';') : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const text = typeof v !== 'number' && FORMULA_START.test(raw) ? `'${raw}` : raw;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

export const toCsv = (columns: readonly string[], rows: readonly (readonly unknown[])[]): string =>
  [columns, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
