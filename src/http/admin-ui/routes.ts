/**
 * The admin interface at `/admin`: server-rendered pages over the same commands and queries as
 * the admin API, behind a session that signing in with the admin token starts.
 */
import Router, { type RouterContext } from '@koa/router';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandDeps } from '../../commands/context.ts';
import { changeRestApi, defineRestApi, issuePushDataKey, parseControlFile, PUSH_DATA_USER, type ControlValidator } from '../../commands/rest-apis.ts';
import { changeUser, createGroup, createUser, issueApiKey, revokeApiKey } from '../../commands/users.ts';
import type { Config } from '../../config/config.ts';
import type { ControlFile } from '../../domain/control-file.ts';
import { controlValidator } from '../../commands/push-data/control-validator.ts';
import { describeModel, generateControlFile, type GeneratorSelection } from '../../commands/push-data/generate-control.ts';
import type { Models } from '../../domain/model.ts';
import { projectRoot } from '../../config/paths.ts';
import { REST_APIS, type RestApiDoc, API_KEYS, GROUPS, USERS, type ApiKeyDoc, type GroupDoc, type UserDoc } from '../../projections/read-models.ts';
import { RebuildInProgressError, type ProjectionRunner } from '../../projections/runner.ts';
import { REST_API_URL, type ResponseFormat } from '../../domain/rest-apis.ts';
import { HttpError } from '../errors.ts';
import type { AppState } from '../state.ts';
import { FailureThrottle } from '../throttle.ts';
import { metadataOf } from '../validate.ts';
import { field, rawField, readForm, ticked } from './forms.ts';
import { raw, type Fragment } from './html.ts';
import { layout, type FieldErrors, type PageOptions, type Problem, type Section } from './layout.ts';
import { apiKeysPage } from './pages/api-keys.ts';
import { forbiddenPage, notFoundPage, problemPage, signInPage } from './pages/general.ts';
import { generatorPage, modelExplorer, modelList, selectionKey } from './pages/models.ts';
import { projectionsPage, rebuildRunning } from './pages/projections.ts';
import { endpointOf, keyCreatedForApi, prettyJson, pushPath, restApiDetails, restApiForm, restApiList, type RestApiFormValues } from './pages/rest-apis.ts';
import { emptyGroup, emptyUser, groupsPage, keyCreatedForUser, userPage, usersPage, type NewGroupValues, type NewUserValues } from './pages/users.ts';
import { fieldErrorsOf, problemOf } from './problems.ts';
import { adminSessions, cookieNames, newSecret, readCookie, sameSecret, serialiseCookie, type Flash, type Session, type SessionStore } from './sessions.ts';

export interface AdminUiDeps {
  readonly config: Pick<Config, 'baseUrl' | 'bodyLimitBytes'>;
  readonly adminToken: string;
  /** The same dependencies the admin API's routers get. */
  readonly commands: CommandDeps;
  readonly models: Models;
  readonly runner: ProjectionRunner;
  /** Default: the sessions of this admin token, which the admin API's authentication also accepts. */
  readonly sessions?: SessionStore;
  /** Failed sign-ins per client address; default 10 a minute. */
  readonly signInThrottle?: FailureThrottle;
}

type Ctx = RouterContext<AppState>;

