/** Every API key on one page, and revoking one (from here, a user's page or a REST API's page). */
import type Router from '@koa/router';
import type { CommandDeps } from '../../../commands/context.ts';
import { revokeApiKey } from '../../../commands/users.ts';
import { pageApiKeys } from '../../../queries/admin-lists.ts';
import { findApiKey } from '../../../queries/users.ts';
import type { AppState } from '../../state.ts';
import { metadataOf } from '../../validate.ts';
import { field } from '../forms.ts';
import type { PageGuard } from '../guard.ts';
import { pageRequest, searchText } from '../paging.ts';
import { apiKeysPage } from '../pages/api-keys.ts';
import { redirect, refusal, render, safeNext } from '../respond.ts';

export const apiKeyPages = (router: Router<AppState>, page: PageGuard, commands: CommandDeps) => {
  router.get(
    '/api-keys',
    page(async (ctx, s) => {
      const q = searchText(ctx).toLowerCase();
      const list = await pageApiKeys(commands.reads, q, pageRequest(ctx));
      render(ctx, s, 200, 'API keys', 'api-keys', apiKeysPage({ page: list, q, csrf: s.csrf }));
    }),
  );

  router.post(
    '/api-keys/:id/revoke',
    page(async (ctx, s) => {
      const id = ctx.params.id!;
      const back = safeNext(field(s.form, 'back'), '/admin/api-keys');
      const key = await findApiKey(commands.reads, id);
      try {
        await revokeApiKey(commands, metadataOf(ctx), id);
      } catch (e) {
        const problem = refusal(e);
        return redirect(ctx, back, s.session, { kind: 'error', text: `The key was not revoked: ${problem.message}` });
      }
      redirect(ctx, back, s.session, { kind: 'success', text: `API key "${key?.name ?? id}" revoked. Requests with it are now refused.` });
    }),
  );
};
