import * as t from 'io-ts';
import { DomainError } from './errors.ts';
import { eventTypes, props, readonlyOf, type Decider, type EventOf } from './decider.ts';
import type { ControlFile } from './control-file.ts';

const ResponseFormatCodec = t.keyof({ JSON: null, XML: null });
export type ResponseFormat = t.TypeOf<typeof ResponseFormatCodec>;

/** Control files are validated before they are defined or changed; their events check only that one is an object. */
const ControlFileCodec = t.UnknownRecord as unknown as t.Type<ControlFile, ControlFile, unknown>;

/** Data codecs of the events of push-data API definitions (stream `restapi-<url>`), haplo-behaviour.md §2.1. */
export const restApiEventCodecs = {
  RestApiDefined: readonlyOf(t.type({ url: t.string, description: t.string, enabled: t.boolean, response: ResponseFormatCodec, control: ControlFileCodec })),
  RestApiChanged: props({ url: t.string }, { description: t.string, enabled: t.boolean, response: ResponseFormatCodec, control: ControlFileCodec }),
};

export type RestApiEvent = EventOf<typeof restApiEventCodecs>;
export const REST_API_EVENT_TYPES = eventTypes(restApiEventCodecs);
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

export type RestApiCommand =
  | {
      readonly type: 'DefineRestApi';
      readonly url: string;
      readonly description: string;
      readonly enabled: boolean;
      readonly response: ResponseFormat;
      readonly control: ControlFile;
    }
  /** Records only the properties that differ from the definition. */
  | {
      readonly type: 'ChangeRestApi';
      readonly url: string;
      readonly description?: string;
      readonly enabled?: boolean;
      readonly response?: ResponseFormat;
      readonly control?: ControlFile;
    };

export const restApiDecider: Decider<RestApiCommand, RestApi | null, RestApiEvent> = {
  initialState: null,
  evolve: evolveRestApi,
  decide(command, state) {
    switch (command.type) {
      case 'DefineRestApi': {
        if (state) throw new DomainError('conflict', 'svc:rest-api:url-in-use', 'URL is already in use.');
        const { url, description, enabled, response, control } = command;
        return [{ type: 'RestApiDefined', data: { url, description, enabled, response, control } }];
      }
      case 'ChangeRestApi': {
        if (!state) throw new DomainError('not-found', 'svc:rest-api:no-such-api', `REST API ${command.url} does not exist`);
        const changes: Record<string, unknown> = {};
        for (const key of ['description', 'enabled', 'response', 'control'] as const) {
          if (command[key] !== undefined && JSON.stringify(command[key]) !== JSON.stringify(state[key])) changes[key] = command[key];
        }
        return Object.keys(changes).length ? [{ type: 'RestApiChanged', data: { url: command.url, ...changes } }] : [];
      }
    }
  },
};
