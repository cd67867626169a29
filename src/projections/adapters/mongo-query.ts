/** Translation of ReadStore queries into MongoDB filters and sorts. */
import type { Document } from 'mongodb';
import { FIELD_PATH, type FieldCondition, type FindQuery } from '../read-store.ts';

const RANGE_OPS: ReadonlySet<string> = new Set(['$gt', '$gte', '$lt', '$lte']);

/** Validates a field path and maps our `id` to Mongo's `_id`. */
export function mongoField(field: string): string {
  if (!FIELD_PATH.test(field)) throw new Error(`Invalid field path: ${JSON.stringify(field)}`);
  return field === 'id' ? '_id' : field;
}

/** Every field a query filters or sorts by (each must be declared, except `id`). */
export function queryFields(query: FindQuery): string[] {
  return [...Object.keys(query.where ?? {}), ...(query.sort ?? []).map(([field]) => field)];
}

export function toFilter(where: FindQuery['where'] = {}): Document {
  const filter: Document = {};
  for (const [field, condition] of Object.entries(where)) {
    const translated = toCondition(field, condition);
    if (translated !== undefined) filter[mongoField(field)] = translated;
  }
  return filter;
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

function toCondition(field: string, condition: FieldCondition): unknown {
  if (isScalar(condition)) return condition;
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) {
    throw new Error(`Invalid condition on ${field}: ${String(condition)}`);
  }
  const entries = Object.entries(condition).filter(([, value]) => value !== undefined);
  if ('$in' in condition) {
    if (entries.length !== 1 || !Array.isArray(condition.$in) || !condition.$in.every(isScalar)) {
      throw new Error(`Invalid $in condition on ${field}: expected { $in: scalar[] } alone`);
    }
    return { $in: [...condition.$in] };
  }
  for (const [op, value] of entries) {
    if (!RANGE_OPS.has(op)) throw new Error(`Unsupported operator ${op} on ${field}`);
    if (!isScalar(value)) throw new Error(`Invalid ${op} value on ${field}`);
  }
  // An empty range constrains nothing, whereas Mongo would read `{ field: {} }` as equality with {}.
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

export function toSort(sort: FindQuery['sort'] = []): Map<string, 1 | -1> {
  const result = new Map<string, 1 | -1>();
  for (const [field, direction] of sort) {
    if (direction !== 'asc' && direction !== 'desc') throw new Error(`Invalid sort direction for ${field}: ${String(direction)}`);
    const key = mongoField(field);
    if (!result.has(key)) result.set(key, direction === 'asc' ? 1 : -1);
  }
  // Mongo does not order ties; sorting by _id last keeps results (and limits) deterministic.
  if (!result.has('_id')) result.set('_id', 1);
  return result;
}
