import type { Answer } from './operation.ts';

/** JSON errors (`ErrorBody`), by what they mean to a client. */
export const error = (description: string, headers?: Readonly<Record<string, string>>): Answer => ({ description, ref: 'ErrorBody', ...(headers ? { headers } : {}) });

/** What every admin operation may answer besides its own answers (admin-auth middleware). */
export const ADMIN_REFUSALS: Readonly<Record<number, Answer>> = {
  401: error('No admin token or session, or a wrong token', { 'WWW-Authenticate': 'Bearer realm="svc-admin"' }),
  403: error('Signed in by the session cookie without the session\'s X-CSRF-Token (not GET, HEAD or OPTIONS)'),
  429: error('Too many wrong admin tokens from this address', { 'Retry-After': 'seconds to wait' }),
};

/** What every admin operation with a JSON body may answer (json-body middleware, the route's codec). */
export const JSON_BODY_REFUSALS: Readonly<Record<number, Answer>> = {
  400: error('Malformed JSON, or a body the route\'s codec refuses (the message names the fields)'),
  413: error('The body is larger than SVC_BODY_LIMIT'),
  415: error('The body is not application/json in UTF-8'),
};

/** What an operation that needs an API key may answer (api-key-auth middleware). */
export const API_KEY_REFUSALS: Readonly<Record<number, Answer>> = {
  401: error('No HTTP Basic credentials (user name svc, the API key as password)', { 'WWW-Authenticate': 'Basic realm="svc", charset="UTF-8"' }),
  403: error('Invalid or revoked key, a key for another path, an inactive user, or too many failures from this address'),
};

/** A command that met contention for longer than the wait allows: nothing was written. */
export const BUSY: Readonly<Record<number, Answer>> = { 503: error('Busy: nothing was changed, retry later', { 'Retry-After': 'seconds to wait' }) };
