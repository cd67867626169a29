/**
 * The read models: each collection's name and the type of its documents. Projectors write them;
 * commands and queries read them. (Which projector folds which events is in the projectors.)
 */
import type { StoredFile } from '../domain/files/files.ts';
import type { StoreObject } from '../domain/objects/object.ts';
import type { RestApi } from '../domain/rest-apis.ts';
import type { ApiKey, Group, User } from '../domain/users/users.ts';
import type { WorkUnit } from '../domain/work-units.ts';
import type { Doc } from './read-store.ts';

export type ObjectDoc = StoreObject & {
  readonly id: string;
  readonly title: string;
  /** Every title value (alternative titles included), for title mappings. */
  readonly titles: readonly string[];
  /** Configured behaviour code, for code-to-ref look-ups. */
  readonly behaviour: string | null;
};

/** One document per link value: who links to whom, through which attribute. */
export interface LinkDoc {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly attribute: string;
  readonly qualifier: string | null;
  readonly fromType: string;
  readonly fromCreated: string;
  readonly [k: string]: unknown;
}

export const OBJECTS = 'objects';
export const OBJECT_LINKS = 'object_links';

/** `emailKey`: the email in lower case, for case-insensitive look-ups. */
export type UserDoc = User & { readonly id: string; readonly emailKey: string | null };
export type GroupDoc = Group & { readonly id: string };
export type ApiKeyDoc = ApiKey;

export const USERS = 'users';
export const GROUPS = 'groups';
export const API_KEYS = 'api_keys';

export const FILES = 'files';
export type FileDoc = Doc & StoredFile;

export type RowDoc = {
  readonly id: string;
  /** `ref` then every declared fact, in their JSON forms. */
  readonly values: readonly unknown[];
  /** Labels of the row's object, for read permissions. */
  readonly labels: readonly string[];
  /** Objects the row's facts read through links. */
  readonly linkedTo: readonly string[];
};

export type RestApiDoc = RestApi & { readonly id: string };
export const REST_APIS = 'rest_apis';

export type WorkUnitDoc = WorkUnit;
export const WORK_UNITS = 'work_units';
