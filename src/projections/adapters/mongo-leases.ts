import { MongoServerError, type ClientSession, type Collection, type Db } from 'mongodb';
import type { Lease } from '../read-store.ts';

interface StoredLease {
  _id: string;
  owner: string;
  expiresAt: Date;
  /** Writes fenced by the lease (see holdIn): written so that a take-over conflicts with them. */
  fencedWrites?: number;
}

const DUPLICATE_KEY = 11000;

/**
 * Leases in MongoDB: one document per lease. Every decision is one single-document update
 * evaluated on the server against the server's clock (`$$NOW`, MongoDB 4.2+ pipeline updates),
 * so nodes with skewed clocks still agree on when a lease lapses, and two owners can never both
 * take it (single-document writes are atomic).
 */
export class MongoLeases {
  private readonly leases: Collection<StoredLease>;

  constructor(db: Db) {
    this.leases = db.collection<StoredLease>('_leases');
  }

  async acquire(name: string, owner: string, ttlMs: number): Promise<boolean> {
    // Taken when the document is new (no owner yet), already ours, or lapsed; otherwise left as it is.
    const free = { $or: [{ $eq: [{ $type: '$owner' }, 'missing'] }, { $eq: ['$owner', owner] }, { $lte: ['$expiresAt', '$$NOW'] }] };
    const update = [
      {
        $set: {
          owner: { $cond: [free, owner, '$owner'] },
          expiresAt: { $cond: [free, { $add: ['$$NOW', ttlMs] }, '$expiresAt'] },
        },
      },
    ];
    const run = () => this.leases.findOneAndUpdate({ _id: name }, update, { upsert: true, returnDocument: 'after' });
    let after: StoredLease | null;
    try {
      after = await run();
    } catch (err) {
      // Two first acquisitions may race on the insert; the loser updates the document the winner made.
      if (!(err instanceof MongoServerError && Number(err.code) === DUPLICATE_KEY)) throw err;
      after = await run();
    }
    return after?.owner === owner;
  }

  async renew(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const result = await this.leases.updateOne({ _id: name, owner }, [{ $set: { expiresAt: { $add: ['$$NOW', ttlMs] } } }]);
    return result.matchedCount === 1;
  }

  async release(name: string, owner: string): Promise<void> {
    await this.leases.deleteOne({ _id: name, owner });
  }

  /**
   * Inside `session`'s transaction: false unless `owner` still holds `name` (lapsed or not). It
   * writes the lease document, so a take-over of it running meanwhile meets a write conflict: one of
   * the two waits for or retries after the other, and the transaction never commits beside it.
   */
  async holdIn(name: string, owner: string, session: ClientSession): Promise<boolean> {
    const result = await this.leases.updateOne({ _id: name, owner }, { $inc: { fencedWrites: 1 } }, { session });
    return result.matchedCount === 1;
  }

  /** Who took the lease last, lapsed or not (null: nobody holds it, or it was released). */
  async ownerOf(name: string): Promise<string | null> {
    return (await this.leases.findOne({ _id: name }))?.owner ?? null;
  }

  async get(name: string): Promise<Lease | null> {
    const [row] = await this.leases
      .aggregate<{ owner: string; remainingMs: number }>([
        { $match: { _id: name } },
        { $project: { _id: 0, owner: 1, remainingMs: { $subtract: ['$expiresAt', '$$NOW'] } } },
      ])
      .toArray();
    return row && row.remainingMs > 0 ? { name, owner: row.owner, remainingMs: row.remainingMs } : null;
  }
}
