/**
 * Errors of the commands and queries, as the admin API would answer them (same status, kind,
 * message and `errors`), and which form field each one belongs beside.
 */
import { toHttpError } from '../errors.ts';
import type { FieldErrors, Problem } from './layout.ts';

/** The admin API's answer to an error, or undefined for an unexpected failure (a 500 there too). */
export const problemOf = (e: unknown): Problem | undefined => {
  const mapped = toHttpError(e);
  if (!mapped) return undefined;
  const errors = Array.isArray(mapped.details.errors) ? (mapped.details.errors as unknown[]).map(String) : [mapped.message];
  return { status: mapped.status, kind: mapped.kind, message: mapped.message, errors };
};

/** Kinds whose message belongs to a known field though it does not start with `field:`. */
const FIELD_OF_KIND: Readonly<Record<string, string>> = {
  'svc:rest-api:url-in-use': 'url',
  'svc:rest-api:invalid-url': 'url',
  'svc:rest-api:invalid-description': 'description',
  'svc:rest-api:invalid-control-file': 'controlFile',
  'svc:group:no-such-group': 'groups',
  'svc:user:exists': 'username',
  'svc:group:exists': 'code',
};

/**
 * Sorts a problem's messages onto the form's fields: by kind, else by a leading `field:`. Messages
 * that fit no field are returned as `general`.
 */
export const fieldErrorsOf = (problem: Problem | undefined, fields: readonly string[]): { fields: FieldErrors; general: boolean } => {
  if (!problem) return { fields: {}, general: false };
  const byKind = FIELD_OF_KIND[problem.kind];
  if (byKind && fields.includes(byKind)) {
    return { fields: { [byKind]: problem.kind === 'svc:rest-api:invalid-control-file' ? problem.errors : [problem.message] }, general: false };
  }
  const out: Record<string, string[]> = {};
  let general = false;
  for (const message of problem.errors) {
    const m = /^([A-Za-z]+)(?:[.[][^:]*)?:\s*(.+)$/.exec(message);
    const field = m && fields.find((f) => f === m[1]);
    if (field) (out[field] ??= []).push(m[2]!);
    else general = true;
  }
  return { fields: out, general };
};
