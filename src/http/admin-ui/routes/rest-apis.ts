/** The REST API (push-data endpoint) pages: list, details, the create and edit forms, and issuing a key. */
import type Router from '@koa/router';
import type { CommandDeps } from '../../../commands/context.ts';
import { changeRestApi, defineRestApi, issuePushDataKey, parseControlFile, PUSH_DATA_USER, type ControlValidator } from '../../../commands/rest-apis.ts';
import type { ControlFile } from '../../../domain/control-file.ts';
import { REST_API_URL, type ResponseFormat } from '../../../domain/rest-apis.ts';
import type { RestApiDoc } from '../../../projections/read-models.ts';
import type { ReadStore } from '../../../projections/read-store.ts';
import { pageRestApis } from '../../../queries/admin-lists.ts';
import { findRestApi } from '../../../queries/rest-apis.ts';
import { apiKeysOf } from '../../../queries/users.ts';
import { HttpError } from '../../errors.ts';
import type { AppState } from '../../state.ts';
import { metadataOf } from '../../validate.ts';
import { field, rawField } from '../forms.ts';
import type { PageGuard } from '../guard.ts';
import { pageRequest, searchText } from '../paging.ts';
import type { FieldErrors, Problem } from '../layout.ts';
import { endpointOf, keyCreatedForApi, prettyJson, pushPath, restApiDetails, restApiForm, restApiList, type RestApiFormValues } from '../pages/rest-apis.ts';
import { fieldErrorsOf } from '../problems.ts';
import { redirect, refusal, render, type Ctx, type SignedIn } from '../respond.ts';

export interface RestApiPagesDeps {
  readonly commands: CommandDeps;
  readonly validate: ControlValidator;
  readonly baseUrl: string;
}

/** The keys of the push-data service user for one REST API. */
const pushDataKeys = (reads: ReadStore, url: string) => apiKeysOf(reads, PUSH_DATA_USER, `=${pushPath(url)}`);

const getApi = async (reads: ReadStore, url: string): Promise<RestApiDoc> => {
  const api = await findRestApi(reads, url);
  if (!api) throw new HttpError(404, 'svc:rest-api:no-such-api', `REST API ${url} does not exist`);
  return api;
};

const formValues = (form: URLSearchParams, url: string): RestApiFormValues => ({
  url,
  description: field(form, 'description'),
  enabled: form.has('enabled'),
  response: field(form, 'response') || 'JSON',
  controlFile: rawField(form, 'controlFile'),
});

const emptyForm = (controlFile = ''): RestApiFormValues => ({ url: '', description: '', enabled: true, response: 'JSON', controlFile });

const showForm = (ctx: Ctx, s: SignedIn, mode: 'create' | 'edit', values: RestApiFormValues, status = 200, problem?: Problem, given?: FieldErrors) => {
  const fields = given ?? fieldErrorsOf(problem, ['url', 'description', 'response', 'controlFile']).fields;
  render(ctx, s, status, mode === 'create' ? 'New REST API' : `Edit ${values.url}`, 'rest-apis', restApiForm({ mode, values, csrf: s.csrf, errors: fields, ...(problem ? { problem } : {}) }));
};

const responseOf = (value: string): ResponseFormat => {
  if (value === 'JSON' || value === 'XML') return value;
  throw new HttpError(400, 'svc:api:bad-request', 'response: expected JSON or XML');
};

/**
 * Everything wrong with a definition at once, each message by its field: the command would stop
 * at the first problem (the control file, then the URL, then the description).
 */
const checkDefinition = (
  values: RestApiFormValues,
  mode: 'create' | 'edit',
  validate: ControlValidator,
): { control: ControlFile } | { problem: Problem; fields: FieldErrors } => {
  const problems: Problem[] = [];
  const fields: Record<string, string[]> = {};
  const urlMessage = 'url: must match ^[a-z0-9-]+$ (lower-case letters, digits and hyphens)';
  if (mode === 'create' && !REST_API_URL.test(values.url)) {
    problems.push({ status: 400, kind: 'svc:rest-api:invalid-url', message: urlMessage, errors: [urlMessage] });
    fields.url = ['must match ^[a-z0-9-]+$ (lower-case letters, digits and hyphens)'];
  }
  if (!values.description) {
    problems.push({ status: 400, kind: 'svc:rest-api:invalid-description', message: 'description: is required', errors: ['description: is required'] });
    fields.description = ['is required'];
  }
  let control: ControlFile | undefined;
  try {
    control = parseControlFile(values.controlFile, validate);
  } catch (e) {
    const problem = refusal(e);
    problems.unshift(problem);
    fields.controlFile = [...problem.errors];
  }
  const [first] = problems;
  if (!first) return { control: control! };
  if (problems.length === 1) return { problem: first, fields };
  const errors = problems.flatMap((p) => (p.kind === 'svc:rest-api:invalid-control-file' ? p.errors.map((m) => `Control file: ${m}`) : p.errors));
  return { problem: { ...first, message: `The form has ${errors.length} problems; each is shown by its field.`, errors }, fields };
};

