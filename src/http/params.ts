import { isRef } from '../objects/ref.ts';
import { badRequest } from './errors.ts';

/** A ref from a path, or a JSON 400 in the api-v0 style (never an HTML page). */
export const refParam = (ref: string | undefined): string => {
  if (!isRef(ref)) throw badRequest(`Bad request (failed validation): ${JSON.stringify(ref)} is not a ref`, 'svc:api-v0:generic:bad-request');
  return ref;
};
