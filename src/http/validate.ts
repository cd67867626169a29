import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { Context } from 'koa';
import type { EventMetadata } from '../events/event-store.ts';
import { badRequest } from './errors.ts';
import type { AppState } from './state.ts';

/** The field path of an io-ts error, without the member indexes of intersections and unions. */
const pathOf = (e: t.ValidationError) => {
  const keys: string[] = [];
  e.context.forEach((c, i) => {
    const parent = e.context[i - 1]?.type as { _tag?: string; type?: { _tag?: string } } | undefined;
    // Exact types pass their context on unchanged, so an index may sit under the exact wrapper.
    const combinator = (tag?: string) => tag === 'IntersectionType' || tag === 'UnionType';
    if (c.key === '' || combinator(parent?._tag) || (parent?._tag === 'ExactType' && combinator(parent.type?._tag))) return;
    keys.push(c.key);
  });
  return keys.join('.') || 'body';
};

/** Decodes a request body, or throws a 400 naming the fields that are wrong (never echoing values). */
export const decodeBody = <C extends t.Mixed>(codec: C, body: unknown): t.TypeOf<C> => {
  if (body === undefined) throw badRequest('A JSON request body is required');
  const result = codec.decode(body);
  if (isLeft(result)) {
    const problems = [...new Set(result.left.map((e) => `${pathOf(e)}: expected ${e.context[e.context.length - 1]?.type.name ?? 'a value'}`))];
    throw badRequest(`Invalid request body: ${problems.slice(0, 5).join('; ')}`);
  }
  return result.right;
};

/** Event metadata for a command caused by this request. */
export const metadataOf = (ctx: Context & { state: AppState }): EventMetadata => ({
  correlationId: ctx.state.requestId,
  actor: ctx.state.actor ?? 'anonymous',
});

export const optionalProps = <R extends t.Props, O extends t.Props>(name: string, required: R, optional: O) =>
  t.exact(t.intersection([t.type(required), t.partial(optional)], name));
