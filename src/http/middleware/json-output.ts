import type { Middleware } from 'koa';
import type { AppState } from '../state.ts';

const isJsonValue = (body: unknown) =>
  body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function';

/** Serialises object bodies; `?output=pretty` indents them by two spaces. */
export const jsonOutput = (): Middleware<AppState> => async (ctx, next) => {
  await next();
  if (!isJsonValue(ctx.body)) return;
  // Only a query string naming `output` (perhaps percent-encoded) can ask for it: others skip parsing.
  const query = ctx.querystring;
  const pretty = query !== '' && (query.includes('output') || query.includes('%')) && ctx.query.output === 'pretty';
  const status = ctx.status;
  ctx.body = JSON.stringify(ctx.body, null, pretty ? 2 : undefined);
  ctx.type = 'application/json; charset=utf-8';
  ctx.status = status;
};
