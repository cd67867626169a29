import type { EventStore } from '../events/event-store.ts';
import { stableJson } from '../domain/stable-json.ts';
import { MemoryDocs } from './batch-docs.ts';
import type { Projector } from './projector.ts';
import type { Doc, ReadStore } from './read-store.ts';

export interface Difference {
  readonly collection: string;
  readonly id: string;
  /** missing: in the log's answer, not in the read model; unexpected: the other way round; different: both, unequal. */
  readonly kind: 'missing' | 'unexpected' | 'different';
  readonly live?: Doc;
  readonly expected?: Doc;
}

export interface VerifyResult {
  readonly projection: string;
  readonly position: number;
  readonly ok: boolean;
  readonly documents: number;
  /** Total number of differences; `differences` holds the first few. */
  readonly differenceCount: number;
  readonly differences: readonly Difference[];
}

const SHOWN = 20;

/**
 * Replays the log up to the projection's checkpoint into a scratch model and compares it with the
 * live read model, document by document. A checkpoint that moves while comparing (the service is
 * running) makes it try again at the new one.
 */
export const verifyProjection = async (events: EventStore, reads: ReadStore, projector: Projector, attempts = 5): Promise<VerifyResult> => {
  for (let attempt = 1; ; attempt++) {
    const position = (await reads.getCheckpoint(projector.name))?.position ?? 0;
    const scratch = new MemoryDocs();
    for await (const event of events.readAll({ after: 0 })) {
      if (event.position > position) break;
      if (projector.handles === undefined || projector.handles.includes(event.type)) await projector.apply(event, scratch);
    }
    const differences: Difference[] = [];
    let documents = 0;
    for (const spec of projector.collections) {
      const live = new Map((await reads.find(spec.name)).map((d) => [d.id, d]));
      const expected = scratch.collections.get(spec.name) ?? new Map<string, Doc>();
      documents += expected.size;
      for (const [id, doc] of expected) {
        const got = live.get(id);
        if (!got) differences.push({ collection: spec.name, id, kind: 'missing', expected: doc });
        else if (stableJson(got) !== stableJson(doc)) differences.push({ collection: spec.name, id, kind: 'different', live: got, expected: doc });
      }
      for (const [id, doc] of live) if (!expected.has(id)) differences.push({ collection: spec.name, id, kind: 'unexpected', live: doc });
    }
    const moved = ((await reads.getCheckpoint(projector.name))?.position ?? 0) !== position;
    if (moved && attempt < attempts) continue;
    return { projection: projector.name, position, ok: differences.length === 0, documents, differenceCount: differences.length, differences: differences.slice(0, SHOWN) };
  }
};
