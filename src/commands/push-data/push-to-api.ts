import { DomainError } from '../../domain/errors.ts';
import type { Models } from '../../domain/model.ts';
import type { ResponseFormat } from '../../domain/rest-apis.ts';
import { REST_APIS, type RestApiDoc } from '../../projections/read-models.ts';
import type { CommandDeps, EventMetadata } from '../context.ts';
import { IDEMPOTENCY_KEY, onceByKey, type StoredResponse } from '../idempotency.ts';
import { PUSH_DATA_GROUP } from '../rest-apis.ts';
import { BatchBusy, type BatchResult } from './batch.ts';
import { pushData, type PushCaches } from './push-data.ts';

/**
 * What a push answers: the control file's run, or a guard's refusal (haplo-behaviour.md §2.2).
 * `retryAfterSeconds`: the service was too busy to commit a record (contention past the time
 * bound); the client should send the push again after that many seconds.
 */
export type PushResult = Omit<BatchResult, 'result' | 'position' | 'types'> & { readonly result: BatchResult['result'] | 'not authorised'; readonly retryAfterSeconds?: number };

/** A rendered push: the response to send, and when to retry if the push was turned away as busy. */
export type RenderedPush = StoredResponse & { readonly retryAfterSeconds?: number };

/** Writes a push result in a response format (the HTTP layer's rendering: status, content type, body). */
export type RenderPush = (result: PushResult, format: ResponseFormat) => RenderedPush;

/**
 * Writes a request refused once the API is known but before its control file ran (body too large,
 * a bad or reused Idempotency-Key) as a push answer in the API's format; undefined for an error
 * that is no refusal (it is rethrown).
 */
export type RenderRefusal = (error: unknown, format: ResponseFormat) => RenderedPush | undefined;

export interface PushRequest {
  /** The API's URL, the last part of its path. */
  readonly url: string;
  /** Groups of the principal pushing: the push-data group may push. */
  readonly principalGroups: readonly string[];
  /** Reads the request body; called only once the guards have passed. */
  readonly body: () => Promise<Buffer>;
  readonly metadata: EventMetadata;
  /** The client's Idempotency-Key, if it sent one: a retry with the same key and body gets the first answer again. */
  readonly idempotencyKey?: string;
}

/** A push's answer; `replayed` when it is the stored answer to an earlier request with the same Idempotency-Key. */
export type PushResponse = RenderedPush & { readonly replayed?: true };

/** Contention clears as soon as the writes ahead of a push have landed: a second is plenty. */
const BUSY_RETRY_AFTER_SECONDS = 1;

const refused = (result: PushResult['result'], errors: readonly string[]): PushResult => ({ result, applied: 0, failures: 0, errorCount: 1, errors, actions: [] });

/**
 * The push-data command: every answer to `POST /api/push-data/<url>`, in the API's response format
 * where the API is known. In order: API not defined, not authorised, disabled; then the body is read
 * and run through the API's control file, at most once per Idempotency-Key when one is given.
 */
export const pushToApi = async (
  deps: CommandDeps,
  caches: PushCaches,
  models: Models,
  request: PushRequest,
  render: RenderPush,
  renderRefusal: RenderRefusal = () => undefined,
): Promise<PushResponse> => {
  const { url, metadata } = request;
  const api = await caches.apis.through(url, () => deps.reads.get<RestApiDoc>(REST_APIS, url));
  if (!api) return render(refused('error', [`API not defined: ${url}`]), 'JSON');
  if (!request.principalGroups.includes(PUSH_DATA_GROUP)) return render(refused('not authorised', []), 'JSON');
  if (!api.enabled) return render(refused('error', [`API is disabled: ${url}`]), api.response);
  try {
    const body = await request.body();
    const run = async () => render(await pushData(deps, caches, models, metadata, api.control, body), api.response);
    const key = request.idempotencyKey;
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) throw new DomainError('invalid', 'svc:api:bad-idempotency-key', 'Idempotency-Key must be 1-255 printable ASCII characters');
    // A busy push escapes onceByKey as an error, so its key is released and a retry runs again.
    return key ? await onceByKey(deps, metadata, `push-data:${url}`, key, body, run) : await run();
  } catch (e) {
    if (e instanceof BatchBusy) return render({ ...e.result, retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS }, api.response);
    // Push-data clients read one shape: refusals before the engine answer in it too.
    const refusal = renderRefusal(e, api.response);
    if (!refusal) throw e;
    return refusal;
  }
};
