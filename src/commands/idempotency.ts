import { createHash } from 'node:crypto';
import { WrongExpectedRevisionError } from '../events/event-store.ts';
import { DomainError } from '../domain/errors.ts';
import type { CommandDeps, EventMetadata } from './context.ts';
import { toNewEvents } from './appending/run-command.ts';

export interface StoredResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const streamFor = (scope: string, key: string) => `idempotency-${createHash('sha256').update(`${scope}\u0000${key}`).digest('hex').slice(0, 40)}`;

type Entry = { started?: string; completed?: StoredResponse; revision: number };

const read = async (deps: CommandDeps, stream: string): Promise<Entry> => {
  const entry: Entry = { revision: -1 };
  for await (const e of deps.events.readStream(stream)) {
    entry.revision = e.revision;
    const event = deps.decode<{ type: string; data: { bodyHash: string } & StoredResponse }>(e);
    if (event.type === 'IdempotentRequestStarted') entry.started = event.data.bodyHash;
    if (event.type === 'IdempotentRequestReleased') delete entry.started;
    if (event.type === 'IdempotentRequestCompleted') entry.completed = { status: event.data.status, contentType: event.data.contentType, body: event.data.body };
  }
  return entry;
};

const replay = (entry: Entry, bodyHash: string): StoredResponse & { replayed: true } => {
  if (entry.started !== bodyHash) {
    throw new DomainError('invalid', 'svc:api:idempotency-key-reused', 'This Idempotency-Key was already used for a request with a different body');
  }
  if (!entry.completed) throw new DomainError('conflict', 'svc:api:idempotency-in-progress', 'A request with this Idempotency-Key is still being processed; retry later');
  return { ...entry.completed, replayed: true };
};

/**
 * Runs `run` at most once per (scope, key): the first request reserves the key in the event log,
 * a retry gets the stored answer. A key reused with another body is refused.
 */
export const onceByKey = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  scope: string,
  key: string,
  body: Buffer,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed?: true }> => {
  const stream = streamFor(scope, key);
  const bodyHash = createHash('sha256').update(body).digest('hex');
  const existing = await read(deps, stream);
  if (existing.started !== undefined) return replay(existing, bodyHash);
  let revision: number;
  try {
    revision = (await deps.events.append(stream, toNewEvents([{ type: 'IdempotentRequestStarted', data: { bodyHash } }], metadata), existing.revision < 0 ? 'no_stream' : existing.revision)).revision;
  } catch (e) {
    if (e instanceof WrongExpectedRevisionError) return replay(await read(deps, stream), bodyHash);
    throw e;
  }
  let response: StoredResponse;
  try {
    response = await run();
  } catch (e) {
    // Nothing was answered: free the key so the client's retry runs the request again.
    await deps.events.append(stream, toNewEvents([{ type: 'IdempotentRequestReleased', data: {} }], metadata), revision);
    throw e;
  }
  await deps.events.append(stream, toNewEvents([{ type: 'IdempotentRequestCompleted', data: response }], metadata), revision);
  return response;
};
