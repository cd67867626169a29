/**
 * Codecs of the answers. The routes build their answers from TypeScript types of the domain,
 * commands and queries (few answers have a codec of their own); each codec here is tied to the type
 * the route really sends by `answerOf`, so the type check fails when they part, and the OpenAPI
 * e2e test validates real answers against the schemas made from them.
 */
import * as t from 'io-ts';
import type { createUser, issueApiKey } from '../../commands/users.ts';
import type { ObjectChanged } from '../../commands/objects.ts';
import type { PushResult } from '../../commands/push-data/push-to-api.ts';
import type { ControlFile } from '../../domain/control-file.ts';
import type { Group, User } from '../../domain/users/users.ts';
import type { ProjectionStatus } from '../../projections/runner/status.ts';
import type { RebuildProgress } from '../../projections/rebuild.ts';
import type { ApiKeyDoc, RestApiDoc, UserDoc, WorkUnitDoc } from '../../projections/read-models.ts';
import type { presentFile } from '../../queries/file-api.ts';
import type { collectionDetail, listCollections } from '../../queries/reporting-api.ts';
import { annotate } from './json-schema.ts';
import { answerOf } from './operation.ts';

const Timestamp = annotate(t.string, { format: 'date-time', description: 'UTC ISO 8601 with milliseconds and Z' });
const Strings = t.readonlyArray(t.string);
const StringMap = t.record(t.string, t.string);

/** Every JSON error of the service (src/http/errors.ts, handle-errors middleware). */
export const ErrorBody = t.intersection(
  [
    t.type({ success: t.literal(false), kind: annotate(t.string, { description: 'Namespaced and stable: clients branch on it' }), error: t.type({ message: t.string }) }),
    // An invalid control file lists every problem.
    t.partial({ errors: t.readonlyArray(t.unknown) }),
  ],
  'ErrorBody',
);

/** A push-data answer in JSON (haplo-behaviour.md §2.2); XML APIs answer the same in XML. */
export const PushResultBody = answerOf<Omit<PushResult, 'retryAfterSeconds'>>()(
  t.type(
    {
      result: t.keyof({ success: null, failure: null, error: null, 'not authorised': null }),
      applied: t.number,
      failures: t.number,
      errorCount: t.number,
      errors: Strings,
      actions: t.readonlyArray(
        t.type({
          record: t.string,
          changed: t.readonlyArray(t.type({ kind: t.string, destination: t.string, ref: t.string, new: t.boolean })),
        }),
      ),
    },
    'PushResult',
  ),
);

/** The `svc:object:0` serialisation; attribute values' forms vary by type and requested sources. */
export const SerialisedObject = t.intersection(
  [
    t.type({
      kind: t.literal('svc:object:0'),
      sources: Strings,
      ref: t.string,
      url: t.string,
      recordVersion: t.number,
      title: t.string,
      labels: t.readonlyArray(t.type({ ref: t.string, title: t.string, code: t.string })),
      deleted: t.boolean,
      creationDate: Timestamp,
      lastModificationDate: Timestamp,
      type: t.type({ code: t.string, name: t.string, rootCode: t.string, annotations: Strings }),
      attributes: t.record(t.string, t.readonlyArray(t.UnknownRecord)),
    }),
    t.partial({ behaviour: t.string, workflows: t.readonlyArray(t.UnknownRecord), username: t.string }),
  ],
  'SerialisedObject',
);

export const RebuildProgressBody = answerOf<RebuildProgress>()(
  t.type({
    projection: t.string,
    processed: t.number,
    position: t.number,
    head: t.number,
    eventsPerSecond: t.number,
    etaSeconds: t.union([t.number, t.null]),
    phase: t.keyof({ building: null, switching: null, done: null, interrupted: null }),
  }),
);

export const ProjectionStatusBody = answerOf<ProjectionStatus>()(
  t.intersection([
    t.type({
      name: t.string,
      state: t.keyof({ starting: null, 'catching-up': null, live: null, rebuilding: null, failed: null, stopped: null }),
      checkpoint: t.number,
      head: t.number,
      lag: t.number,
    }),
    t.partial({
      lastError: t.string,
      rebuild: t.intersection([RebuildProgressBody, t.partial({ error: t.string })]),
      lease: t.union([t.type({ owner: t.string, here: t.boolean }), t.null]),
    }),
  ]),
);

/** A user as commands answer it (the decider's state). */
export const UserStateBody = answerOf<User>()(
  t.intersection([
    t.type({ username: t.string, groups: Strings, active: t.boolean, service: t.boolean }),
    t.partial({ email: t.string, profileRef: t.string, tags: StringMap }),
  ]),
);

/** A user as the read model holds it. */
export const UserBody = answerOf<UserDoc>()(t.intersection([UserStateBody, t.type({ id: t.string, emailKey: t.union([t.string, t.null]) })]));

export const CreatedUserBody = answerOf<Awaited<ReturnType<typeof createUser>>>()(t.type({ username: t.string, ref: t.string }));

export const GroupBody = answerOf<Group>()(t.type({ code: t.string, title: t.string, readAll: t.boolean, readLabels: Strings }));

/** An API key as listed: never its hash or lookup prefix. */
export const ApiKeyBody = answerOf<Omit<ApiKeyDoc, 'hash' | 'lookup'>>()(
  t.type({ id: t.string, username: t.string, name: t.string, path: t.string, revoked: t.boolean, createdAt: Timestamp }),
);

/** The only answer that shows a key: once, when it is issued. */
export const IssuedKeyBody = answerOf<Awaited<ReturnType<typeof issueApiKey>>>()(t.type({ id: t.string, key: t.string, path: t.string }));

export const RestApiBody = answerOf<RestApiDoc>()(
  t.type({
    id: t.string,
    url: t.string,
    description: t.string,
    enabled: t.boolean,
    response: t.keyof({ JSON: null, XML: null }),
    // As the RestApiDefined event's codec: the control file was validated when it was defined.
    control: annotate(t.UnknownRecord as unknown as t.Type<ControlFile, ControlFile, unknown>, { description: 'The control file, as validated when it was defined' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
);

export const ObjectChangedBody = answerOf<ObjectChanged>()(t.type({ ref: t.string, recordVersion: t.number, changed: t.boolean }));

export const WorkUnitBody = answerOf<WorkUnitDoc>()(
  t.type({
    id: t.string,
    ref: t.string,
    workType: t.string,
    state: t.string,
    createdAt: Timestamp,
    openedAt: Timestamp,
    deadline: t.union([Timestamp, t.null]),
    closed: t.boolean,
    data: t.UnknownRecord,
    tags: StringMap,
  }),
);

export const FileBody = answerOf<ReturnType<typeof presentFile>>()(
  t.type({
    digest: annotate(t.string, { pattern: '^[0-9a-f]{64}$' }),
    fileSize: t.number,
    mimeType: t.string,
    filename: t.string,
    createdAt: Timestamp,
    properties: t.UnknownRecord,
    tags: StringMap,
  }),
);

export const CollectionsBody = answerOf<ReturnType<typeof listCollections>>()(
  t.type({ collections: t.readonlyArray(t.type({ name: t.string, description: t.string, categories: Strings, info: t.string })) }),
);

export const CollectionBody = answerOf<Awaited<ReturnType<typeof collectionDetail>>>()(
  t.type({
    name: t.string,
    description: t.string,
    categories: Strings,
    status: t.keyof({ ready: null, updating: null }),
    facts: t.readonlyArray(t.type({ name: t.string, type: t.string, description: t.string })),
    data: t.string,
  }),
);
