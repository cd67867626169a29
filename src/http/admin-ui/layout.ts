/** The page frame and the small components every page is made of (fields, buttons, messages). */
import { html, join, type Fragment, type Html } from './html.ts';
import type { Flash } from './sessions.ts';

export type Section = 'rest-apis' | 'generate' | 'models' | 'users' | 'groups' | 'api-keys' | 'objects' | 'files' | 'events' | 'projections' | 'none';

export interface PageOptions {
  readonly title: string;
  readonly section?: Section;
  /** The session's CSRF token; absent on pages shown without a session (sign-in, errors before it). */
  readonly csrf?: string;
  readonly flash?: Flash;
  readonly body: Fragment;
  /** Extra markup for <head> (e.g. a refresh fallback). */
  readonly head?: Fragment;
}

const NAV: readonly (readonly [Section, string, string])[] = [
  ['rest-apis', '/admin/rest-apis', 'REST APIs'],
  ['generate', '/admin/control-files/generate', 'Generate control file'],
  ['models', '/admin/models', 'Models'],
  ['users', '/admin/users', 'Users'],
  ['groups', '/admin/groups', 'Groups'],
  ['api-keys', '/admin/api-keys', 'API keys'],
  ['objects', '/admin/objects', 'Objects'],
  ['files', '/admin/files', 'Files'],
  ['events', '/admin/events', 'Events'],
  ['projections', '/admin/projections', 'Projections'],
];

export const csrfField = (csrf: string): Html => html`<input type="hidden" name="csrf" value="${csrf}">`;

export const flashMessage = (flash: Flash | undefined): Html =>
  flash
    ? html`<div class="notice notice-${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.text}</div>`
    : html``;

export const layout = (o: PageOptions): string => {
  const nav = o.csrf
    ? html`<nav aria-label="Administration">
        <ul>${NAV.map(([key, href, label]) => html`<li><a href="${href}"${key === o.section ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul>
      </nav>
      <form method="post" action="/admin/sign-out" class="sign-out">${csrfField(o.csrf)}<button type="submit" class="button-quiet">Sign out</button></form>`
    : '';
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${o.csrf ? html`<meta name="csrf-token" content="${o.csrf}">` : ''}
<title>${o.title} · svc admin</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/assets/admin.css">
<script src="/admin/assets/admin.js" defer></script>
${o.head}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <a class="brand" href="/admin">svc admin</a>
  ${nav}
</header>
<main id="main" tabindex="-1">
${flashMessage(o.flash)}
${o.body}
</main>
</body>
</html>`.value}\n`;
};

// ------------------------------------------------------------------------------------------
// Messages

/** What went wrong, in words: a message, its kind, and every detail the API gives. */
export interface Problem {
  readonly status: number;
  readonly kind: string;
  readonly message: string;
  readonly errors: readonly string[];
}

export const problemBox = (problem: Problem | undefined, heading = 'That did not work'): Html =>
  problem
    ? html`<div class="notice notice-error" role="alert" id="problem">
        <h2 class="notice-title">${heading}</h2>
        <p>${problem.message}</p>
        ${problem.errors.length > 1 || (problem.errors.length === 1 && problem.errors[0] !== problem.message)
          ? html`<ul>${problem.errors.map((e) => html`<li>${e}</li>`)}</ul>`
          : ''}
        <p class="kind">Error code: <code>${problem.kind}</code> (HTTP ${problem.status})</p>
      </div>`
    : html``;

// ------------------------------------------------------------------------------------------
// Form fields. Every control has a label; errors sit beside the control and are tied to it.

export type FieldErrors = Readonly<Record<string, readonly string[]>>;

const describedBy = (id: string, hint: Fragment, errors: readonly string[] | undefined): Html => {
  const ids = [hint ? `${id}-hint` : '', errors?.length ? `${id}-errors` : ''].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"` : html``;
};

const fieldErrors = (id: string, errors: readonly string[] | undefined): Html =>
  errors?.length ? html`<ul class="field-errors" id="${id}-errors">${errors.map((e) => html`<li>${e}</li>`)}</ul>` : html``;

const hintOf = (id: string, hint: Fragment): Html => (hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : html``);

export interface FieldOptions {
  readonly name: string;
  readonly label: string;
  readonly value?: string;
  readonly errors?: FieldErrors;
  readonly hint?: Fragment;
  readonly required?: boolean;
  readonly id?: string;
  /** Extra attributes, already safe markup. */
  readonly attrs?: Html;
  /** Markup shown before the input (e.g. a fixed URL prefix). */
  readonly prefix?: string;
}

const invalid = (errors: readonly string[] | undefined) => (errors?.length ? html` aria-invalid="true"` : html``);

