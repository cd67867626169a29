import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { payloadTooLarge } from './errors.ts';

/**
 * Reads and discards the rest of a refused body (for a few seconds at most) so the connection
 * closes cleanly: closing a socket with unread data resets it, and the client could lose the 413.
 */
export const drainThenClose = (req: IncomingMessage): void => {
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), 5000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
};

/** The raw request body, refused with 413 as soon as it passes `limit` bytes. */
export const readRawBody = (ctx: Context, limit: number): Promise<Buffer> => {
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (declared > limit) throw payloadTooLarge(limit);
  const req = ctx.req;
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      drainThenClose(req);
      reject(payloadTooLarge(limit));
    });
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
};
