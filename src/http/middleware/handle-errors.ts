import type { Middleware } from 'koa';
import { HttpError, toHttpError } from '../errors.ts';
import { disconnectFields, isClientDisconnect } from '../client-disconnect.ts';
import type { AppState } from '../state.ts';

/** Status set by koa/co-body style errors that are safe to show (client errors only). */
const clientErrorStatus = (e: unknown): number | undefined => {
  const status = (e as { status?: unknown; expose?: unknown })?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && (e as { expose?: unknown }).expose === true ? status : undefined;
};

/** Status of a request whose client closed the connection before it was answered (nginx's convention). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * Every error becomes `{success: false, kind, error: {message}}`. Unexpected errors are logged
 * with their stack and answered with a 500 that names only the request id. A client that went away
 * is no error of the service: one info line, and no answer (there is nobody to read it).
 */
export const handleErrors = (): Middleware<AppState> => async (ctx, next) => {
  try {
    await next();
  } catch (e) {
    if (isClientDisconnect(e, ctx.req)) {
      ctx.state.log.info(disconnectFields(e, 'request'), 'client disconnected');
      ctx.status = CLIENT_CLOSED_REQUEST;
      return;
    }
    let error: HttpError;
    const mapped = toHttpError(e);
    if (mapped) error = mapped;
    else if (clientErrorStatus(e) !== undefined) error = new HttpError(clientErrorStatus(e)!, 'svc:api:bad-request', (e as Error).message);
    else {
      ctx.state.log.error({ err: e }, 'unhandled error');
      error = new HttpError(500, 'svc:api:internal-error', `Internal error; quote request id ${ctx.state.requestId} when reporting it`);
    }
    ctx.status = error.status;
    ctx.set(error.headers);
    ctx.body = { success: false, kind: error.kind, error: { message: error.message }, ...error.details };
  }
};