export const textField = (o: FieldOptions & { type?: string }): Html => {
  const id = o.id ?? `f-${o.name}`;
  const errors = o.errors?.[o.name];
  const input = html`<input type="${o.type ?? 'text'}" id="${id}" name="${o.name}" value="${o.value ?? ''}"${o.required ? html` required` : ''}${describedBy(id, o.hint, errors)}${invalid(errors)}${o.attrs}>`;
  return html`<div class="field${errors?.length ? ' has-errors' : ''}">
    <label for="${id}">${o.label}${o.required ? html` <span class="required">(required)</span>` : ''}</label>
    ${hintOf(id, o.hint)}
    ${o.prefix ? html`<div class="with-prefix"><span class="prefix" aria-hidden="true">${o.prefix}</span>${input}</div>` : input}
    ${fieldErrors(id, errors)}
  </div>`;
};

export const textArea = (o: FieldOptions & { rows?: number; readonly?: boolean; className?: string }): Html => {
  const id = o.id ?? `f-${o.name}`;
  const errors = o.errors?.[o.name];
  return html`<div class="field${errors?.length ? ' has-errors' : ''}">
    <label for="${id}">${o.label}${o.required ? html` <span class="required">(required)</span>` : ''}</label>
    ${hintOf(id, o.hint)}
    <div class="field-body">
      <textarea id="${id}" name="${o.name}" rows="${o.rows ?? 8}" spellcheck="false" class="${o.className ?? ''}"${o.required ? html` required` : ''}${o.readonly ? html` readonly` : ''}${describedBy(id, o.hint, errors)}${invalid(errors)}${o.attrs}>${o.value ?? ''}</textarea>
      ${fieldErrors(id, errors)}
    </div>
  </div>`;
};

export const checkbox = (o: { name: string; label: Fragment; checked: boolean; value?: string; id?: string; hint?: Fragment }): Html => {
  const id = o.id ?? `f-${o.name}`;
  return html`<div class="check">
    <input type="checkbox" id="${id}" name="${o.name}" value="${o.value ?? 'yes'}"${o.checked ? html` checked` : ''}${describedBy(id, o.hint, undefined)}>
    <label for="${id}">${o.label}</label>
    ${hintOf(id, o.hint)}
  </div>`;
};

export const radios = (o: { name: string; legend: string; options: readonly (readonly [string, string])[]; value: string; errors?: FieldErrors }): Html => {
  const errors = o.errors?.[o.name];
  return html`<fieldset class="field radios${errors?.length ? ' has-errors' : ''}"${errors?.length ? html` aria-describedby="f-${o.name}-errors"` : ''}>
    <legend>${o.legend}</legend>
    ${o.options.map(
      ([value, label]) => html`<span class="radio"><input type="radio" id="f-${o.name}-${value}" name="${o.name}" value="${value}"${value === o.value ? html` checked` : ''}>
        <label for="f-${o.name}-${value}">${label}</label></span>`,
    )}
    ${fieldErrors(`f-${o.name}`, errors)}
  </fieldset>`;
};

/** A one-button form that POSTs (with the CSRF token) to `action`. */
export const postButton = (o: {
  action: string;
  label: Fragment;
  csrf: string;
  fields?: Readonly<Record<string, string>>;
  className?: string;
  confirm?: string;
  ariaLabel?: string;
}): Html =>
  html`<form method="post" action="${o.action}" class="inline"${o.confirm ? html` data-confirm="${o.confirm}"` : ''}>${csrfField(o.csrf)}${Object.entries(
    o.fields ?? {},
  ).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}<button type="submit" class="${o.className ?? ''}"${o.ariaLabel ? html` aria-label="${o.ariaLabel}"` : ''}>${o.label}</button></form>`;

/** A secret shown once, selectable, with a copy button that scripts reveal. */
export const secretBox = (o: { id: string; label: string; value: string; note: Fragment }): Html =>
  html`<div class="secret">
    <label id="${o.id}-label" for="${o.id}">${o.label}</label>
    <div class="copy-row">
      <input type="text" id="${o.id}" value="${o.value}" readonly class="mono" autocomplete="off" spellcheck="false">
      <button type="button" class="copy" data-copy="${o.id}" hidden>Copy</button>
    </div>
    <p class="hint">${o.note}</p>
    <p class="copy-status" role="status" aria-live="polite"></p>
  </div>`;

export const badge = (text: string, variant = ''): Html => html`<span class="badge${variant ? ` badge-${variant}` : ''}">${text}</span>`;

export const yesNo = (b: boolean): string => (b ? 'Yes' : 'No');

export const when = (iso: string | undefined): Html =>
  iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC')}</time>` : html``;

export const pageHeading = (title: Fragment, actions?: Fragment): Html =>
  html`<div class="page-heading"><h1>${title}</h1>${actions ? html`<div class="actions">${actions}</div>` : ''}</div>`;

export const breadcrumbs = (items: readonly (readonly [string, string] | string)[]): Html =>
  html`<nav aria-label="Breadcrumb" class="breadcrumbs"><ol>${items.map((i) =>
    typeof i === 'string' ? html`<li aria-current="page">${i}</li>` : html`<li><a href="${i[1]}">${i[0]}</a></li>`,
  )}</ol></nav>`;

export { join };
