import type { Logger } from 'pino';

/** What middleware puts on `ctx.state` for the handlers after it. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** Who is making the request, once authenticated: `admin`, `apikey:<id>`, ... */
  actor?: string;
}
