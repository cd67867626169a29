import { ContentionTimeout } from '../appending/until-committed.ts';
import type { Schema } from '../../domain/schema.ts';
import type { ControlFile, ImportLookups, Instruction } from '../../domain/control-file.ts';
import { makeConverter, type ConvertContext, type ValueConverter } from './convert.ts';
import { BatchFilters } from './filters.ts';
import type { ModelDef, NameDef } from '../../domain/model.ts';
import { READERS } from './readers.ts';
import { CommitError, planRecordCommit, type CommitHost, type RecordCommit, type SaveAction } from './commit-record.ts';
import { Transformation, type TransformationHost } from './transformation.ts';

export type BatchResultKind = 'success' | 'failure' | 'error';

export interface BatchResult {
  readonly result: BatchResultKind;
  readonly applied: number;
  readonly failures: number;
  readonly errorCount: number;
  readonly errors: readonly string[];
  readonly actions: readonly { readonly changed: readonly SaveAction[]; readonly record: string }[];
  /** Global position of the last write, for read-your-writes. */
  readonly position?: number;
  /** Types of the events written, so read-your-writes waits only for the read models they touch. */
  readonly types?: readonly string[];
}

/** The engine's access to the stores; implemented by the push-data command. */
export interface BatchPorts extends Omit<TransformationHost, 'schema' | 'model' | 'converter' | 'titleHint' | 'constants'>, Omit<CommitHost, 'schema' | 'model'> {
  readonly schema: Schema;
  readonly lookups: ImportLookups;
  /** Appends a record's writes atomically (where the engine can); a stale revision throws WrongExpectedRevisionError. */
  commit(plan: RecordCommit): Promise<number | undefined>;
  /**
   * Runs a record's attempt (transform, plan, commit) until its commit lands: again on fresh state
   * after a conflict, in turn with other commands on the same streams; past the time bound it
   * throws ContentionTimeout, having written nothing of the record.
   */
  untilCommitted<T>(attempt: () => Promise<T>): Promise<T>;
}

/**
 * A record could not be committed within the time bound because other writes to its records kept
 * conflicting: the batch stops there. `result` says what the batch did before (those records stay
 * committed) and why it stopped; the push answers "busy, retry later".
 */
export class BatchBusy extends Error {
  override readonly name = 'BatchBusy';
  constructor(readonly result: BatchResult) {
    super(result.errors.at(-1));
  }
}

const MAX_REPORTED = 500;

/** Collects errors with Haplo's cap: the 500th becomes a notice, later ones are only counted. */
class ErrorLog {
  readonly messages: string[] = [];
  count = 0;
  add(message: string) {
    this.count += 1;
    if (this.count < MAX_REPORTED) this.messages.push(message);
    else if (this.count === MAX_REPORTED) this.messages.push('Too many errors in import batch, no further errors will be reported');
  }
}

/**
 * One batch: the body read by the control file's reader, each record transformed and committed
 * on its own (earlier records stay committed when a later one fails). A record whose writes meet
 * a concurrent change is transformed again on fresh state (`BatchPorts.untilCommitted`); one that
 * cannot commit within the time bound ends the batch with BatchBusy.
 */
