import { DomainError } from '../domain/errors.ts';
import { InvalidControlFile } from '../commands/rest-apis.ts';
import { ContentionTimeout } from '../commands/appending/until-committed.ts';
import { ObjectQueryError } from '../queries/object-api.ts';
import { UnknownCollectionError } from '../queries/reporting-api.ts';
import { BusyError } from '../queries/replay-limit.ts';

/**
 * Errors that carry their HTTP meaning. Handlers throw these; `handleErrors` is the one place that
 * turns them (and anything unexpected) into JSON responses.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    /** Namespaced, stable: clients branch on it. */
    readonly kind: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Further properties of the error body, e.g. every validation message. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, kind = 'svc:api:bad-request') => new HttpError(400, kind, message);
export const notFound = (message: string, kind = 'svc:api:not-found') => new HttpError(404, kind, message);
export const conflict = (message: string, kind = 'svc:api:conflict') => new HttpError(409, kind, message);
export const forbidden = (message: string, kind = 'svc:api:forbidden') => new HttpError(403, kind, message);
export const unauthorised = (message: string, challenge: string, kind = 'svc:api:unauthorised') =>
  new HttpError(401, kind, message, { 'WWW-Authenticate': challenge });
export const methodNotAllowed = (method: string, allow: string) =>
  new HttpError(405, 'svc:api:method-not-allowed', `Method ${method} is not allowed here; use ${allow}`, { Allow: allow });
export const payloadTooLarge = (limit: number) =>
  new HttpError(413, 'svc:api:payload-too-large', `Request body is larger than the limit of ${limit} bytes`);
export const unsupportedMediaType = (expected: string) =>
  new HttpError(415, 'svc:api:unsupported-media-type', `Request body must be ${expected}`);

const COMMAND_STATUS = { invalid: 400, 'not-found': 404, conflict: 409, forbidden: 403 } as const;

/** Maps typed errors of the inner layers (commands, queries) to HTTP errors; undefined for anything else. */
export const toHttpError = (e: unknown): HttpError | undefined => {
  if (e instanceof HttpError) return e;
  if (e instanceof InvalidControlFile) return new HttpError(400, e.kind, e.message, {}, { errors: e.problems });
  if (e instanceof DomainError) return new HttpError(COMMAND_STATUS[e.reason], e.kind, e.message);
  if (e instanceof ObjectQueryError) return new HttpError(400, e.kind, e.message);
  if (e instanceof UnknownCollectionError) return new HttpError(404, 'svc:api:reporting:no-such-collection', e.message);
  // Nothing was written and the request may simply be sent again.
  if (e instanceof BusyError) return new HttpError(503, 'svc:api:busy', e.message, { 'Retry-After': String(e.retryAfterSeconds) });
  if (e instanceof ContentionTimeout) return new HttpError(503, 'svc:api:busy', `${e.message}; nothing was changed, retry later`, { 'Retry-After': '1' });
  return undefined;
};
