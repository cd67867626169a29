import { isRef } from '../domain/objects/ref.ts';
import { badRequest } from './errors.ts';

/** A ref from a path, or a JSON 400 in the api-v0 style (never an HTML page). */
export const refParam = (ref: string | undefined): string => {
  if (!isRef(ref)) throw badRequest(`Bad request (failed validation): ${JSON.stringify(ref)} is not a ref`, 'svc:api-v0:generic:bad-request');
  return ref;
};

/**
 * The first value of one query parameter, exactly as `single(ctx.query[name])` gives it (decoded,
 * the first of repeated ones), without building koa's object of every parameter.
 */
export const queryValue = (querystring: string, name: string): string | undefined =>
  querystring === '' ? undefined : (new URLSearchParams(querystring).get(name) ?? undefined);
