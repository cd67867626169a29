import type * as t from 'io-ts';
import type { JsonSchema } from './json-schema.ts';

/** The HTTP methods OpenAPI 3.1 can describe (a path item's operation keys). */
export const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type Method = (typeof OPENAPI_METHODS)[number];

/** Who may call an operation: the admin token or session, an API key, or anyone (a signed URL, health). */
export type Access = 'admin' | 'api-key' | 'public';

/** One answer of an operation: JSON described by a codec (or, where none exists, a schema), or another media type. */
export interface Answer {
  readonly description: string;
  /** The codec the answer's JSON conforms to (checked against the route's TypeScript type, see `answerOf`). */
  readonly codec?: t.Mixed;
  /** A shared schema by its name under components.schemas. */
  readonly ref?: string;
  /** Hand-written, only where neither a codec nor a shared schema fits (say why beside it). */
  readonly schema?: JsonSchema;
  /** Default `application/json`. */
  readonly contentType?: string;
  /** A JSON answer that may also come in another media type (push-data's XML APIs). */
  readonly alsoAs?: readonly { readonly contentType: string; readonly schema: JsonSchema }[];
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Parameter {
  readonly name: string;
  readonly in: 'query' | 'header';
  readonly description: string;
  readonly required?: boolean;
  readonly schema?: JsonSchema;
}

export interface Operation {
  readonly method: Method;
  /** As the router declares it (`/objects/:ref`, prefix included); the document writes `{ref}`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly access: Access;
  /** Descriptions of the path parameters, by name (each is a string). */
  readonly pathParams?: Readonly<Record<string, string>>;
  readonly parameters?: readonly Parameter[];
  /** A JSON body validated by `codec` (the route's own), or a body of another kind. */
  readonly body?:
    | { readonly codec: t.Mixed; readonly required?: boolean }
    | { readonly contentType: string; readonly schema: JsonSchema; readonly description: string };
  readonly responses: Readonly<Record<number, Answer>>;
}

/**
 * Declares the codec that documents an answer whose value has TypeScript type `A` (what the route
 * really sends). Compiles only when every `A` is a value of the codec's type, so an answer that
 * loses or retypes a documented field fails the type check, not just the e2e check.
 */
export const answerOf =
  <A>() =>
  <C extends t.Mixed>(codec: C, ..._conforms: [A] extends [t.TypeOf<C>] ? [] : [`the answer's type does not conform to ${C['name']}`]): C =>
    codec;
