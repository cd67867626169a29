import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from '../state.ts';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * What middleware keeps on `ctx.state`. The request's logger (a child of the service's, carrying the
 * request id) is made the first time something logs through `log`: most requests only write their
 * request line, which `logRequest` writes with the same fields, in the same order, without a child.
 */
export class RequestState implements AppState {
  actor?: string;
  private child: Logger | undefined;

  constructor(
    private readonly logger: Logger,
    public requestId: string,
  ) {}

  get log(): Logger {
    return (this.child ??= this.logger.child({ requestId: this.requestId }));
  }

  set log(log: Logger) {
    this.child = log;
  }

  /** One info line with the request id first, as `log.info(fields, msg)` writes it. */
  logRequest(fields: { method: string; path: string; status: number; ms: number; actor: string | undefined }, msg: string): void {
    if (this.child) this.child.info(fields, msg);
    else this.logger.info({ requestId: this.requestId, method: fields.method, path: fields.path, status: fields.status, ms: fields.ms, actor: fields.actor }, msg);
  }
}

/** Gives every request an id (the caller's `X-Request-Id` when sane); it becomes the correlation id of its events. */
export const requestId = (logger: Logger): Middleware<AppState> => async (ctx, next) => {
  const given = ctx.get('X-Request-Id');
  const state = new RequestState(logger, ACCEPTABLE.test(given) ? given : randomUUID());
  ctx.state = Object.assign(state, ctx.state);
  ctx.set('X-Request-Id', state.requestId);
  await next();
};
