import type { RebuildProgress } from '../rebuild.ts';

export type ProjectionState = 'starting' | 'catching-up' | 'live' | 'rebuilding' | 'failed' | 'stopped';

export interface ProjectionStatus {
  readonly name: string;
  readonly state: ProjectionState;
  /** Position of the last event folded into the read model (0 = none). */
  readonly checkpoint: number;
  readonly head: number;
  readonly lag: number;
  readonly lastError?: string;
  /** Progress of the projection's last rebuild, wherever it ran (kept in the read store). */
  readonly rebuild?: RebuildProgress & { readonly error?: string };
  /** Who folds the projection: the holder of its lease (`here`: this process), or null when nobody does. */
  readonly lease?: { readonly owner: string; readonly here: boolean } | null;
}

/** What a status is read from: the runner's record of one projection. */
export interface Observed {
  readonly projector: { readonly name: string };
  readonly checkpoint: number;
  readonly stopped: boolean;
  readonly failed?: Error;
  readonly rebuild?: RebuildProgress & { readonly error?: string };
  /** Unset until a reader feeds the projection, and again while it waits to be retried or resynced. */
  readonly feed?: unknown;
  /** Folded by another process (this one follows the checkpoints it stores). */
  readonly standby?: boolean;
}

/**
 * `rebuildStored`: a rebuild checkpoint is stored, so a rebuild is under way (in this process or
 * another) or was interrupted.
 */
export const statusOf = (run: Observed, head: number, rebuildStored: boolean, lease?: ProjectionStatus['lease']): ProjectionStatus => {
  const lag = Math.max(0, head - run.checkpoint);
  return {
    name: run.projector.name,
    state: stateOf(run, lag, rebuildStored),
    checkpoint: run.checkpoint,
    head,
    lag,
    ...(run.failed ? { lastError: run.failed.message } : {}),
    ...(run.rebuild ? { rebuild: run.rebuild } : {}),
    ...(lease !== undefined ? { lease } : {}),
  };
};

/** The first that applies wins: a stopped projection that had failed reads as stopped. */
const stateOf = (run: Observed, lag: number, rebuildStored: boolean): ProjectionState => {
  if (run.stopped) return 'stopped';
  if (run.failed) return 'failed';
  if ((run.rebuild && !run.rebuild.error && run.rebuild.phase !== 'done') || rebuildStored) return 'rebuilding';
  // A standby's checkpoint is the stored one, so its lag is the projection's wherever it is folded.
  if (!run.feed && !run.standby) return 'starting';
  return lag === 0 ? 'live' : 'catching-up';
};
