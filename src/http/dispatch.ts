import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppState } from './state.ts';

/** Routers whose every route (and router-level middleware) lies under `prefix` (matched as @koa/router does: case-insensitively). */
export interface RouterFamily {
  readonly prefix: RegExp;
  readonly routers: readonly Router<AppState>[];
}

/**
 * One middleware running `middleware` in turn, as koa's own chain does. (No closure is named per
 * request: under tsx every named function expression costs a defineProperty call.)
 */
const compose = (middleware: readonly Koa.Middleware<AppState>[]): Koa.Middleware<AppState> => {
  const run = (ctx: Koa.ParameterizedContext<AppState>, next: Koa.Next, i: number): Promise<unknown> => {
    const fn = middleware[i];
    if (fn === undefined) return next();
    return Promise.resolve(fn(ctx, () => run(ctx, next, i + 1)));
  };
  return (ctx, next) => run(ctx, next, 0);
};

const chainOf = (routers: readonly Router<AppState>[]) => compose(routers.flatMap((r) => [r.routes(), r.allowedMethods()]) as Koa.Middleware<AppState>[]);

/**
 * Sends a request only through the routers of the API family its path belongs to, instead of
 * through every router's routes() and allowedMethods(). The answer is the same: routers of other
 * families cannot match the path, and every allowedMethods() decides from the same `ctx.matched`
 * (404, 405 with Allow, 501, OPTIONS). A path outside every family goes through all routers, in
 * the order they are listed, exactly as before.
 */
export const dispatchByPrefix = (families: readonly RouterFamily[]): Koa.Middleware<AppState> => {
  const chains = families.map((f) => ({ prefix: f.prefix, chain: chainOf(f.routers) }));
  const everything = chainOf(families.flatMap((f) => f.routers));
  return (ctx, next) => {
    const path = ctx.path;
    for (const { prefix, chain } of chains) if (prefix.test(path)) return chain(ctx, next);
    return everything(ctx, next);
  };
};

