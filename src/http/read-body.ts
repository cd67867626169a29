import type { Context } from 'koa';
import { payloadTooLarge } from './errors.ts';

/** The raw request body, refused with 413 as soon as it passes `limit` bytes. */
export const readRawBody = async (ctx: Context, limit: number): Promise<Buffer> => {
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (declared > limit) throw payloadTooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw payloadTooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
};
