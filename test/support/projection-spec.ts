/**
 * Given / then for projectors: given these events in the log, then these documents in the read
 * model. The events are recorded as the store records them (JSON data, ids, positions, revisions
 * per stream, the schema version the append path writes, one second apart) and folded as the
 * runner folds them: each is checked against its codec, skipped unless the projector handles it,
 * and applied in log order to documents kept as JSON text, as a read store keeps them.
 *
 *   const objects = projectionSpec(objectsProjector(decode));
 *   const model = objects.given([created(ADA, person('Ada'))]);
 *   await model.thenDoc(OBJECTS, ADA, { id: ADA, title: 'Ada', ... });
 *   await model.thenDocs(OBJECT_LINKS, [typeLink]);
 *   await model.thenNoDoc(OBJECT_LINKS, `${ADA}|svc:attribute:department|0`);
 *
 * The checks are not named `then`: an object with a `then` method is a thenable, and `await`ing
 * it would call the check with the promise's callbacks.
 */
import * as assert from 'uvu/assert';
import type { DomainEvent } from '../../src/domain/decider.ts';
import { domainCodecs } from '../../src/events/codecs.ts';
import { eventDecoder } from '../../src/events/decode.ts';
import type { EventMetadata, RecordedEvent } from '../../src/events/event-store.ts';
import type { DocAccess, Projector } from '../../src/projections/projector.ts';
import type { Doc } from '../../src/projections/read-store.ts';

/** The service's decoder, for building the projector under test. */
export const decode = eventDecoder(domainCodecs);

const FIRST_AT = Date.parse('2026-01-02T03:04:05.000Z');

/** When the given event at `index` (from 0) is recorded, unless it says otherwise: one second apart. */
export const givenAt = (index: number): string => new Date(FIRST_AT + index * 1000).toISOString();

/** An event as a test gives it; the rest of its record is filled in. */
export interface GivenEvent extends DomainEvent {
  readonly stream?: string;
  readonly recordedAt?: Date;
  /** Default: what the append path writes (the type's schema version when above 1). */
  readonly metadata?: EventMetadata;
}

/** The events as read back from the store: positions 1, 2, ...; revisions counted per stream. */
export const recorded = (events: readonly GivenEvent[]): RecordedEvent[] => {
  const revisions = new Map<string, number>();
  return events.map((e, i) => {
    const stream = e.stream ?? 'given';
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    const version = domainCodecs[e.type]?.version ?? 1;
    return {
      id: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
      type: e.type,
      data: JSON.parse(JSON.stringify(e.data)) as unknown,
      metadata: e.metadata ?? (version > 1 ? { schemaVersion: version } : {}),
      stream,
      revision,
      position: i + 1,
      recordedAt: e.recordedAt ?? new Date(givenAt(i)),
    };
  });
};

const byId = (docs: readonly Doc[]): Doc[] => [...docs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

/** Documents as a read store keeps them: JSON text per id, only in the projector's own collections. */
class JsonDocs implements DocAccess {
  private readonly collections = new Map<string, Map<string, string>>();

  constructor(private readonly projector: Projector) {
    for (const c of projector.collections) this.collections.set(c.name, new Map());
  }

  of(collection: string): Map<string, string> {
    const docs = this.collections.get(collection);
    if (!docs) throw new Error(`${collection} is not a collection of projector ${this.projector.name}`);
    return docs;
  }

  async get<T extends Doc = Doc>(collection: string, id: string): Promise<T | null> {
    const json = this.of(collection).get(id);
    return json === undefined ? null : (JSON.parse(json) as T);
  }

  put(collection: string, doc: Doc): void {
    if (typeof doc.id !== 'string' || doc.id === '') throw new Error(`${collection}: a document without an id: ${JSON.stringify(doc)}`);
    this.of(collection).set(doc.id, JSON.stringify(doc));
  }

  delete(collection: string, id: string): void {
    this.of(collection).delete(id);
  }

  all(collection: string): Doc[] {
    return byId([...this.of(collection).values()].map((json) => JSON.parse(json) as Doc));
  }
}

export interface Then {
  /** The collection holds exactly these documents (in any order). */
  thenDocs(collection: string, expected: readonly Doc[]): Promise<void>;
  /** The document with this id is exactly `expected`. */
  thenDoc(collection: string, id: string, expected: Doc): Promise<void>;
  thenNoDoc(collection: string, id: string): Promise<void>;
  /** Folding the events fails with an error whose message matches. */
  thenFails(message: RegExp): Promise<void>;
  /** The collection's documents sorted by id, for checks the others do not cover. */
  docs(collection: string): Promise<Doc[]>;
}

export const projectionSpec = (projector: Projector) => ({
  given(events: readonly GivenEvent[]): Then {
    let folded: Promise<JsonDocs> | undefined;
    const fold = () =>
      (folded ??= (async () => {
        const docs = new JsonDocs(projector);
        // A fresh decoder checks every given event, folded or not: a malformed one is a broken test.
        const check = eventDecoder(domainCodecs);
        for (const event of recorded(events)) {
          check(event);
          if (projector.handles === undefined || projector.handles.includes(event.type)) await projector.apply(event, docs);
        }
        return docs;
      })());
    const folding = async () => {
      try {
        return await fold();
      } catch (e) {
        throw new Error(`Folding the given events into ${projector.name} failed: ${(e as Error).message}`, { cause: e });
      }
    };
    return {
      async thenDocs(collection, expected) {
        assert.equal((await folding()).all(collection), byId(expected), `documents of ${collection}`);
      },
      async thenDoc(collection, id, expected) {
        const docs = await folding();
        const doc = await docs.get(collection, id);
        assert.ok(doc, `${collection} has ${id} (it has ${[...docs.of(collection).keys()].join(', ') || 'nothing'})`);
        assert.equal(doc, expected, `${collection}/${id}`);
      },
      async thenNoDoc(collection, id) {
        const doc = await (await folding()).get(collection, id);
        assert.is(doc, null, `${collection} has no ${id}, found ${JSON.stringify(doc)}`);
      },
      async thenFails(message) {
        const outcome = await fold().then(
          () => undefined,
          (e: Error) => e,
        );
        assert.ok(outcome, `folding into ${projector.name} was expected to fail with ${message}`);
        assert.match(outcome.message, message);
      },
      async docs(collection) {
        return (await folding()).all(collection);
      },
    };
  },
});
