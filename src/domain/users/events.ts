/** Domain events of users (`user-<username>`), groups (`group-<code>`) and API keys (`apikey-<id>`). */
export type UserEvent =
  | {
      readonly type: 'UserCreated';
      readonly data: {
        readonly username: string;
        readonly email?: string;
        /** Ref of the person object that represents the user. */
        readonly profileRef?: string;
        readonly groups: readonly string[];
        /** Service users exist for machines (e.g. push-data access); they have no profile. */
        readonly service: boolean;
        readonly tags?: Readonly<Record<string, string>>;
      };
    }
  | {
      readonly type: 'UserChanged';
      readonly data: {
        readonly username: string;
        readonly email?: string;
        readonly active?: boolean;
        readonly groups?: readonly string[];
        readonly tags?: Readonly<Record<string, string>>;
      };
    };

export type GroupEvent =
  | {
      readonly type: 'GroupCreated';
      readonly data: { readonly code: string; readonly title: string; readonly readAll: boolean; readonly readLabels: readonly string[] };
    }
  | {
      readonly type: 'GroupChanged';
      readonly data: { readonly code: string; readonly title?: string; readonly readAll?: boolean; readonly readLabels?: readonly string[] };
    };

export type ApiKeyEvent =
  | {
      readonly type: 'ApiKeyIssued';
      readonly data: {
        readonly id: string;
        readonly username: string;
        readonly name: string;
        /** `/prefix` or `=/exact/path`. */
        readonly path: string;
        /** First 16 characters of the key, for lookup. */
        readonly lookup: string;
        /** SHA-256 (hex) of the whole key; the key itself is never stored. */
        readonly hash: string;
      };
    }
  | { readonly type: 'ApiKeyRevoked'; readonly data: { readonly id: string } };

export const userStream = (username: string) => `user-${username}`;
export const groupStream = (code: string) => `group-${code}`;
export const apiKeyStream = (id: string) => `apikey-${id}`;

export const USER_EVENT_TYPES = ['UserCreated', 'UserChanged'] as const;
export const GROUP_EVENT_TYPES = ['GroupCreated', 'GroupChanged'] as const;
export const API_KEY_EVENT_TYPES = ['ApiKeyIssued', 'ApiKeyRevoked'] as const;
