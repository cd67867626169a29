/** RFC 4180 CSV: a field is quoted when it holds a comma, quote, or line break. */
const field = (v: unknown): string => {
  const text = v === null || v === undefined ? '' : Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(';') : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

export const toCsv = (columns: readonly string[], rows: readonly (readonly unknown[])[]): string =>
  [columns, ...rows].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
