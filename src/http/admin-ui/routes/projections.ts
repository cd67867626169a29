/** The projections' status, and starting a rebuild. */
import type Router from '@koa/router';
import { RebuildInProgressError, type ProjectionRunner } from '../../../projections/runner.ts';
import { HttpError } from '../../errors.ts';
import type { AppState } from '../../state.ts';
import type { PageGuard } from '../guard.ts';
import { raw, type Fragment } from '../html.ts';
import { projectionsPage, rebuildRunning } from '../pages/projections.ts';
import { redirect, render } from '../respond.ts';

/** Without scripts, a page with a rebuild running reloads itself every few seconds. */
const layoutRefresh = raw('<noscript><meta http-equiv="refresh" content="3"></noscript>');

export const projectionPages = (router: Router<AppState>, page: PageGuard, runner: ProjectionRunner) => {
  router.get(
    '/projections',
    page(async (ctx, s) => {
      const projections = await runner.status();
      const refresh: Fragment = projections.some(rebuildRunning) ? layoutRefresh : undefined;
      render(ctx, s, 200, 'Projections', 'projections', projectionsPage({ projections, csrf: s.csrf }), { head: refresh });
    }),
  );

  router.post(
    '/projections/:name/rebuild',
    page(async (ctx, s) => {
      const name = ctx.params.name!;
      if (!runner.projectors.some((p) => p.name === name)) throw new HttpError(404, 'svc:projection:no-such-projection', `Unknown projection: ${name}`);
      try {
        await runner.rebuild(name);
      } catch (e) {
        if (!(e instanceof RebuildInProgressError)) throw e;
        return redirect(ctx, '/admin/projections', s.session, { kind: 'error', text: e.message });
      }
      redirect(ctx, '/admin/projections', s.session, { kind: 'success', text: `Rebuild of ${name} started.` });
    }),
  );
};
