import type { BatchLimit } from '../read-store.ts';

/**
 * When what a projection has folded is committed (its documents and checkpoint in one transaction).
 *
 * A live batch commits at once, so readers see it. While the projection is far behind, full batches
 * keep coming: they fold into one window that commits every few seconds or once it has grown large,
 * so a document changed by many events of the window is written once. A window left open when the
 * log ran out (its last batch happened to be full) commits after a short idle wait.
 */

/** Longest a catch-up window stays open. */
export const CATCH_UP_COMMIT_MS = 5000;
/** Most changed documents a catch-up window holds in memory. */
export const CATCH_UP_PENDING_DOCS = 100_000;
/** How soon a window is committed after the log ran out in the middle of it. */
export const IDLE_COMMIT_MS = 250;
/** Longest a checkpoint advanced by no-op batches stays unstored. */
export const PERSIST_IDLE_MS = 1000;

/** After a batch is folded: commit the window now? `more`: the batch was full, so the log likely has more. */
export const commitNow = (more: boolean, pendingDocs: number, openMs: number): boolean =>
  !more || pendingDocs > CATCH_UP_PENDING_DOCS || openMs > CATCH_UP_COMMIT_MS;

/**
 * Does a commit need a transaction? One that changes no document can skip it (re-folding no-op
 * events after a crash is harmless), until the stored checkpoint has lagged for too long.
 */
export const needsWrite = (changedDocs: number, unstoredMs: number): boolean => changedDocs > 0 || unstoredMs > PERSIST_IDLE_MS;

/**
 * Is a window big enough to commit now, before the next event? The store bounds one transaction
 * (ReadStore.maxBatch: MongoDB aborts long ones) and a window's pieces end at event boundaries, so
 * a piece is cut once it holds half the bound: the event that crossed the half still fits, unless
 * that one event alone writes more than half of it.
 */
export const windowFull = (pendingOps: number, pendingBytes: number, limit: BatchLimit): boolean =>
  pendingOps >= limit.ops / 2 || pendingBytes >= limit.bytes / 2;

/**
 * How soon a checkpoint advanced by events that changed no document is stored anyway. Other
 * processes (api nodes waiting for read-your-writes, standbys) only see stored checkpoints.
 */
export const NOOP_FLUSH_MS = 25;