export const restApiPages = (router: Router<AppState>, page: PageGuard, { commands, validate, baseUrl }: RestApiPagesDeps) => {
  const reads = commands.reads;

  router.get(
    '/rest-apis',
    page(async (ctx, s) => {
      const q = searchText(ctx).toLowerCase();
      const list = await pageRestApis(reads, q, pageRequest(ctx));
      render(ctx, s, 200, 'REST APIs', 'rest-apis', restApiList({ page: list, q, serviceUser: PUSH_DATA_USER }));
    }),
  );

  router.get('/new-rest-api', page((ctx, s) => showForm(ctx, s, 'create', emptyForm())));

  // "Start a new REST API with this control file" from the generator: the form, prefilled.
  router.post(
    '/new-rest-api',
    page((ctx, s) => {
      let controlFile = rawField(s.form, 'controlFile');
      try {
        controlFile = prettyJson(JSON.parse(controlFile));
      } catch {
        // shown as it came; validation will say what is wrong
      }
      showForm(ctx, s, 'create', emptyForm(controlFile));
    }),
  );

  router.post(
    '/rest-apis',
    page(async (ctx, s) => {
      const values = formValues(s.form, field(s.form, 'url'));
      try {
        const response = responseOf(values.response);
        const checked = checkDefinition(values, 'create', validate);
        if ('problem' in checked) return showForm(ctx, s, 'create', values, checked.problem.status, checked.problem, checked.fields);
        await defineRestApi(commands, metadataOf(ctx), { url: values.url, description: values.description, enabled: values.enabled, response, control: checked.control });
      } catch (e) {
        const problem = refusal(e);
        return showForm(ctx, s, 'create', values, problem.status, problem);
      }
      redirect(ctx, `/admin/rest-apis/${encodeURIComponent(values.url)}`, s.session, { kind: 'success', text: `REST API ${values.url} created.` });
    }),
  );

  router.get(
    '/rest-apis/:url',
    page(async (ctx, s) => {
      const api = await getApi(reads, ctx.params.url!);
      const keys = await pushDataKeys(reads, api.url);
      render(ctx, s, 200, `REST API ${api.url}`, 'rest-apis', restApiDetails({ api, endpoint: endpointOf(baseUrl, api.url), keys, csrf: s.csrf, serviceUser: PUSH_DATA_USER }));
    }),
  );

  router.get(
    '/rest-apis/:url/edit',
    page(async (ctx, s) => {
      const api = await getApi(reads, ctx.params.url!);
      showForm(ctx, s, 'edit', { url: api.url, description: api.description, enabled: api.enabled, response: api.response, controlFile: prettyJson(api.control) });
    }),
  );

  router.post(
    '/rest-apis/:url',
    page(async (ctx, s) => {
      const api = await getApi(reads, ctx.params.url!);
      const values = formValues(s.form, api.url);
      try {
        const response = responseOf(values.response);
        const checked = checkDefinition(values, 'edit', validate);
        if ('problem' in checked) return showForm(ctx, s, 'edit', values, checked.problem.status, checked.problem, checked.fields);
        await changeRestApi(commands, metadataOf(ctx), api.url, { description: values.description, enabled: values.enabled, response, control: checked.control });
      } catch (e) {
        const problem = refusal(e);
        return showForm(ctx, s, 'edit', values, problem.status, problem);
      }
      redirect(ctx, `/admin/rest-apis/${encodeURIComponent(api.url)}`, s.session, { kind: 'success', text: `REST API ${api.url} saved.` });
    }),
  );

  router.post(
    '/rest-apis/:url/api-keys',
    page(async (ctx, s) => {
      const api = await getApi(reads, ctx.params.url!);
      const issued = await issuePushDataKey(commands, metadataOf(ctx), api.url);
      render(ctx, s, 201, 'API key created', 'rest-apis', keyCreatedForApi({ api, endpoint: endpointOf(baseUrl, api.url), key: issued.key, id: issued.id }));
    }),
  );
};
