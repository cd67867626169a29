/**
 * `Content-Disposition` per RFC 6266: a plain `filename` for old clients (non-ASCII, quotes and
 * backslashes replaced) and `filename*` with the exact name in UTF-8 (RFC 8187 encoding).
 */
const encodeExtValue = (value: string): string =>
  encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const asciiFallback = (filename: string): string => filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');

export const contentDisposition = (filename: string, type: 'attachment' | 'inline' = 'attachment'): string =>
  `${type}; filename="${asciiFallback(filename)}"; filename*=UTF-8''${encodeExtValue(filename)}`;
