/** The model explorer and the control-file generator. */
import type Router from '@koa/router';
import { describeModel, generateControlFile, type GeneratorSelection } from '../../../commands/push-data/generate-control.ts';
import type { Models } from '../../../domain/model.ts';
import { HttpError } from '../../errors.ts';
import type { AppState } from '../../state.ts';
import { field, ticked } from '../forms.ts';
import type { PageGuard } from '../guard.ts';
import { PAGE_SIZE, searchText, wholeNumber } from '../paging.ts';
import type { Problem } from '../layout.ts';
import { generatorPage, modelExplorer, modelList, selectionKey } from '../pages/models.ts';
import { prettyJson } from '../pages/rest-apis.ts';
import { render } from '../respond.ts';

const noSuchModel = (name: string): Problem => ({ status: 404, kind: 'svc:import:no-such-model', message: `Model ${name} does not exist`, errors: [`Model ${name} does not exist`] });

/** The generator's ticked boxes (`destination` or `destination^name`) as the generator's selection. */
const selectionOf = (include: ReadonlySet<string>, multivalue: ReadonlySet<string>): GeneratorSelection[] =>
  [...include].map((key) => {
    const at = key.indexOf('^');
    const destination = at < 0 ? key : key.slice(0, at);
    const nameOf = at < 0 ? '' : key.slice(at + 1);
    return { destination, name: nameOf, ...(multivalue.has(selectionKey(destination, nameOf)) ? { multivalue: true } : {}) };
  });

export const modelPages = (router: Router<AppState>, page: PageGuard, models: Models) => {
  const usableDestinations = (modelName: string) => new Set(models.get(modelName)?.destinations.filter((d) => !d.excludeFromGenerator).map((d) => d.name));

  router.get(
    '/control-files/generate',
    page((ctx, s) => {
      const name = typeof ctx.query.model === 'string' ? ctx.query.model : '';
      const model = name ? models.get(name) : undefined;
      const problem: Problem | undefined = name && !model ? noSuchModel(name) : undefined;
      render(
        ctx,
        s,
        problem ? 404 : 200,
        'Generate control file',
        'generate',
        generatorPage({
          models: models.list(),
          ...(model ? { model: describeModel(model), usable: usableDestinations(model.name) } : {}),
          selection: { include: new Set(), multivalue: new Set() },
          csrf: s.csrf,
          ...(problem ? { problem } : {}),
        }),
      );
    }),
  );

  router.post(
    '/control-files/generate',
    page((ctx, s) => {
      const name = field(s.form, 'model');
      const model = models.get(name);
      const include = new Set(ticked(s.form, 'include'));
      const multivalue = new Set(ticked(s.form, 'multivalue'));
      const base = { models: models.list(), selection: { include, multivalue }, csrf: s.csrf };
      if (!model) return render(ctx, s, 404, 'Generate control file', 'generate', generatorPage({ ...base, problem: noSuchModel(name) }));
      const generated = generateControlFile(model, selectionOf(include, multivalue));
      const shown = { ...base, model: describeModel(model), usable: usableDestinations(model.name) };
      if ('errors' in generated) {
        const problem: Problem = { status: 400, kind: 'svc:import:bad-selection', message: generated.errors.join('; '), errors: generated.errors };
        return render(ctx, s, 400, 'Generate control file', 'generate', generatorPage({ ...shown, problem }));
      }
      render(ctx, s, 200, 'Generated control file', 'generate', generatorPage({ ...shown, generated: prettyJson(generated.control) }));
    }),
  );

  router.get(
    '/models',
    page((ctx, s) => {
      // Models come from configuration and are held in memory: searched and paged there.
      const q = searchText(ctx);
      const needle = q.toLowerCase();
      const found = models.list().filter((m) => !needle || m.name.toLowerCase().includes(needle) || m.title.toLowerCase().includes(needle));
      const number = wholeNumber(ctx, 'page', 1, Math.max(1, Math.ceil(found.length / PAGE_SIZE)), 1);
      const shown = found.slice((number - 1) * PAGE_SIZE, number * PAGE_SIZE);
      render(ctx, s, 200, 'Models', 'models', modelList({ models: shown, total: found.length, q, page: number, size: PAGE_SIZE }));
    }),
  );

  router.get(
    '/models/:model',
    page((ctx, s) => {
      const model = models.get(ctx.params.model!);
      if (!model) throw new HttpError(404, 'svc:import:no-such-model', `Model ${ctx.params.model} does not exist`);
      render(ctx, s, 200, `Model ${model.title}`, 'models', modelExplorer(describeModel(model)));
    }),
  );
};
