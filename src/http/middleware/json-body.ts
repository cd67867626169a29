import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.ts';
import { drainThenClose } from '../read-body.ts';
import type { AppState } from '../state.ts';

/**
 * Parses JSON bodies (objects and arrays only) up to `limit` bytes. Malformed JSON is a 400, an
 * oversize body a 413, a body of another type on a JSON endpoint a 415. The rest of a refused
 * oversize body is drained: the parser stops reading at the limit, and a connection whose body is
 * never read stalls the client (and every request after it on that connection) until it times out.
 */
export const jsonBody = (limit: number): Middleware<AppState> => {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: limit,
    jsonStrict: true,
    encoding: 'utf-8',
    onError: (error, ctx) => {
      const e = error as Error & { status?: number; type?: string };
      if (e.status === 413 || e.type === 'entity.too.large') {
        drainThenClose(ctx.req);
        throw payloadTooLarge(limit);
      }
      // The client went away mid-body: not malformed JSON, and nobody is left to answer.
      if (e.type === 'request.aborted') throw error;
      if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') throw unsupportedMediaType('JSON in UTF-8');
      throw badRequest('Malformed JSON in request body', 'svc:api:malformed-json');
    },
  }) as unknown as Middleware<AppState>;
  return async (ctx, next) => {
    // No body at all (`Content-Length: 0`, or neither a length nor chunks, as `curl -X POST` sends):
    // actions such as issuing a key or undeleting need none, whatever the Content-Type.
    const noBody = ctx.request.length === 0 || (ctx.request.length === undefined && !ctx.get('Transfer-Encoding'));
    if (noBody || !['POST', 'PUT', 'PATCH'].includes(ctx.method)) return next();
    if (ctx.request.length !== undefined && ctx.request.length > limit) {
      drainThenClose(ctx.req);
      throw payloadTooLarge(limit);
    }
    if (!ctx.is('application/json', '+json')) throw unsupportedMediaType('application/json');
    return parse(ctx, next);
  };
};
