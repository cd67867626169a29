/**
 * The query parameters of the admin interface's lists: `q` (search), `after` / `before` (cursors
 * that name the last or first row of the neighbouring page) and `size`. Anything malformed is a 400
 * page, never a 500.
 */
import * as t from 'io-ts';
import { isRight } from 'fp-ts/lib/Either.js';
import type { Cursor, PageRequest } from '../../queries/admin-lists.ts';
import { HttpError } from '../errors.ts';
import type { Ctx } from './respond.ts';

export const PAGE_SIZE = 50;
const MAX_SIZE = 200;
const MAX_Q = 200;

const badQuery = (message: string) => new HttpError(400, 'svc:admin:bad-query', message);

const ScalarC = t.union([t.string, t.number, t.boolean, t.null]);
// Compact on the wire: [id] or [key, id].
const CursorC = t.union([t.tuple([t.string]), t.tuple([ScalarC, t.string])]);

export const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify('key' in c ? [c.key ?? null, c.id] : [c.id])).toString('base64url');

export const decodeCursor = (name: string, text: string): Cursor => {
  const bad = () => badQuery(`The ${name} parameter is not a page position this interface made (follow the Next and Previous links)`);
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(text)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const decoded = CursorC.decode(parsed);
  if (!isRight(decoded)) throw bad();
  const v = decoded.right;
  return v.length === 1 ? { id: v[0] } : { key: v[0], id: v[1] };
};

/** One query parameter: absent, or given once (a repeated one is refused rather than guessed at). */
export const single = (ctx: Ctx, name: string): string | undefined => {
  const v = ctx.query[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw badQuery(`The ${name} parameter is given more than once`);
  return v;
};

/** The search text, trimmed; bounded so that a link cannot carry a novel. */
export const searchText = (ctx: Ctx, name = 'q'): string => {
  const q = (single(ctx, name) ?? '').trim();
  if (q.length > MAX_Q) throw badQuery(`The ${name} parameter is longer than ${MAX_Q} characters`);
  if (/[\x00-\x1f\x7f]/.test(q)) throw badQuery(`The ${name} parameter holds control characters`);
  return q;
};

/** A whole number within bounds, or the default when absent. */
export const wholeNumber = (ctx: Ctx, name: string, min: number, max: number, fallback: number): number => {
  const text = single(ctx, name);
  if (text === undefined || text === '') return fallback;
  if (!/^\d{1,16}$/.test(text) || Number(text) < min || Number(text) > max) throw badQuery(`The ${name} parameter must be a whole number from ${min} to ${max}`);
  return Number(text);
};

export const pageRequest = (ctx: Ctx): PageRequest => {
  const after = single(ctx, 'after');
  const before = single(ctx, 'before');
  if (after !== undefined && before !== undefined) throw badQuery('Give after or before, not both');
  return {
    size: wholeNumber(ctx, 'size', 1, MAX_SIZE, PAGE_SIZE),
    ...(after !== undefined ? { after: decodeCursor('after', after) } : {}),
    ...(before !== undefined ? { before: decodeCursor('before', before) } : {}),
  };
};
