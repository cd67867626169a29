import type { IncomingMessage } from 'node:http';

/**
 * What reading a request or writing an answer fails with when the other end has closed the connection
 * (HPE_INVALID_EOF_STATE: the client ended the connection in the middle of a request).
 */
const DISCONNECT_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'HPE_INVALID_EOF_STATE']);

/**
 * Whether `error` is the client going away rather than a fault of the service: an error of the kind a
 * closed connection causes, while the request's connection is indeed closed. (The same codes from a
 * store or a file while the client is still there are real errors.)
 */
export const isClientDisconnect = (error: unknown, req: IncomingMessage): boolean => {
  const e = error as { code?: unknown; type?: unknown; message?: unknown } | undefined;
  const disconnectLike =
    (typeof e?.code === 'string' && DISCONNECT_CODES.has(e.code)) || e?.type === 'request.aborted' || e?.message === 'aborted';
  return disconnectLike && (req.destroyed || req.socket?.destroyed === true);
};

/** The fields of a disconnect's log line: what failed, never the error itself (its stack says nothing useful). */
export const disconnectFields = (error: unknown, during: 'request' | 'response') => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return { during, ...(typeof code === 'string' ? { code } : {}) };
};