export const runBatch = async (ports: BatchPorts, control: ControlFile, model: ModelDef, body: Buffer): Promise<BatchResult> => {
  const log = new ErrorLog();
  const actions: { changed: SaveAction[]; record: string }[] = [];
  let applied = 0;
  let failures = 0;
  let position: number | undefined;
  const types = new Set<string>();
  let hinted = false;
  /** The hint was given by the current attempt of a record (an attempt that is retried gives it again). */
  let hintedInAttempt = false;
  /** The errors of the record attempt under way (its messages name the record); between records, messages go to the batch's log. */
  let underWay: { readonly id: string; readonly errors: string[] } | undefined;
  // Method shorthand throughout: these objects are made per batch, and named function values cost a little each to make.
  const report = {
    error(message: string): void {
      if (underWay) underWay.errors.push(`${message} (${underWay.id})`);
      else log.add(message);
    },
  };
  const current = report.error;
  const converters = new Map<Instruction, Map<string, ValueConverter | undefined>>();
  const filters = new BatchFilters(ports.lookups);
  const convertContext: ConvertContext = {
    schema: ports.schema,
    lookups: ports.lookups,
    mappings: control.mapping,
    filters,
    error: current,
    cache: new Map(),
  };
  const host: TransformationHost = {
    schema: ports.schema,
    constants: new Map(),
    model,
    loadObject(ref) {
      return ports.loadObject(ref);
    },
    findDependent(d, p) {
      return ports.findDependent(d, p);
    },
    profileOfUser(u) {
      return ports.profileOfUser(u);
    },
    converter(instruction: Instruction, name: NameDef) {
      let byName = converters.get(instruction);
      if (!byName) converters.set(instruction, (byName = new Map()));
      if (!byName.has(name.name)) {
        const made = makeConverter(instruction, name, convertContext);
        if ('error' in made) log.add(made.error);
        byName.set(name.name, 'error' in made ? undefined : made);
      }
      return byName.get(name.name);
    },
    titleHint() {
      // Reported once per batch, with the record's other errors (Haplo: right after the first missing title).
      if (hinted || hintedInAttempt) return;
      hintedInAttempt = true;
      current('To set defaults for dc:attribute:title, see example of if-has-value instruction at https://docs.haplo.org/import/control/instruction/if-has-value');
    },
  };
  const commitHost: CommitHost = {
    schema: ports.schema,
    model,
    labels: ports.labels,
    loadUser(u) {
      return ports.loadUser(u);
    },
    groupExists(g) {
      return ports.groupExists(g);
    },
  };

  let busy: string | undefined;
  try {
    const spec = control.files.body ?? control.files.DEFAULT;
    if (!spec) throw new Error('No reader specified for the request body (files.DEFAULT)');
    const reader = READERS[spec.read];
    if (!reader) throw new Error(`Unknown reader: ${spec.read}`);
    const records = reader(body, spec);
    for (const [index, record] of records.entries()) {
      const id = `record ${index}`;
      let attemptErrors: string[] = [];
      let outcome: { complete: boolean; changed: SaveAction[] };
      try {
        outcome = await ports.untilCommitted(async () => {
          attemptErrors = [];
          hintedInAttempt = false;
          underWay = { id, errors: attemptErrors };
          const t = new Transformation(host, current);
          await t.run(control.instructions, record);
          await t.finish();
          if (!t.complete) return { complete: false, changed: [] };
          try {
            const plan = await planRecordCommit(commitHost, t.targetsToCommit());
            position = (await ports.commit(plan)) ?? position;
            for (const a of plan.appends) for (const e of a.events) types.add(e.type);
            return { complete: true, changed: [...plan.actions] };
          } catch (e) {
            if (!(e instanceof CommitError)) throw e;
            attemptErrors.push(`${e.message} (${id})`);
            return { complete: false, changed: [] };
          }
        });
      } catch (e) {
        if (!(e instanceof ContentionTimeout)) throw e;
        underWay = undefined;
        busy = `Busy: ${id} could not be committed within ${e.timeoutMs} ms because other writes to the same records kept conflicting; nothing of it was changed, retry later`;
        break;
      }
      underWay = undefined;
      if (hintedInAttempt) hinted = true;
      for (const m of attemptErrors) log.add(m);
      actions.push({ changed: outcome.changed, record: id });
      if (outcome.complete) applied += 1;
      else failures += 1;
    }
  } catch (e) {
    const errorCount = log.count;
    log.messages.push(`Exception when processing: ${(e as Error).message}`);
    return { result: 'error', applied, failures, errorCount, errors: log.messages, actions, ...(position !== undefined ? { position, types: [...types] } : {}) };
  }
  if (busy !== undefined) {
    // Shaped like an exception's answer (haplo-behaviour.md §2.2): the message last, not counted.
    const errorCount = log.count;
    log.messages.push(busy);
    throw new BatchBusy({ result: 'error', applied, failures, errorCount, errors: log.messages, actions, ...(position !== undefined ? { position, types: [...types] } : {}) });
  }
  return {
    result: failures > 0 ? 'failure' : 'success',
    applied,
    failures,
    errorCount: log.count,
    errors: log.messages,
    actions,
    ...(position !== undefined ? { position, types: [...types] } : {}),
  };
};
