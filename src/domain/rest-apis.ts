import { DomainError } from './errors.ts';
import type { ControlFile } from './control-file.ts';

/** Push-data API definitions (stream `restapi-<url>`), haplo-behaviour.md §2.1. */
export type RestApiEvent =
  | {
      readonly type: 'RestApiDefined';
      readonly data: { readonly url: string; readonly description: string; readonly enabled: boolean; readonly response: ResponseFormat; readonly control: ControlFile };
    }
  | {
      readonly type: 'RestApiChanged';
      readonly data: { readonly url: string; readonly description?: string; readonly enabled?: boolean; readonly response?: ResponseFormat; readonly control?: ControlFile };
    };

export type ResponseFormat = 'JSON' | 'XML';
export const REST_API_EVENT_TYPES = ['RestApiDefined', 'RestApiChanged'] as const;
export const restApiStream = (url: string) => `restapi-${url}`;
export const REST_API_URL = /^[a-z0-9-]+$/;

export type RestApi = {
  readonly url: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly response: ResponseFormat;
  readonly control: ControlFile;
  readonly createdAt: string;
  readonly updatedAt: string;
};

export const evolveRestApi = (state: RestApi | null, event: RestApiEvent, recordedAt: Date): RestApi => {
  const at = recordedAt.toISOString();
  if (event.type === 'RestApiDefined') return { ...event.data, createdAt: at, updatedAt: at };
  if (!state) throw new Error(`RestApiChanged for ${event.data.url} before RestApiDefined`);
  return { ...state, ...event.data, updatedAt: at };
};

export const decideDefine = (state: RestApi | null, command: RestApiEvent & { type: 'RestApiDefined' }): RestApiEvent[] => {
  if (state) throw new DomainError('conflict', 'svc:rest-api:url-in-use', 'URL is already in use.');
  return [command];
};

export const decideChange = (
  state: RestApi | null,
  command: { url: string; description?: string; enabled?: boolean; response?: ResponseFormat; control?: ControlFile },
): RestApiEvent[] => {
  if (!state) throw new DomainError('not-found', 'svc:rest-api:no-such-api', `REST API ${command.url} does not exist`);
  const changes: Record<string, unknown> = {};
  for (const key of ['description', 'enabled', 'response', 'control'] as const) {
    if (command[key] !== undefined && JSON.stringify(command[key]) !== JSON.stringify(state[key])) changes[key] = command[key];
  }
  return Object.keys(changes).length ? [{ type: 'RestApiChanged', data: { url: command.url, ...changes } }] : [];
};
