import type { PushResult, RenderedPush } from '../commands/push-data/push-to-api.ts';
import type { ResponseFormat } from '../domain/rest-apis.ts';
import { toHttpError } from './errors.ts';

/**
 * success 200, not authorised 403, failure and error 400 (haplo-behaviour.md §2.2); 503 for a push
 * turned away as busy (nothing wrong with the request: it may be sent again).
 */
export const pushStatus = (result: PushResult): number =>
  result.retryAfterSeconds !== undefined ? 503 : result.result === 'success' ? 200 : result.result === 'not authorised' ? 403 : 400;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const xml = (s: string) =>
  s.replace(CONTROL, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const toXml = (r: PushResult): string => {
  const errors = r.errors.map((e) => `<error>${xml(e)}</error>`).join('');
  const actions = r.actions
    .map(
      (a) =>
        `<record identifier="${xml(a.record)}">${a.changed
          .map((c) => `<changed kind="${xml(c.kind)}" destination="${xml(c.destination)}" ref="${xml(c.ref)}" new="${c.new}"/>`)
          .join('')}</record>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<response result="${xml(r.result)}" applied="${r.applied}" failures="${r.failures}" errorCount="${r.errorCount}"><errors>${errors}</errors><actions>${actions}</actions></response>\n`;
};

/** The response body in the API's format: JSON with 4-space indentation (keys in Haplo's order), or XML. */
export const renderPushResult = (r: PushResult, format: ResponseFormat): { contentType: string; body: string } => {
  if (format === 'XML') return { contentType: 'application/xml; charset=utf-8', body: toXml(r) };
  const ordered = { result: r.result, applied: r.applied, failures: r.failures, errorCount: r.errorCount, errors: r.errors, actions: r.actions };
  return { contentType: 'application/json; charset=utf-8', body: `${JSON.stringify(ordered, null, 4)}\n` };
};

/** A push result as the response to send: status, content type and body in the API's format (and Retry-After's value when busy). */
export const pushResponse = (result: PushResult, format: ResponseFormat): RenderedPush => ({
  status: pushStatus(result),
  ...renderPushResult(result, format),
  ...(result.retryAfterSeconds !== undefined ? { retryAfterSeconds: result.retryAfterSeconds } : {}),
});

/**
 * A typed error met before the control file ran (413, a bad or reused Idempotency-Key, contention)
 * as a push answer: result `error` with its message, in the API's format, with the error's status.
 * Anything untyped is left to the error middleware.
 */
export const pushRefusal = (error: unknown, format: ResponseFormat): RenderedPush | undefined => {
  const http = toHttpError(error);
  if (!http || (http.status >= 500 && http.status !== 503)) return undefined;
  const result: PushResult = { result: 'error', applied: 0, failures: 0, errorCount: 1, errors: [http.message], actions: [] };
  const retryAfter = Number(http.headers['Retry-After']);
  return { status: http.status, ...renderPushResult(result, format), ...(Number.isFinite(retryAfter) ? { retryAfterSeconds: retryAfter } : {}) };
};
