import type { ControlFile } from '../domain/control-file.ts';
import { REST_APIS, type RestApiDoc } from '../projections/read-models.ts';
import { REST_API_URL, restApiDecider, restApiStream, type ResponseFormat } from '../domain/rest-apis.ts';
import { groupStream } from '../domain/users/events.ts';
import { groupDecider } from '../domain/users/users.ts';
import { DomainError } from '../domain/errors.ts';
import { waitUntilVisible, type CommandDeps, type EventMetadata } from './context.ts';
import { runCommand } from './appending/run-command.ts';
import { changeUser, ensureServiceUser, issueApiKey } from './users.ts';

/** Members of this group may use push-data APIs; keys made for an API belong to its service user. */
export const PUSH_DATA_GROUP = 'svc:group:data-import-api';
export const PUSH_DATA_USER = 'svc-data-import-api';

/** Turns control-file validation messages into the refusal Haplo's form gives. */
export class InvalidControlFile extends DomainError {
  constructor(readonly problems: readonly string[]) {
    super('invalid', 'svc:rest-api:invalid-control-file', problems[0] === 'Invalid JSON, check syntax' ? problems[0] : `Not a valid control file: ${problems.join(', ')}`);
  }
}

export type ControlValidator = (control: unknown) => string[];

export const parseControlFile = (given: unknown, validate: ControlValidator): ControlFile => {
  let control = given;
  if (typeof given === 'string') {
    try {
      control = JSON.parse(given);
    } catch {
      throw new InvalidControlFile(['Invalid JSON, check syntax']);
    }
  }
  const problems = validate(control);
  if (problems.length) throw new InvalidControlFile(problems);
  return control as ControlFile;
};

export const defineRestApi = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  command: { url: string; description: string; enabled: boolean; response: ResponseFormat; control: ControlFile },
): Promise<RestApiDoc> => {
  if (!REST_API_URL.test(command.url)) throw new DomainError('invalid', 'svc:rest-api:invalid-url', 'url: must match ^[a-z0-9-]+$ (lower-case letters, digits and hyphens)');
  if (!command.description.trim()) throw new DomainError('invalid', 'svc:rest-api:invalid-description', 'description: is required');
  const result = await runCommand(deps, restApiStream(command.url), restApiDecider, { ...command, type: 'DefineRestApi' }, metadata);
  await waitUntilVisible(deps, result.position);
  return { ...result.state!, id: command.url };
};

export const changeRestApi = async (
  deps: CommandDeps,
  metadata: EventMetadata,
  url: string,
  command: { description?: string; enabled?: boolean; response?: ResponseFormat; control?: ControlFile },
): Promise<RestApiDoc> => {
  if (command.description !== undefined && !command.description.trim()) throw new DomainError('invalid', 'svc:rest-api:invalid-description', 'description: must not be empty');
  const result = await runCommand(deps, restApiStream(url), restApiDecider, { ...command, type: 'ChangeRestApi', url }, metadata);
  await waitUntilVisible(deps, result.position);
  return { ...result.state!, id: url };
};

/** A key that reaches this one API only (exact path `=/api/push-data/<url>`), for the push-data service user. */
export const issuePushDataKey = async (deps: CommandDeps, metadata: EventMetadata, url: string) => {
  const api = await deps.reads.get<RestApiDoc>(REST_APIS, url);
  if (!api) throw new DomainError('not-found', 'svc:rest-api:no-such-api', `REST API ${url} does not exist`);
  const group = await runCommand(
    deps,
    groupStream(PUSH_DATA_GROUP),
    groupDecider,
    { type: 'EnsureGroup', code: PUSH_DATA_GROUP, title: 'REST API data import', readAll: false, readLabels: [] },
    metadata,
  );
  await waitUntilVisible(deps, group.position);
  await ensureServiceUser(deps, metadata, PUSH_DATA_USER);
  await changeUser(deps, metadata, PUSH_DATA_USER, { groups: [PUSH_DATA_GROUP] });
  return issueApiKey(deps, metadata, PUSH_DATA_USER, { name: `REST API: ${api.description}`, path: `=/api/push-data/${url}` });
};