interface SignedIn {
  readonly session: Session;
  readonly csrf: string;
  /** The posted form (empty for GET). */
  readonly form: URLSearchParams;
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const securityHeaders = (ctx: Ctx) => {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
};

/** Where to go after signing in: only a path of the admin interface (never another site). */
export const safeNext = (next: string | undefined, fallback = '/admin/rest-apis'): string =>
  next && /^\/admin(?:[/?#]|$)/.test(next) && !/[\\\s\x00-\x1f]/.test(next) && !next.startsWith('/admin/sign-') ? next : fallback;

const SIGN_IN_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The admin interface files: next to this module (tsx, or a build that copies them), else in the source tree. */
const loadAsset = (name: string): { body: Buffer; etag: string } => {
  const candidates = [fileURLToPath(new URL(`./assets/${name}`, import.meta.url)), resolve(projectRoot, 'src/http/admin-ui/assets', name)];
  for (const file of candidates) {
    try {
      const body = readFileSync(file);
      return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    } catch {
      // try the next place
    }
  }
  throw new Error(`admin interface asset ${name} not found (looked in ${candidates.join(', ')})`);
};

const ASSET_TYPES: Readonly<Record<string, string>> = { 'admin.css': 'text/css; charset=utf-8', 'admin.js': 'text/javascript; charset=utf-8' };

const byCreated = (a: ApiKeyDoc, b: ApiKeyDoc) => b.createdAt.localeCompare(a.createdAt);

export const adminUiRoutes = (deps: AdminUiDeps) => {
  const router = new Router<AppState>({ prefix: '/admin' });
  const sessions = deps.sessions ?? adminSessions(deps.adminToken);
  const cookies = cookieNames(deps.config.baseUrl);
  const throttle = deps.signInThrottle ?? new FailureThrottle(10, 60_000);
  const validate: ControlValidator = controlValidator(deps.models, deps.commands.schema);
  const { commands, models, runner } = deps;
  const reads = commands.reads;
  const limit = deps.config.bodyLimitBytes;
  const assets = new Map(Object.keys(ASSET_TYPES).map((name) => [name, loadAsset(name)]));

  // ----------------------------------------------------------------------------------------
  // Plumbing: rendering, redirects, sessions

  const send = (ctx: Ctx, status: number, options: PageOptions) => {
    securityHeaders(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = layout(options);
  };

  const takeFlash = (session: Session): Flash | undefined => {
    const flash = session.flash;
    delete session.flash;
    return flash;
  };

  const render = (ctx: Ctx, s: SignedIn, status: number, title: string, section: Section, body: Fragment, extra: Partial<PageOptions> = {}) => {
    const flash = takeFlash(s.session);
    send(ctx, status, { title, section, body, csrf: s.csrf, ...(flash ? { flash } : {}), ...extra });
  };

  const redirect = (ctx: Ctx, to: string, session?: Session, flash?: Flash) => {
    if (session && flash) session.flash = flash;
    securityHeaders(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(to);
  };

  const sessionCookie = (ctx: Ctx) => readCookie(ctx.get('Cookie'), cookies.session);

  const renderProblem = (ctx: Ctx, s: SignedIn | undefined, e: unknown, back?: { href: string; label: string }) => {
    let problem = problemOf(e);
    if (!problem) {
      ctx.state.log.error({ err: e }, 'admin interface: unexpected error');
      problem = {
        status: 500,
        kind: 'svc:api:internal-error',
        message: `Internal error; quote request id ${ctx.state.requestId} when reporting it`,
        errors: [],
      };
    }
    const body = problemPage(problem, back);
    if (s) render(ctx, s, problem.status, problem.status === 404 ? 'Not found' : 'Error', 'none', body);
    else send(ctx, problem.status, { title: 'Error', body });
  };

  /** A page behind the session: GETs without one go to sign-in; POSTs must carry the session's CSRF token. */
  const page =
    (handler: (ctx: Ctx, s: SignedIn) => Promise<void> | void) =>
    async (ctx: Ctx): Promise<void> => {
      const session = sessions.get(sessionCookie(ctx));
      if (!session) {
        const to = ctx.method === 'GET' || ctx.method === 'HEAD' ? `/admin/sign-in?next=${encodeURIComponent(ctx.originalUrl)}` : '/admin/sign-in?expired=1';
        return redirect(ctx, to);
      }
      ctx.state.actor = 'admin';
      const base: SignedIn = { session, csrf: session.csrf, form: new URLSearchParams() };
      let s = base;
      try {
        if (ctx.method === 'POST') {
          const form = await readForm(ctx, limit);
          if (!sameSecret(form.get('csrf') ?? '', session.csrf)) {
            return send(ctx, 403, {
              title: 'Forbidden',
              csrf: session.csrf,
              body: forbiddenPage('This form was refused: its security token is missing or wrong. It may come from an old page, or from another site.'),
            });
          }
          s = { ...base, form };
        }
        await handler(ctx, s);
      } catch (e) {
        renderProblem(ctx, s, e);
      }
    };

  /** A command's refusal as a Problem to show with the form (unexpected errors go on up). */
  const refusal = (e: unknown): Problem => {
    const problem = problemOf(e);
    if (!problem) throw e;
    return problem;
  };

  // ----------------------------------------------------------------------------------------
  // Assets, home, sign-in, sign-out

  router.get('/assets/:file', (ctx) => {
    const asset = assets.get(ctx.params.file!);
    securityHeaders(ctx);
    if (!asset) {
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'Not found';
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('ETag', asset.etag);
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = ASSET_TYPES[ctx.params.file!]!;
    ctx.body = asset.body;
  });

  router.get('/', page((ctx) => redirect(ctx, '/admin/rest-apis')));

  router.get('/sign-in', (ctx) => {
    const next = safeNext(typeof ctx.query.next === 'string' ? ctx.query.next : undefined);
    if (sessions.get(sessionCookie(ctx))) return redirect(ctx, next);
    const existing = readCookie(ctx.get('Cookie'), cookies.signIn);
    const token = existing && SIGN_IN_TOKEN.test(existing) ? existing : newSecret();
    ctx.append('Set-Cookie', serialiseCookie(cookies.signIn, token, { maxAge: 3600, secure: cookies.secure }));
    const notice = ctx.query['signed-out'] !== undefined ? 'You have signed out.' : ctx.query.expired !== undefined ? 'Your session has ended. Sign in again.' : undefined;
    send(ctx, 200, { title: 'Sign in', body: signInPage({ csrf: token, next, ...(notice ? { notice } : {}) }) });
  });

  router.post('/sign-in', async (ctx) => {
    let form: URLSearchParams;
    try {
      form = await readForm(ctx, limit);
    } catch (e) {
      return renderProblem(ctx, undefined, e);
    }
    const expected = readCookie(ctx.get('Cookie'), cookies.signIn);
    const next = safeNext(form.get('next') ?? undefined);
    if (!expected || !sameSecret(form.get('csrf') ?? '', expected)) {
      return send(ctx, 403, {
        title: 'Forbidden',
        body: forbiddenPage('The sign-in form was refused: its security token is missing or wrong (or cookies are switched off). Reload the sign-in page and try again.'),
      });
    }
    const again = (status: number, error: string) => send(ctx, status, { title: 'Sign in', body: signInPage({ csrf: expected, next, error }) });
    if (throttle.blocked(ctx.ip)) return again(429, 'Too many failed sign-in attempts from your address. Wait a minute, then try again.');
    if (!sameSecret(rawField(form, 'token').trim(), deps.adminToken)) {
      throttle.fail(ctx.ip);
      return again(401, 'That is not the admin token.');
    }
    sessions.destroy(sessionCookie(ctx));
    const { id, session } = sessions.create();
    ctx.append('Set-Cookie', serialiseCookie(cookies.session, id, { maxAge: sessions.cookieMaxAge(session), secure: cookies.secure }));
    ctx.append('Set-Cookie', serialiseCookie(cookies.signIn, '', { maxAge: 0, secure: cookies.secure }));
    redirect(ctx, next);
  });

  router.post(
    '/sign-out',
    page((ctx) => {
      sessions.destroy(sessionCookie(ctx));
      ctx.append('Set-Cookie', serialiseCookie(cookies.session, '', { maxAge: 0, secure: cookies.secure }));
      redirect(ctx, '/admin/sign-in?signed-out=1');
    }),
  );

  // ----------------------------------------------------------------------------------------
  // REST APIs

  const pushDataKeys = async (url?: string) => {
    const keys = await reads.find<ApiKeyDoc>(API_KEYS, { where: { username: PUSH_DATA_USER } });
    return keys.filter((k) => url === undefined || k.path === `=${pushPath(url)}`).sort(byCreated);
  };

  const getApi = async (url: string): Promise<RestApiDoc> => {
    const api = await reads.get<RestApiDoc>(REST_APIS, url);
    if (!api) throw new HttpError(404, 'svc:rest-api:no-such-api', `REST API ${url} does not exist`);
    return api;
  };

  router.get(
    '/rest-apis',
    page(async (ctx, s) => {
      const apis = await reads.find<RestApiDoc>(REST_APIS, { sort: [['id', 'asc']] });
      render(ctx, s, 200, 'REST APIs', 'rest-apis', restApiList({ apis, keys: await pushDataKeys(), csrf: s.csrf, serviceUser: PUSH_DATA_USER }));
    }),
  );

  const formValues = (form: URLSearchParams, url: string): RestApiFormValues => ({
    url,
    description: field(form, 'description'),
    enabled: form.has('enabled'),
    response: field(form, 'response') || 'JSON',
    controlFile: rawField(form, 'controlFile'),
  });

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
  const checkDefinition = (values: RestApiFormValues, mode: 'create' | 'edit'): { control: ControlFile } | { problem: Problem; fields: FieldErrors } => {
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

  router.get('/new-rest-api', page((ctx, s) => showForm(ctx, s, 'create', { url: '', description: '', enabled: true, response: 'JSON', controlFile: '' })));

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
      showForm(ctx, s, 'create', { url: '', description: '', enabled: true, response: 'JSON', controlFile });
    }),
  );

  router.post(
    '/rest-apis',
    page(async (ctx, s) => {
      const values = formValues(s.form, field(s.form, 'url'));
      try {
        const response = responseOf(values.response);
        const checked = checkDefinition(values, 'create');
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
      const api = await getApi(ctx.params.url!);
      render(
        ctx,
        s,
        200,
        `REST API ${api.url}`,
        'rest-apis',
        restApiDetails({ api, endpoint: endpointOf(deps.config.baseUrl, api.url), keys: await pushDataKeys(api.url), csrf: s.csrf, serviceUser: PUSH_DATA_USER }),
      );
    }),
  );

  router.get(
    '/rest-apis/:url/edit',
    page(async (ctx, s) => {
      const api = await getApi(ctx.params.url!);
      showForm(ctx, s, 'edit', { url: api.url, description: api.description, enabled: api.enabled, response: api.response, controlFile: prettyJson(api.control) });
    }),
  );

  router.post(
    '/rest-apis/:url',
    page(async (ctx, s) => {
      const api = await getApi(ctx.params.url!);
      const values = formValues(s.form, api.url);
      try {
        const response = responseOf(values.response);
        const checked = checkDefinition(values, 'edit');
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
      const api = await getApi(ctx.params.url!);
      const issued = await issuePushDataKey(commands, metadataOf(ctx), api.url);
      render(ctx, s, 201, 'API key created', 'rest-apis', keyCreatedForApi({ api, endpoint: endpointOf(deps.config.baseUrl, api.url), key: issued.key, id: issued.id }));
    }),
  );

  // ----------------------------------------------------------------------------------------
  // API keys

  router.get(
    '/api-keys',
    page(async (ctx, s) => {
      const keys = (await reads.find<ApiKeyDoc>(API_KEYS, { sort: [['username', 'asc']] })).sort((a, b) => a.username.localeCompare(b.username) || byCreated(a, b));
      render(ctx, s, 200, 'API keys', 'api-keys', apiKeysPage({ keys, csrf: s.csrf }));
    }),
  );

  router.post(
    '/api-keys/:id/revoke',
    page(async (ctx, s) => {
      const id = ctx.params.id!;
      const back = safeNext(field(s.form, 'back'), '/admin/api-keys');
      const key = await reads.get<ApiKeyDoc>(API_KEYS, id);
      try {
        await revokeApiKey(commands, metadataOf(ctx), id);
      } catch (e) {
        const problem = refusal(e);
        return redirect(ctx, back, s.session, { kind: 'error', text: `The key was not revoked: ${problem.message}` });
      }
      redirect(ctx, back, s.session, { kind: 'success', text: `API key "${key?.name ?? id}" revoked. Requests with it are now refused.` });
    }),
  );

  // ----------------------------------------------------------------------------------------
  // Generate control file, model explorer

  const usableDestinations = (modelName: string) => new Set(models.get(modelName)?.destinations.filter((d) => !d.excludeFromGenerator).map((d) => d.name));

  router.get(
    '/control-files/generate',
    page((ctx, s) => {
      const name = typeof ctx.query.model === 'string' ? ctx.query.model : '';
      const model = name ? models.get(name) : undefined;
      const problem: Problem | undefined =
        name && !model ? { status: 404, kind: 'svc:import:no-such-model', message: `Model ${name} does not exist`, errors: [`Model ${name} does not exist`] } : undefined;
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
      if (!model) {
        const problem: Problem = { status: 404, kind: 'svc:import:no-such-model', message: `Model ${name} does not exist`, errors: [`Model ${name} does not exist`] };
        return render(ctx, s, 404, 'Generate control file', 'generate', generatorPage({ ...base, problem }));
      }
      const selection: GeneratorSelection[] = [...include].map((key) => {
        const at = key.indexOf('^');
        const destination = at < 0 ? key : key.slice(0, at);
        const nameOf = at < 0 ? '' : key.slice(at + 1);
        return { destination, name: nameOf, ...(multivalue.has(selectionKey(destination, nameOf)) ? { multivalue: true } : {}) };
      });
      const generated = generateControlFile(model, selection);
      const page = { ...base, model: describeModel(model), usable: usableDestinations(model.name) };
      if ('errors' in generated) {
        const problem: Problem = { status: 400, kind: 'svc:import:bad-selection', message: generated.errors.join('; '), errors: generated.errors };
        return render(ctx, s, 400, 'Generate control file', 'generate', generatorPage({ ...page, problem }));
      }
      render(ctx, s, 200, 'Generated control file', 'generate', generatorPage({ ...page, generated: prettyJson(generated.control) }));
    }),
  );

  router.get(
    '/models',
    page((ctx, s) => render(ctx, s, 200, 'Models', 'models', modelList(models.list()))),
  );

  router.get(
    '/models/:model',
    page((ctx, s) => {
      const model = models.get(ctx.params.model!);
      if (!model) throw new HttpError(404, 'svc:import:no-such-model', `Model ${ctx.params.model} does not exist`);
      render(ctx, s, 200, `Model ${model.title}`, 'models', modelExplorer(describeModel(model)));
    }),
  );

  // ----------------------------------------------------------------------------------------
  // Users and groups

  const allGroups = () => reads.find<GroupDoc>(GROUPS, { sort: [['id', 'asc']] });

  const showUsers = async (ctx: Ctx, s: SignedIn, values: NewUserValues = emptyUser, status = 200, problem?: Problem) => {
    const users = await reads.find<UserDoc>(USERS, { sort: [['id', 'asc']] });
    const { fields } = fieldErrorsOf(problem, ['username', 'title', 'first', 'last', 'email', 'groups']);
    render(ctx, s, status, 'Users', 'users', usersPage({ users, groups: await allGroups(), csrf: s.csrf, values, errors: fields, ...(problem ? { problem } : {}) }));
  };

  router.get('/users', page((ctx, s) => showUsers(ctx, s)));

  router.post(
    '/users',
    page(async (ctx, s) => {
      const f = s.form;
      const values: NewUserValues = { username: field(f, 'username'), title: field(f, 'title'), first: field(f, 'first'), last: field(f, 'last'), email: field(f, 'email'), groups: new Set(ticked(f, 'groups')) };
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

  const showUser = async (
    ctx: Ctx,
    s: SignedIn,
    username: string,
    extra: { status?: number; keyProblem?: Problem; keyValues?: { name: string; path: string }; changeProblem?: Problem } = {},
  ) => {
    const user = await reads.get<UserDoc>(USERS, username);
    if (!user) throw new HttpError(404, 'svc:user:no-such-user', `User ${username} does not exist`);
    const keys = (await reads.find<ApiKeyDoc>(API_KEYS, { where: { username } })).sort(byCreated);
    render(
      ctx,
      s,
      extra.status ?? 200,
      `User ${username}`,
      'users',
      userPage({
        user,
        groups: await allGroups(),
        keys,
        csrf: s.csrf,
        keyErrors: fieldErrorsOf(extra.keyProblem, ['name', 'path']).fields,
        keyValues: extra.keyValues ?? { name: '', path: '/api/' },
        changeErrors: fieldErrorsOf(extra.changeProblem, ['groups']).fields,
        ...(extra.keyProblem ? { keyProblem: extra.keyProblem } : {}),
        ...(extra.changeProblem ? { changeProblem: extra.changeProblem } : {}),
      }),
    );
  };

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
      const user = (await reads.get<UserDoc>(USERS, username))!;
      render(ctx, s, 201, 'API key issued', 'users', keyCreatedForUser({ user, key: issued.key, path: issued.path }));
    }),
  );

  const showGroups = async (ctx: Ctx, s: SignedIn, values: NewGroupValues = emptyGroup, status = 200, problem?: Problem) => {
    const labels = [...commands.schema.labels.values()].map((l) => ({ code: l.code, name: l.name }));
    const { fields } = fieldErrorsOf(problem, ['code', 'title', 'readLabels']);
    render(ctx, s, status, 'Groups', 'groups', groupsPage({ groups: await allGroups(), labels, csrf: s.csrf, values, errors: fields, ...(problem ? { problem } : {}) }));
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

  // ----------------------------------------------------------------------------------------
  // Projections

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
      if (!(await runner.status()).some((p) => p.name === name)) throw new HttpError(404, 'svc:projection:no-such-projection', `Unknown projection: ${name}`);
      try {
        runner.rebuild(name);
      } catch (e) {
        if (!(e instanceof RebuildInProgressError)) throw e;
        return redirect(ctx, '/admin/projections', s.session, { kind: 'error', text: e.message });
      }
      redirect(ctx, '/admin/projections', s.session, { kind: 'success', text: `Rebuild of ${name} started.` });
    }),
  );

  // Anything else under /admin: behind the session like the rest, then a page that says so.
  router.all(
    '/{*rest}',
    page((ctx, s) => render(ctx, s, 404, 'Not found', 'none', notFoundPage(`There is no page at ${ctx.path}.`))),
  );

  return router;
};

/** Without scripts, a page with a rebuild running reloads itself every few seconds. */
const layoutRefresh = raw('<noscript><meta http-equiv="refresh" content="3"></noscript>');
