import type { EventStore, RecordedEvent, Subscription } from '../../events/event-store.ts';

/** What the feed needs of a projection: how far it has folded, and whether it still takes batches. */
export interface Member {
  readonly folded: number;
  readonly stopped: boolean;
}

/** Folds the part of a batch the member has not seen; `more` when the batch was full (the log likely has more). */
export type Fold<M> = (member: M, batch: readonly RecordedEvent[], more: boolean) => Promise<void>;

/**
 * One reading of the log shared by several projections, so the log is read and parsed once however
 * many there are. Members may stand at different checkpoints: the reader starts at the oldest and
 * each member is handed only what lies past its own position. The members' folds of a batch start
 * together (their commits are then asked in one turn, which the embedded store commits as one
 * transaction) and the next batch waits for the slowest; a member whose batch failed leaves and
 * retries on a feed of its own.
 */
export class Feed<M extends Member> {
  private readonly members: Set<M>;
  private subscription?: Subscription;
  /** Set when the last member left: from then on nothing is handed out, even before the reader has stopped. */
  private stopped = false;

  constructor(members: Iterable<M>) {
    this.members = new Set(members);
  }

  /** Starts reading after `after`; if the reader itself fails (not a member's fold), every member is told. */
  open(options: {
    readonly events: Pick<EventStore, 'subscribe'>;
    readonly after: number;
    readonly batchSize: number;
    readonly fold: Fold<M>;
    readonly failed: (member: M, error: Error) => void;
  }): void {
    const { events, after, batchSize, fold, failed } = options;
    const subscription = events.subscribe({ after, batchSize }, (batch) => this.deliver(batch, batch.length >= batchSize, fold));
    this.subscription = subscription;
    subscription.done.then(
      () => undefined,
      (error: Error) => {
        for (const member of [...this.members]) failed(member, error);
      },
    );
  }

  /**
   * Takes a member off; the last one to leave stops the reader. Resolves once it has stopped, which
   * waits for the batch in progress: a caller inside that batch's fold must not wait for it.
   */
  async leave(member: M): Promise<void> {
    this.members.delete(member);
    if (this.members.size > 0) return;
    this.stopped = true;
    await this.subscription?.stop();
  }

  private async deliver(batch: readonly RecordedEvent[], more: boolean, fold: Fold<M>): Promise<void> {
    const folds: Promise<void>[] = [];
    // A copy: a member may leave while the batch goes round.
    for (const member of [...this.members]) {
      if (this.stopped || member.stopped) continue;
      const from = batch.findIndex((e) => e.position > member.folded);
      if (from < 0) continue;
      folds.push(fold(member, from === 0 ? batch : batch.slice(from), more));
    }
    await Promise.all(folds);
  }
}
