import { BytesBounded } from '../projections/bytes-bounded.ts';
import type { MembersState } from './collection-members.ts';
import type { InfoSummary } from './live-infos.ts';

/** The last live answer's state for one collection and access, with the summaries it was made from. */
export interface KeptMembers {
  readonly state: MembersState;
  /** LiveInfos' map of the collection: a state is taken only with the same map (another means it was read afresh). */
  readonly infos: ReadonlyMap<string, InfoSummary>;
  /** The checkpoint those summaries were at least as new as. */
  readonly position: number;
}

/**
 * The state of the last live collection-data answer per collection and access (MembersState), so
 * that the next answer after a write makes again only what the write touched. Bounded in bytes;
 * a state is replaced only by one at least as new (answers being made at once may finish in any order).
 */
export class LiveMembers {
  private readonly kept: BytesBounded<string, KeptMembers>;

  constructor(maxBytes: number) {
    this.kept = new BytesBounded(maxBytes, maxBytes / 2);
  }

  get(key: string): KeptMembers | undefined {
    return this.kept.get(key);
  }

  put(key: string, value: KeptMembers): void {
    const now = this.kept.get(key);
    if (now && now.infos === value.infos && now.position > value.position) return;
    this.kept.put(key, value, value.state.bytes);
  }
}
