import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { EventMetadata, ExportedEvent, RecordedEvent } from '../events/event-store.ts';

/** One event as a JSON line: what `svc events` prints and an export holds (`position` is informational). */
export const eventLine = (e: RecordedEvent): string =>
  `${JSON.stringify({ id: e.id, type: e.type, stream: e.stream, revision: e.revision, position: e.position, recordedAt: e.recordedAt.toISOString(), data: e.data, metadata: e.metadata })}\n`;

const NonNegativeInteger = new t.Type<number, number, unknown>(
  'a non-negative integer',
  (u): u is number => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0,
  (u, c) => (typeof u === 'number' && Number.isSafeInteger(u) && u >= 0 ? t.success(u) : t.failure(u, c)),
  t.identity,
);

const Instant = new t.Type<Date, string, unknown>(
  'a UTC time like 2024-03-12T10:00:00.000Z',
  (u): u is Date => u instanceof Date,
  (u, c) => {
    if (typeof u !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(u)) return t.failure(u, c);
    const at = new Date(u);
    return Number.isNaN(at.getTime()) ? t.failure(u, c) : t.success(at);
  },
  (d) => d.toISOString(),
);

const NonEmpty = new t.Type<string, string, unknown>('a non-empty string', (u): u is string => typeof u === 'string' && u.length > 0, (u, c) => (typeof u === 'string' && u.length > 0 ? t.success(u) : t.failure(u, c)), t.identity);

const ExportedLine = t.type({
  id: NonEmpty,
  type: NonEmpty,
  stream: NonEmpty,
  revision: NonNegativeInteger,
  recordedAt: Instant,
  data: t.unknown,
  metadata: t.UnknownRecord,
});

export class BadLineError extends Error {
  override readonly name = 'BadLineError';
}

/** An exported line back to an event to import; errors name the line and the field, never echo the data. */
export const parseEventLine = (text: string, lineNumber: number): ExportedEvent => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new BadLineError(`line ${lineNumber}: not JSON`);
  }
  const result = ExportedLine.decode(json);
  if (isLeft(result)) {
    const problems = result.left.slice(0, 3).map((e) => {
      const path = e.context.map((c) => c.key).filter(Boolean).join('.');
      return `${path || 'the line'}: expected ${e.context[e.context.length - 1]?.type.name ?? 'value'}`;
    });
    throw new BadLineError(`line ${lineNumber}: ${problems.join('; ')}`);
  }
  const { id, type, stream, revision, recordedAt, data, metadata } = result.right;
  return { id, type, stream, revision, recordedAt, data, metadata: metadata as EventMetadata };
};
