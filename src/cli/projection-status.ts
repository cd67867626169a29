import type { EventStore } from '../events/event-store.ts';
import type { Projector } from '../projections/projector.ts';
import type { ReadStore } from '../projections/read-store.ts';
import { readRebuilds, rebuildCheckpoint } from '../projections/rebuild.ts';
import { statusOf, type ProjectionStatus } from '../projections/runner/status.ts';

/**
 * How far a projection has really got, seen from its stored checkpoint: past it, up to the head,
 * events of types the projection does not fold change nothing. The process folding it moves its own
 * checkpoint over them at once but stores that advance only a moment later (or, for a batch that
 * wrote nothing, with its next write), so the stored checkpoint alone showed idle projections
 * "behind" by the last few events (idempotency keys, other families' events) while the admin API
 * said lag 0.
 */
export const effectiveCheckpoint = async (events: EventStore, projector: Projector, stored: number, head: number): Promise<number> => {
  if (stored >= head) return stored;
  if (projector.handles === undefined) return stored;
  for await (const next of events.readAll({ after: stored, types: projector.handles, maxCount: 1 })) {
    // A folded event lies ahead: the projection has really not got past the stored checkpoint.
    if (next.position <= head) return stored;
  }
  return head;
};

/**
 * Every projection's status as the admin API reports it (GET /api/admin/projections: the same
 * `statusOf`), read from the store the way a process that does not fold it sees it: by its stored
 * checkpoint, rebuild record and lease.
 */
export const storedProjectionStatus = async (events: EventStore, reads: ReadStore, projectors: readonly Projector[]): Promise<ProjectionStatus[]> => {
  const names = projectors.map((p) => p.name);
  const head = await events.headPosition();
  const [checkpoints, pending, rebuilds, leases] = await Promise.all([
    Promise.all(names.map((name) => reads.getCheckpoint(name))),
    Promise.all(names.map((name) => reads.getCheckpoint(rebuildCheckpoint(name)))),
    readRebuilds(reads, names),
    Promise.all(names.map((name) => reads.getLease(name))),
  ]);
  return Promise.all(
    projectors.map(async (projector, i) => {
      const checkpoint = await effectiveCheckpoint(events, projector, checkpoints[i]?.position ?? 0, head);
      const rebuild = rebuilds.get(projector.name);
      const lease = leases[i];
      return statusOf(
        { projector, checkpoint, stopped: false, standby: true, ...(rebuild ? { rebuild } : {}) },
        head,
        pending[i] !== null,
        lease ? { owner: lease.owner, here: false } : null,
      );
    }),
  );
};
