import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { payloadTooLarge } from './errors.ts';

/** How long the rest of a refused body is read and discarded before the connection is cut. */
const DRAIN_MS = 5000;

/**
 * Reads and discards the rest of a refused body (for a few seconds at most). Drained, the
 * connection stays usable for the client's next request; left unread, the client could not finish
 * sending and would stall until a timeout; closed with unread data, the socket is reset and the
 * client could lose the 413. A body that does not end in time is cut off with its connection.
 */
export const drainThenClose = (req: IncomingMessage): void => {
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
  if (req.readableEnded) return;
  const timer = setTimeout(() => req.socket.destroy(), DRAIN_MS);
  timer.unref();
  const done = () => clearTimeout(timer);
  req.once('end', done);
  req.once('close', done);
};

/** The raw request body, refused with 413 as soon as it passes `limit` bytes. */
export const readRawBody = (ctx: Context, limit: number): Promise<Buffer> => {
  const declared = Number(ctx.get('Content-Length') || NaN);
  const req = ctx.req;
  if (declared > limit) {
    drainThenClose(req);
    throw payloadTooLarge(limit);
  }
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
