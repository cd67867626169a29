/** The event log: `/admin/events?stream=<name>` for one stream, else the whole log with filters. */
import type Router from '@koa/router';
import type { EventStore } from '../../../events/event-store.ts';
import { logEvents, streamEvents } from '../../../queries/admin-events.ts';
import type { AppState } from '../../state.ts';
import type { PageGuard } from '../guard.ts';
import { logPage, streamPage } from '../pages/events.ts';
import { PAGE_SIZE, searchText, single, wholeNumber } from '../paging.ts';
import { render } from '../respond.ts';

const MAX = Number.MAX_SAFE_INTEGER;

export const eventPages = (router: Router<AppState>, page: PageGuard, events: EventStore) => {
  router.get(
    '/events',
    page(async (ctx, s) => {
      const size = wholeNumber(ctx, 'size', 1, 200, PAGE_SIZE);
      const sizeParam = single(ctx, 'size') ? String(size) : undefined;
      const stream = searchText(ctx, 'stream');
      if (stream) {
        const from = wholeNumber(ctx, 'from', 0, MAX, 0);
        const list = await streamEvents(events, stream, from, size);
        return render(ctx, s, 200, `Events of ${stream}`, 'events', streamPage({ stream, page: list, size, ...(sizeParam ? { sizeParam } : {}) }));
      }
      const q = searchText(ctx);
      const type = searchText(ctx, 'type');
      const after = wholeNumber(ctx, 'after', 0, MAX, 0);
      const list = await logEvents(events, { after, size, streamPrefix: q, type });
      render(ctx, s, 200, 'Events', 'events', logPage({ page: list, q, type, after, ...(sizeParam ? { sizeParam } : {}) }));
    }),
  );
};
