import { OBJECT_EVENT_TYPES, objectStream } from '../domain/objects/events.ts';
import {
  decideChangeAttributes,
  decideChangeLabels,
  decideCreate,
  decideDelete,
  decideUndelete,
  evolveObject,
  type AttributeChange,
  type StoreObject,
} from '../domain/objects/object.ts';
import { newRef } from './new-ref.ts';
import type { Attributes } from '../domain/objects/values.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { runCommand, type CommandResult } from './appending/run-command.ts';

export interface ObjectChanged {
  readonly ref: string;
  readonly recordVersion: number;
  /** False when the command changed nothing (no event was written). */
  readonly changed: boolean;
}

const DEFAULT_LABEL = 'svc:label:common';

const answer = async (deps: CommandDeps, ref: string, result: CommandResult<StoreObject>): Promise<ObjectChanged> => {
  await waitUntilVisible(deps, result.position, OBJECT_EVENT_TYPES);
  return { ref, recordVersion: result.state?.recordVersion ?? 0, changed: result.appended > 0 };
};

/** Objects with no labels get the schema's common label, so label-based read access can reach them. */
export const defaultLabels = (deps: CommandDeps, labels: readonly string[] | undefined): readonly string[] =>
  labels ?? (deps.schema.labels.has(DEFAULT_LABEL) ? [DEFAULT_LABEL] : []);

export const createObject = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { attributes: Attributes; labels?: readonly string[]; ref?: string },
): Promise<ObjectChanged> => {
  const ref = command.ref ?? newRef();
  const labels = defaultLabels(deps, command.labels);
  const result = await runCommand(deps, objectStream(ref), evolveObject, (s) => decideCreate(s, { ref, attributes: command.attributes, labels }, deps.schema), metadata);
  return answer(deps, ref, result);
};

export const changeObject = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  ref: string,
  command: { changes?: readonly AttributeChange[]; labels?: { add?: readonly string[]; remove?: readonly string[] } },
): Promise<ObjectChanged> => {
  const result = await runCommand(
    deps,
    objectStream(ref),
    evolveObject,
    (s) => {
      if (!s) throw new DomainError('not-found', 'svc:object:no-such-object', `Object ${ref} does not exist`);
      const events = command.changes?.length ? decideChangeAttributes(s, { ref, changes: command.changes }, deps.schema) : [];
      const afterChanges = events.reduce<StoreObject | null>((st, e) => evolveObject(st, e, new Date()), s);
      const labels = command.labels ? decideChangeLabels(afterChanges, { ref, ...command.labels }, deps.schema) : [];
      // One request is one save: a label change joins the attribute change rather than adding a version.
      const [changed] = events;
      const [relabelled] = labels;
      if (changed?.type === 'ObjectAttributesChanged' && relabelled?.type === 'ObjectLabelsChanged') {
        return [{ ...changed, data: { ...changed.data, labels: relabelled.data.labels } }];
      }
      return [...events, ...labels];
    },
    metadata,
  );
  return answer(deps, ref, result);
};

export const deleteObject = async (deps: CommandDeps, metadata: EventMetadata, ref: string): Promise<ObjectChanged> =>
  answer(deps, ref, await runCommand(deps, objectStream(ref), evolveObject, (s) => decideDelete(s, ref), metadata));

export const undeleteObject = async (deps: CommandDeps, metadata: EventMetadata, ref: string): Promise<ObjectChanged> =>
  answer(deps, ref, await runCommand(deps, objectStream(ref), evolveObject, (s) => decideUndelete(s, ref), metadata));
