/** Users (list, create, one user with its groups and API keys) and groups (list, create). */
import type Router from '@koa/router';
import type { CommandDeps } from '../../../commands/context.ts';
import { changeUser, createGroup, createUser, issueApiKey } from '../../../commands/users.ts';
import { pageGroups, pageUsers } from '../../../queries/admin-lists.ts';
import { apiKeysOf, findUser, listGroups } from '../../../queries/users.ts';
import { HttpError } from '../../errors.ts';
import type { AppState } from '../../state.ts';
import { metadataOf } from '../../validate.ts';
import { field, ticked } from '../forms.ts';
import type { PageGuard } from '../guard.ts';
import { pageRequest, searchText } from '../paging.ts';
import type { Problem } from '../layout.ts';
import { emptyGroup, emptyUser, groupsPage, keyCreatedForUser, userPage, usersPage, type NewGroupValues, type NewUserValues } from '../pages/users.ts';
import { fieldErrorsOf } from '../problems.ts';
import { redirect, refusal, render, type Ctx, type SignedIn } from '../respond.ts';

interface UserPageExtra {
  readonly status?: number;
  readonly keyProblem?: Problem;
  readonly keyValues?: { name: string; path: string };
  readonly changeProblem?: Problem;
}

const newUserValues = (f: URLSearchParams): NewUserValues => ({
  username: field(f, 'username'),
  title: field(f, 'title'),
  first: field(f, 'first'),
  last: field(f, 'last'),
  email: field(f, 'email'),
  groups: new Set(ticked(f, 'groups')),
});

export const userPages = (router: Router<AppState>, page: PageGuard, commands: CommandDeps) => {
  const reads = commands.reads;

  const showUsers = async (ctx: Ctx, s: SignedIn, values: NewUserValues = emptyUser, status = 200, problem?: Problem) => {
    const q = searchText(ctx).toLowerCase();
    const users = await pageUsers(reads, q, pageRequest(ctx));
    const { fields } = fieldErrorsOf(problem, ['username', 'title', 'first', 'last', 'email', 'groups']);
    render(ctx, s, status, 'Users', 'users', usersPage({ page: users, q, groups: await listGroups(reads), csrf: s.csrf, values, errors: fields, ...(problem ? { problem } : {}) }));
  };

  const showUser = async (ctx: Ctx, s: SignedIn, username: string, extra: UserPageExtra = {}) => {
    const user = await findUser(reads, username);
    if (!user) throw new HttpError(404, 'svc:user:no-such-user', `User ${username} does not exist`);
    const keys = await apiKeysOf(reads, username);
    const body = userPage({
      user,
      groups: await listGroups(reads),
      keys,
      csrf: s.csrf,
      keyErrors: fieldErrorsOf(extra.keyProblem, ['name', 'path']).fields,
      keyValues: extra.keyValues ?? { name: '', path: '/api/' },
      changeErrors: fieldErrorsOf(extra.changeProblem, ['groups']).fields,
      ...(extra.keyProblem ? { keyProblem: extra.keyProblem } : {}),
      ...(extra.changeProblem ? { changeProblem: extra.changeProblem } : {}),
    });
    render(ctx, s, extra.status ?? 200, `User ${username}`, 'users', body);
  };

  router.get('/users', page((ctx, s) => showUsers(ctx, s)));

  router.post(
    '/users',
    page(async (ctx, s) => {
      const values = newUserValues(s.form);
      const name = Object.fromEntries((['title', 'first', 'last'] as const).filter((k) => values[k]).map((k) => [k, values[k]]));
      try {
        await createUser(commands, metadataOf(ctx), {
          username: values.username,
          name: { ...name, culture: 'western' },
          ...(values.email ? { email: values.email } : {}),
          groups: [...values.groups],
        });
      } catch (e) {
        const problem = refusal(e);
        return showUsers(ctx, s, values, problem.status, problem);
      }
      redirect(ctx, `/admin/users/${encodeURIComponent(values.username)}`, s.session, { kind: 'success', text: `User ${values.username} created.` });
    }),
  );

  router.get('/users/:username', page((ctx, s) => showUser(ctx, s, ctx.params.username!)));

  router.post(
    '/users/:username',
    page(async (ctx, s) => {
      const username = ctx.params.username!;
      try {
        await changeUser(commands, metadataOf(ctx), username, { groups: ticked(s.form, 'groups'), active: s.form.has('active') });
      } catch (e) {
        const problem = refusal(e);
        return showUser(ctx, s, username, { status: problem.status, changeProblem: problem });
      }
      redirect(ctx, `/admin/users/${encodeURIComponent(username)}`, s.session, { kind: 'success', text: `User ${username} saved.` });
    }),
  );

  router.post(
    '/users/:username/api-keys',
    page(async (ctx, s) => {
      const username = ctx.params.username!;
      const keyValues = { name: field(s.form, 'name'), path: field(s.form, 'path') };
      let issued;
      try {
        issued = await issueApiKey(commands, metadataOf(ctx), username, { ...(keyValues.name ? { name: keyValues.name } : {}), ...(keyValues.path ? { path: keyValues.path } : {}) });
      } catch (e) {
        const problem = refusal(e);
        return showUser(ctx, s, username, { status: problem.status, keyProblem: problem, keyValues });
      }
      const user = (await findUser(reads, username))!;
      render(ctx, s, 201, 'API key issued', 'users', keyCreatedForUser({ user, key: issued.key, path: issued.path }));
    }),
  );
};

export const groupPages = (router: Router<AppState>, page: PageGuard, commands: CommandDeps) => {
  const showGroups = async (ctx: Ctx, s: SignedIn, values: NewGroupValues = emptyGroup, status = 200, problem?: Problem) => {
    const labels = [...commands.schema.labels.values()].map((l) => ({ code: l.code, name: l.name }));
    const { fields } = fieldErrorsOf(problem, ['code', 'title', 'readLabels']);
    const q = searchText(ctx);
    const groups = await pageGroups(commands.reads, q, pageRequest(ctx));
    render(ctx, s, status, 'Groups', 'groups', groupsPage({ page: groups, q, labels, csrf: s.csrf, values, errors: fields, ...(problem ? { problem } : {}) }));
  };

  router.get('/groups', page((ctx, s) => showGroups(ctx, s)));

  router.post(
    '/groups',
    page(async (ctx, s) => {
      const f = s.form;
      const values: NewGroupValues = { code: field(f, 'code'), title: field(f, 'title'), readAll: f.has('readAll'), readLabels: new Set(ticked(f, 'readLabels')) };
      try {
        await createGroup(commands, metadataOf(ctx), { code: values.code, title: values.title, readAll: values.readAll, readLabels: [...values.readLabels] });
      } catch (e) {
        const problem = refusal(e);
        return showGroups(ctx, s, values, problem.status, problem);
      }
      redirect(ctx, '/admin/groups', s.session, { kind: 'success', text: `Group ${values.code} created.` });
    }),
  );
};
