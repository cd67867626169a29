import type { ReadStore } from '../projections/read-store.ts';
import { described, type ObjectDescription, type ObjectInfo } from '../projections/reporting/object-info.ts';
import { collectionNames, projectionName } from '../projections/reporting/collection-fold.ts';
import type { ObjectEntryMemo } from './collection-members.ts';
import type { ChangedObjects } from './changed-objects.ts';
import { OneAtATime } from './one-at-a-time.ts';
import type { Pause } from '../projections/projector.ts';

/** What a collection-data answer takes of an object the rows name: who may read it and how it is described. */
export type InfoSummary = ObjectDescription;

interface Mirror {
  /** The checkpoint every summary is at least as new as. */
  position: number;
  generation: number;
  readonly infos: Map<string, InfoSummary>;
  bytes: number;
}

/** Objects read from the store per call. */
const PAGE = 250;

// Heap bytes of a kept summary, roughly: the strings (UTF-16 at worst) and the objects around them.
const sizeOf = (id: string, s: InfoSummary): number => 160 + 2 * (id.length + s.title.length + (s.parent?.length ?? 0) + (s.behaviour?.length ?? 0) + s.labels.reduce((n, l) => n + l.length + 16, 0));

/**
 * The descriptions of the objects live collection-data answers name, kept between versions of
 * the collection's projection. Reading them again for every answer was most of an answer's cost
 * (10,000 rows name about 18,000 objects, whose fold documents carry the attributes the facts read:
 * 8.7 MB of JSON at 1M events), and a write changes a handful of them: so a request finds the
 * object events recorded since the checkpoint the summaries were last brought to, and reads again
 * only the objects those events are about (the fold changes an object's document only on its own
 * events). A switched-in rebuild (another generation), a long way behind, or a checkpoint that went
 * back reads them all again. Bounded in bytes per collection: a collection whose summaries would
 * take more is answered by reading them each time.
 */
export class LiveInfos {
  private readonly mirrors = new Map<string, Mirror>();
  /** One refresh per collection at a time: each moves its mirror's position. */
  private readonly refreshes = new OneAtATime();
  /** The `objects` dictionary's entries made from summaries, these and past ones (they go with them). */
  readonly entries: ObjectEntryMemo = new WeakMap();

  constructor(
    private readonly reads: ReadStore,
    private readonly changes: ChangedObjects,
    readonly maxBytes: number,
  ) {}

  /**
   * Summaries of `ids` at least as new as the collection's checkpoint when this is called, so
   * read it after the rows: labels are then never older than the facts they guard.
   */
  summaries(collection: string, ids: readonly string[], pause: Pause): Promise<ReadonlyMap<string, InfoSummary>> {
    return this.summariesAt(collection, ids, pause).then((s) => s.infos);
  }

  /**
   * `summaries`, with the checkpoint they are at least as new as while they are kept (undefined when
   * they are not: read for this call only). The same map is returned until it is read afresh.
   */
  summariesAt(collection: string, ids: readonly string[], pause: Pause): Promise<{ readonly infos: ReadonlyMap<string, InfoSummary>; readonly position: number | undefined }> {
    return this.refreshes.run(collection, () => this.refresh(collection, ids, pause));
  }

  /** The objects whose events lie in (after, upTo] (ChangedObjects.since). */
  changedSince(after: number, upTo: number): Promise<ReadonlySet<string> | undefined> {
    return this.changes.since(after, upTo);
  }

  /** Bytes of the summaries kept, over every collection. */
  get bytes(): number {
    let n = 0;
    for (const m of this.mirrors.values()) n += m.bytes;
    return n;
  }

  private async refresh(collection: string, ids: readonly string[], pause: Pause): Promise<{ infos: ReadonlyMap<string, InfoSummary>; position: number | undefined }> {
    const objects = collectionNames(collection).objects;
    const checkpoint = await this.reads.getCheckpoint(projectionName(collection));
    if (!checkpoint) return { infos: await this.read(objects, ids, pause, new Map()), position: undefined };
    const generation = checkpoint.generation ?? 0;
    let mirror = this.mirrors.get(collection);
    if (mirror && (mirror.generation !== generation || mirror.position > checkpoint.position)) mirror = undefined;
    if (mirror && mirror.position < checkpoint.position) {
      const changed = await this.changes.since(mirror.position, checkpoint.position);
      if (changed === undefined) mirror = undefined;
      else {
        const stale = [...changed].filter((id) => mirror!.infos.has(id));
        for (const id of stale) this.forget(mirror, id);
        await this.read(objects, stale, pause, mirror);
      }
    }
    if (!mirror) {
      this.mirrors.delete(collection);
      mirror = { position: checkpoint.position, generation, infos: new Map(), bytes: 0 };
    }
    mirror.position = checkpoint.position;
    const missing = ids.filter((id) => !mirror!.infos.has(id));
    await this.read(objects, missing, pause, mirror);
    if (mirror.bytes <= this.maxBytes) {
      this.mirrors.set(collection, mirror);
      return { infos: mirror.infos, position: mirror.position };
    }
    this.mirrors.delete(collection);
    return { infos: mirror.infos, position: undefined };
  }

  private forget(mirror: Mirror, id: string): void {
    const s = mirror.infos.get(id);
    if (!s) return;
    mirror.infos.delete(id);
    mirror.bytes -= sizeOf(id, s);
  }

  private async read(objects: string, ids: readonly string[], pause: Pause, into: Map<string, InfoSummary> | Mirror): Promise<Map<string, InfoSummary>> {
    const mirror = into instanceof Map ? undefined : into;
    const out = into instanceof Map ? into : into.infos;
    for (let i = 0; i < ids.length; i += PAGE) {
      for (const [id, info] of await this.reads.getMany<ObjectInfo>(objects, ids.slice(i, i + PAGE))) {
        const s = described(info);
        if (mirror) {
          this.forget(mirror, id);
          mirror.bytes += sizeOf(id, s);
        }
        out.set(id, s);
      }
      await pause();
    }
    return out;
  }
}
