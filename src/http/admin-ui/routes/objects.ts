/** One store object, now or as at a past time (`?at=`), with its history. */
import type Router from '@koa/router';
import { isRef } from '../../../domain/objects/ref.ts';
import { pageObjects } from '../../../queries/admin-lists.ts';
import { getObject, ObjectQueryError } from '../../../queries/object-api.ts';
import { getObjectAt, getObjectHistory, type ObjectHistoryDeps } from '../../../queries/object-history.ts';
import { parseAt } from '../../../queries/parse-at.ts';
import { HttpError } from '../../errors.ts';
import type { AppState } from '../../state.ts';
import type { PageGuard } from '../guard.ts';
import { notFoundPage } from '../pages/general.ts';
import { notThenPage, objectList, objectPage, type ShownObject, type ShownVersion } from '../pages/objects.ts';
import { pageRequest, searchText } from '../paging.ts';
import { render } from '../respond.ts';

// The admin sees every object, whatever its labels.
const ALL_ACCESS = { all: true, labels: new Set<string>() };

const isNoSuchObject = (e: unknown) => e instanceof ObjectQueryError && e.kind === 'svc:api-v0:object:no-such-object';

export const objectPages = (router: Router<AppState>, page: PageGuard, deps: ObjectHistoryDeps) => {
  const names = new Map([...deps.schema.attributes.values()].map((a) => [a.code, a.name]));

  const types = [...deps.schema.types.values()].map((t) => [t.code, t.name] as const).sort((a, b) => a[1].localeCompare(b[1]));
  const known = new Set(types.map(([code]) => code));

  router.get(
    '/objects',
    page(async (ctx, s) => {
      const q = searchText(ctx);
      const type = searchText(ctx, 'type');
      if (type && !known.has(type)) throw new HttpError(400, 'svc:admin:bad-query', `There is no object type ${type}`);
      const list = await pageObjects(deps.reads, { q, type }, pageRequest(ctx));
      render(ctx, s, 200, 'Objects', 'objects', objectList({ page: list, q, type, types }));
    }),
  );

  router.get(
    '/objects/:ref',
    page(async (ctx, s) => {
      const ref = ctx.params.ref;
      const missing = () => render(ctx, s, 404, 'Not found', 'none', notFoundPage(`There is no object ${ref}.`));
      if (!isRef(ref)) return missing();
      // A bad `at` is refused before anything is read (the guard shows its 400 page).
      const atText = typeof ctx.query.at === 'string' ? ctx.query.at : Array.isArray(ctx.query.at) ? (ctx.query.at[0] ?? '') : '';
      const at = parseAt(ctx.query.at);
      let history;
      try {
        history = await getObjectHistory(deps, ref, ALL_ACCESS);
      } catch (e) {
        if (isNoSuchObject(e)) return missing();
        throw e;
      }
      let object;
      try {
        object = at ? await getObjectAt(deps, ref, 'NONE', at, ALL_ACCESS) : await getObject(deps, ref, 'NONE', ALL_ACCESS);
      } catch (e) {
        // It exists now (its history was read), so only the past can lack it.
        if (at && isNoSuchObject(e)) return render(ctx, s, 404, 'Not found', 'none', notThenPage(ref, at));
        throw e;
      }
      const shown = object as unknown as ShownObject;
      const title = `${at ? 'As at' : 'Object'} ${ref}`;
      render(ctx, s, 200, title, 'objects', objectPage({ object: shown, names, history: history.versions as ShownVersion[], atText, ...(at ? { at } : {}) }));
    }),
  );
};
