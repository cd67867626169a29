import { newRef } from './new-ref.ts';
import { OBJECTS } from '../projections/read-models.ts';
import { STATE, WORK_TYPE, workUnitDecider, workUnitStream } from '../domain/work-units.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { runCommand } from './appending/run-command.ts';

const invalid = (message: string) => new DomainError('invalid', 'svc:workflow:invalid', message);

export const createWorkUnit = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  ref: string,
  command: { workType: string; state: string; deadline?: string | null; data?: Record<string, unknown>; tags?: Record<string, string> },
): Promise<{ id: string }> => {
  if (!WORK_TYPE.test(command.workType)) throw invalid('workType: a namespaced code such as phd:workflow:examination');
  if (!STATE.test(command.state)) throw invalid('state: 1-64 characters of a-z, 0-9, _ and -');
  if (!(await deps.reads.get(OBJECTS, ref))) throw new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);
  const id = newRef();
  const result = await runCommand(
    deps,
    workUnitStream(id),
    workUnitDecider,
    { type: 'CreateWorkUnit', id, ref, workType: command.workType, state: command.state, deadline: command.deadline ?? null, data: command.data ?? {}, tags: command.tags ?? {} },
    metadata,
  );
  await waitUntilVisible(deps, result.position);
  return { id };
};

export const transitionWorkUnit = async (deps: CommandDeps, metadata: EventMetadata, id: string, command: { state: string; closed?: boolean }) => {
  if (!STATE.test(command.state)) throw invalid('state: 1-64 characters of a-z, 0-9, _ and -');
  const result = await runCommand(deps, workUnitStream(id), workUnitDecider, { ...command, type: 'TransitionWorkUnit', id }, metadata);
  await waitUntilVisible(deps, result.position);
  return result.state!;
};
