import { randomUUID } from 'node:crypto';
import { MongoServerError, type ClientSession, type Collection, type Db } from 'mongodb';
import type { Checkpoint, SwitchPlan } from '../read-store.ts';

/** The mark a switch leaves on a checkpoint document while under way; the live projection's holds the plan. */
export interface StoredSwitch {
  token: string;
  owner: string;
  /** By the server's clock: after it, another store may take the switch over. */
  expiresAt: Date;
  /** The projection whose document holds the plan (the retired checkpoint's mark points to it). */
  of: string;
  plan?: SwitchPlan;
}

/** A document made by marking a checkpoint that did not exist has no position until the switch completes. */
export interface StoredCheckpoint {
  _id: string;
  position?: number;
  generation?: number;
  switching?: StoredSwitch;
}

export interface CollectionMeta {
  _id: string;
  indexes: string[];
}

const NAMESPACE_NOT_FOUND = 26;
/** How often a store waiting for another store's switch looks again. */
const POLL_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const toCheckpoint = (stored: StoredCheckpoint | null): Checkpoint | null => {
  if (stored?.position === undefined) return null;
  return stored.generation ? { position: stored.position, generation: stored.generation } : { position: stored.position };
};

export interface SwitchContext {
  readonly db: Db;
  readonly checkpoints: Collection<StoredCheckpoint>;
  readonly meta: Collection<CollectionMeta>;
  readonly transaction: (fn: (session: ClientSession) => Promise<void>) => Promise<void>;
  /** Drops what the store remembers of a renamed collection. */
  readonly forget: (name: string) => void;
  readonly leaseMs: number;
}

/**
 * The blue/green switch on MongoDB, which cannot rename a collection inside a transaction. The
 * checkpoints are marked first (one transaction: from then on every commitBatch on them
 * conflicts, so no live batch can land in a renamed collection), then the collections are renamed,
 * then one transaction moves the checkpoints and clears the marks. A mark outlives a process that
 * died mid-way; renames skip a source already renamed, so whoever takes the switch over after its
 * lease lapsed (on the server's clock) simply runs it again.
 */
export class MongoSwitches {
  /** Owner of the switches this store begins or takes over. */
  private readonly owner = randomUUID();

  constructor(private readonly c: SwitchContext) {}

  async begin(plan: SwitchPlan): Promise<void> {
    const froms = plan.renames.map(([from]) => from);
    const found = await this.c.db.listCollections({ name: { $in: froms } }, { nameOnly: true }).toArray();
    const missing = froms.find((from) => !found.some((info) => info.name === from));
    if (missing !== undefined) throw new Error(`Cannot switch ${plan.projection} in: there is no collection ${missing}`);
    const base = { token: randomUUID(), owner: this.owner, of: plan.projection };
    // Values go through $literal: pipeline updates would read a string starting with `$` as a field.
    const mark = (fields: object) => [{ $set: { switching: { ...literally(fields), expiresAt: { $add: ['$$NOW', this.c.leaseMs] } } } }];
    await this.c.transaction(async (session) => {
      for (const name of [plan.projection, plan.retired]) {
        const stored = await this.c.checkpoints.findOne({ _id: name }, { session });
        if (stored?.switching) throw new Error(`Projection ${plan.projection}: a switch of ${name} is already under way`);
      }
      await this.c.checkpoints.updateOne({ _id: plan.projection }, mark({ ...base, plan }), { upsert: true, session });
      await this.c.checkpoints.updateOne({ _id: plan.retired }, mark(base), { upsert: true, session });
    });
  }

  /** Finishes the switch marked on `name` (the projection's or the retired checkpoint), waiting while another live store runs it. */
  async finish(name: string): Promise<void> {
    for (;;) {
      const mark = (await this.c.checkpoints.findOne({ _id: name }))?.switching;
      if (!mark) return;
      if (mark.of !== name) {
        name = mark.of;
        continue;
      }
      if (mark.owner !== this.owner && !(await this.takeOver(name, mark))) {
        await sleep(POLL_MS);
        continue;
      }
      // Looks again afterwards: a store that took this switch over meanwhile finishes it instead.
      await this.complete(name, mark);
    }
  }

  /** Takes over a switch whose lease lapsed by the server's clock; false while it has not (or another store got it). */
  private async takeOver(name: string, mark: StoredSwitch): Promise<boolean> {
    const result = await this.c.checkpoints.updateOne(
      { _id: name, 'switching.token': mark.token, 'switching.owner': mark.owner, $expr: { $lte: ['$switching.expiresAt', '$$NOW'] } },
      [{ $set: { 'switching.owner': { $literal: this.owner }, 'switching.expiresAt': { $add: ['$$NOW', this.c.leaseMs] } } }],
    );
    return result.modifiedCount === 1;
  }

  private async complete(projection: string, mark: StoredSwitch): Promise<void> {
    const { plan } = mark;
    if (!plan) throw new Error(`Projection ${projection}: its switch mark has no plan`);
    for (const [from, to] of plan.renames) {
      try {
        await this.c.db.renameCollection(from, to, { dropTarget: true });
      } catch (err) {
        // Renamed already, by an earlier attempt of this switch.
        if (!(err instanceof MongoServerError && Number(err.code) === NAMESPACE_NOT_FOUND)) throw err;
      }
    }
    await this.c.transaction(async (session) => {
      const stored = await this.c.checkpoints.findOne({ _id: projection }, { session });
      if (stored?.switching?.token !== mark.token || stored.switching.owner !== this.owner) return;
      for (const [from, to] of plan.renames) {
        const entry = await this.c.meta.findOne({ _id: from }, { session });
        if (!entry) continue;
        await this.c.meta.replaceOne({ _id: to }, { indexes: entry.indexes }, { upsert: true, session });
        await this.c.meta.deleteOne({ _id: from }, { session });
      }
      await this.c.checkpoints.updateOne(
        { _id: projection },
        { $set: { position: plan.checkpoint.position }, $inc: { generation: 1 }, $unset: { switching: '' } },
        { session },
      );
      await this.c.checkpoints.deleteOne({ _id: plan.retired }, { session });
    });
    for (const [from, to] of plan.renames) {
      this.c.forget(from);
      this.c.forget(to);
    }
  }
}

const literally = (fields: object) => Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, { $literal: value }]));
