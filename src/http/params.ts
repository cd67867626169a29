import { isRef } from '../domain/objects/ref.ts';
import { badRequest } from './errors.ts';

/** A ref from a path, or a JSON 400 in the api-v0 style (never an HTML page). */
export const refParam = (ref: string | undefined): string => {
  if (!isRef(ref)) throw badRequest(`Bad request (failed validation): ${JSON.stringify(ref)} is not a ref`, 'svc:api-v0:generic:bad-request');
  return ref;
};

/** Query parameters read by name (see queryParams). */
export interface QueryParams {
  get(name: string): string | undefined;
}

const NO_PARAMS: QueryParams = { get: () => undefined };

/**
 * A query string's parameters, each read exactly as `single(ctx.query[name])` gives it (decoded,
 * the first of repeated ones), from one parse and without building koa's object of every parameter.
 */
export const queryParams = (querystring: string): QueryParams => {
  if (querystring === '') return NO_PARAMS;
  const params = new URLSearchParams(querystring);
  return { get: (name) => params.get(name) ?? undefined };
};
