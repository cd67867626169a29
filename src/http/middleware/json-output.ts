import type { Context, Middleware } from 'koa';
import type { AppState } from '../state.ts';

const isJsonValue = (body: unknown) =>
  body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function';

/** Whether the request asks for indented JSON (`?output=pretty`). */
export const wantsPretty = (ctx: Context): boolean => {
  // Only a query string naming `output` (perhaps percent-encoded) can ask for it: others skip parsing.
  const query = ctx.querystring;
  return query !== '' && (query.includes('output') || query.includes('%')) && ctx.query.output === 'pretty';
};

/** Answers with JSON text already encoded (what this middleware would have made of the value it encodes). */
export const sendJsonText = (ctx: Context, json: string): void => {
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = json;
};

/** Serialises object bodies; `?output=pretty` indents them by two spaces. */
export const jsonOutput = (): Middleware<AppState> => async (ctx, next) => {
  await next();
  if (!isJsonValue(ctx.body)) return;
  const pretty = wantsPretty(ctx);
  const status = ctx.status;
  ctx.body = JSON.stringify(ctx.body, null, pretty ? 2 : undefined);
  ctx.type = 'application/json; charset=utf-8';
  ctx.status = status;
};
