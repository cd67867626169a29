import { OBJECT_EVENT_TYPES, objectStream } from '../domain/objects/events.ts';
import { objectDecider, type AttributeChange, type LabelChanges, type ObjectCommand, type ObjectState } from '../domain/objects/object.ts';
import { newRef } from './new-ref.ts';
import type { Attributes } from '../domain/objects/values.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { runCommand, type CommandResult } from './appending/run-command.ts';

export interface ObjectChanged {
  readonly ref: string;
  readonly recordVersion: number;
  /** False when the command changed nothing (no event was written). */
  readonly changed: boolean;
}

const DEFAULT_LABEL = 'svc:label:common';

const answer = async (deps: CommandDeps, ref: string, result: CommandResult<ObjectState | null>): Promise<ObjectChanged> => {
  await waitUntilVisible(deps, result.position, OBJECT_EVENT_TYPES);
  return { ref, recordVersion: result.state?.recordVersion ?? 0, changed: result.appended > 0 };
};

/** Objects with no labels get the schema's common label, so label-based read access can reach them. */
export const defaultLabels = (deps: CommandDeps, labels: readonly string[] | undefined): readonly string[] =>
  labels ?? (deps.schema.labels.has(DEFAULT_LABEL) ? [DEFAULT_LABEL] : []);

const run = async (deps: CommandDeps, metadata: EventMetadata, command: ObjectCommand): Promise<ObjectChanged> =>
  answer(deps, command.ref, await runCommand(deps, objectStream(command.ref), objectDecider(deps.schema), command, metadata, deps.objectStates));

export const createObject = (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { attributes: Attributes; labels?: readonly string[]; ref?: string },
): Promise<ObjectChanged> =>
  run(deps, metadata, { type: 'CreateObject', ref: command.ref ?? newRef(), attributes: command.attributes, labels: defaultLabels(deps, command.labels) });

export const changeObject = (
  deps: CommandDeps,
  metadata: EventMetadata,
  ref: string,
  command: { changes?: readonly AttributeChange[]; labels?: LabelChanges },
): Promise<ObjectChanged> => run(deps, metadata, { ...command, type: 'ChangeObject', ref });

export const deleteObject = (deps: CommandDeps, metadata: EventMetadata, ref: string): Promise<ObjectChanged> => run(deps, metadata, { type: 'DeleteObject', ref });

export const undeleteObject = (deps: CommandDeps, metadata: EventMetadata, ref: string): Promise<ObjectChanged> => run(deps, metadata, { type: 'UndeleteObject', ref });
