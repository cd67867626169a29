import type { Logger } from 'pino';
import type { EventDecoder } from '../events/decode.ts';
import type { EventMetadata, EventStore } from '../events/event-store.ts';
import type { ReadStore } from '../projections/read-store.ts';
import { ProjectionTimeoutError, type ProjectionRunner } from '../projections/runner.ts';
import type { Schema } from '../domain/schema.ts';
import type { StreamLocks } from './appending/stream-locks.ts';
import type { KeptStates } from './appending/run-command.ts';
import type { ObjectState } from '../domain/objects/object.ts';

/** What command handlers need: the log to write to and the read models to consult and wait for. */
export interface CommandDeps {
  readonly events: EventStore;
  readonly reads: ReadStore;
  readonly decode: EventDecoder;
  readonly schema: Schema;
  readonly runner: ProjectionRunner;
  /** Also bounds how long a command keeps retrying after conflicts (then ContentionTimeout). */
  readonly waitTimeoutMs: number;
  readonly logger: Logger;
  /** The process's stream locks (StoreHelpers.locks): given, commands on one stream take turns after a conflict. */
  readonly locks?: StreamLocks;
  /** Kept states of object streams (the push path's): given, object commands read only what was appended since. */
  readonly objectStates?: KeptStates<ObjectState>;
  /** How long a request holds its Idempotency-Key without renewing it (SVC_IDEMPOTENCY_LEASE_MS; default in idempotency.ts). */
  readonly idempotencyLeaseMs?: number;
}

/**
 * Read-your-writes: answer only once the read models show the command's effects. If they lag
 * beyond the bound the write still stands; the caller is told nothing false, only later.
 */
export const waitUntilVisible = async (deps: CommandDeps, position: number | undefined, types?: readonly string[]): Promise<void> => {
  if (position === undefined) return;
  try {
    await deps.runner.waitFor(position, { timeoutMs: deps.waitTimeoutMs, ...(types ? { types } : {}) });
  } catch (e) {
    if (!(e instanceof ProjectionTimeoutError)) throw e;
    deps.logger.warn({ position, behind: e.behind }, 'read models lag behind a command; answering anyway');
  }
};

export type { EventMetadata };
