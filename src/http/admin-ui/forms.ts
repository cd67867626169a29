/** Form posts (application/x-www-form-urlencoded) of the admin interface. */
import type { Context } from 'koa';
import { unsupportedMediaType } from '../errors.ts';
import { readRawBody } from '../read-body.ts';

/** The posted fields; 413 past `limit` bytes, 415 for anything but a URL-encoded form. */
export const readForm = async (ctx: Context, limit: number): Promise<URLSearchParams> => {
  if (ctx.request.length === 0 || (ctx.request.length === undefined && !ctx.get('Transfer-Encoding'))) return new URLSearchParams();
  if (!ctx.is('application/x-www-form-urlencoded')) throw unsupportedMediaType('a form (application/x-www-form-urlencoded)');
  return new URLSearchParams((await readRawBody(ctx, limit)).toString('utf8'));
};

/** A text field, trimmed (undefined trims to ''). */
export const field = (form: URLSearchParams, name: string): string => (form.get(name) ?? '').trim();

/** A field as typed (no trimming): control files, tokens. */
export const rawField = (form: URLSearchParams, name: string): string => form.get(name) ?? '';

/** The ticked values of a checkbox group. */
export const ticked = (form: URLSearchParams, name: string): string[] => form.getAll(name).filter((v) => v !== '');
