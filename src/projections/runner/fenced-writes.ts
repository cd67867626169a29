import type { Checkpoint, ReadStore, WriteOp } from '../read-store.ts';

/**
 * The read store as a projection's after-batch step sees it: reads as they are, writes (its
 * snapshots) committed together with a check that the projection's stored checkpoint is still
 * the one this runner stored last. A runner that lost the projection's lease without noticing
 * (another process has committed since) writes nothing: CheckpointConflictError.
 */
export const fencedWrites = (reads: ReadStore, projection: string, stored: () => Checkpoint): ReadStore => {
  const write = (ops: readonly WriteOp[]) => {
    const checkpoint = stored();
    // Before this runner's first stored checkpoint there is nothing to fence with.
    if (checkpoint.position === 0) return reads.bulkWrite(ops);
    return reads.commitBatch(projection, ops, checkpoint, { position: checkpoint.position });
  };
  const overrides: Partial<ReadStore> = {
    bulkWrite: write,
    upsert: (collection, doc) => write([{ kind: 'put', collection, doc }]),
    delete: (collection, id) => write([{ kind: 'delete', collection, id }]),
  };
  return new Proxy(reads, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in overrides) return overrides[prop as keyof ReadStore];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
};
