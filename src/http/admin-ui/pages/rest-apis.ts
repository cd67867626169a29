/** REST API pages: list, create/edit form, details with keys (haplo-behaviour.md §2.1). */
import type { ControlFile } from '../../../domain/control-file.ts';
import type { RestApiDoc, ApiKeyDoc } from '../../../projections/read-models.ts';
import type { ListPage } from '../../../queries/admin-lists.ts';
import { html, seg, type Html } from '../html.ts';
import {
  breadcrumbs,
  checkbox,
  csrfField,
  pageHeading,
  postButton,
  problemBox,
  radios,
  secretBox,
  textArea,
  textField,
  when,
  yesNo,
  type FieldErrors,
  type Problem,
} from '../layout.ts';
import { keysTable } from './api-keys.ts';
import { pushExample, pushFormatOf } from './using-it.ts';
import { emptyList, pager, scrollBox, searchForm } from './lists.ts';

export const pushPath = (url: string) => `/api/push-data/${url}`;
export const endpointOf = (baseUrl: string, url: string) => `${baseUrl.replace(/\/+$/, '')}${pushPath(url)}`;
export const prettyJson = (value: unknown) => JSON.stringify(value, null, 4);

const usingIt = (control: ControlFile, endpoint: string, key?: string): Html => {
  const { file } = pushFormatOf(control);
  return html`<h2 id="using-it">Using it</h2>
  <p>Send a file of records, <code>${file}</code>, in the format the control file reads${key === undefined ? html`, with an API key of this API in <code>$API_KEY</code>` : ''}:</p>
  <pre class="code" tabindex="0" aria-label="Example request" id="example">${pushExample({ control, endpoint, ...(key !== undefined ? { key } : {}) })}</pre>
  <p class="hint"><code>--data-binary</code> sends the file as it is; <code>--data</code> would strip its line breaks.</p>`;
};

export const restApiList = (o: { page: ListPage<RestApiDoc>; q: string; serviceUser: string }): Html => html`
  ${pageHeading('REST APIs', html`<a class="button" href="/admin/new-rest-api">New REST API</a> <a class="button button-quiet" href="/admin/control-files/generate">Generate control file</a>`)}
  <p class="lead">Push-data APIs: other systems POST records to <code>/api/push-data/&lt;URL&gt;</code>, which the API's control file turns into store objects.</p>
  ${searchForm({ action: '/admin/rest-apis', label: 'Search REST APIs', fields: [{ name: 'q', label: 'URL starts with', value: o.q }] })}
  ${pager({ path: '/admin/rest-apis', search: { q: o.q }, page: o.page, noun: 'REST APIs' })}
  ${o.page.items.length === 0
    ? emptyList(o.q !== '', html`No REST APIs yet. <a href="/admin/control-files/generate">Generate a control file</a>, then create a REST API with it.`)
    : scrollBox(
        html`<table class="data">
      <caption class="visually-hidden">REST APIs</caption>
      <thead><tr><th scope="col">URL</th><th scope="col">Description</th><th scope="col">Response</th><th scope="col">Changed</th></tr></thead>
      <tbody>${o.page.items.map(
        (api) => html`<tr>
          <th scope="row"><a href="/admin/rest-apis/${seg(api.url)}">${api.url}</a>${api.enabled ? '' : html` <span class="disabled">(disabled)</span>`}</th>
          <td>${api.description}</td>
          <td>${api.response}</td>
          <td>${when(api.updatedAt)}</td>
        </tr>`,
      )}</tbody>
    </table>`,
        'REST APIs',
      )}
  <h2 id="keys">API keys of the push-data service user</h2>
  <p>Keys made from a REST API's page belong to the service user <code>${o.serviceUser}</code>; each works for its one API only.
    They are listed on each REST API's page and under <a href="/admin/api-keys?q=${encodeURIComponent(o.serviceUser)}">API keys of ${o.serviceUser}</a>.</p>
`;

export interface RestApiFormValues {
  readonly url: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly response: string;
  readonly controlFile: string;
}

export const restApiForm = (o: {
  mode: 'create' | 'edit';
  values: RestApiFormValues;
  csrf: string;
  problem?: Problem;
  errors: FieldErrors;
  /** Show the problem box too (when some message fits no field, or as a summary). */
}): Html => {
  const title = o.mode === 'create' ? 'New REST API' : `Edit REST API ${o.values.url}`;
  const action = o.mode === 'create' ? '/admin/rest-apis' : `/admin/rest-apis/${seg(o.values.url)}`;
  return html`
  ${breadcrumbs([['REST APIs', '/admin/rest-apis'], ...(o.mode === 'edit' ? [[o.values.url, `/admin/rest-apis/${seg(o.values.url)}`] as const] : []), o.mode === 'create' ? 'New' : 'Edit'])}
  ${pageHeading(title)}
  ${problemBox(o.problem, o.mode === 'create' ? 'The REST API was not created' : 'The changes were not saved')}
  <form method="post" action="${action}" class="stacked" novalidate>
    ${csrfField(o.csrf)}
    ${o.mode === 'create'
      ? textField({
          name: 'url',
          label: 'URL',
          value: o.values.url,
          required: true,
          prefix: '/api/push-data/',
          hint: 'Lower-case letters, digits and hyphens. It cannot be changed after creation.',
          errors: o.errors,
          attrs: html` pattern="[a-z0-9-]+" autocomplete="off" spellcheck="false"`,
        })
      : html`<div class="field"><span class="label">URL</span><p class="fixed"><code>${pushPath(o.values.url)}</code> <span class="hint">(fixed after creation)</span></p></div>`}
    ${textField({ name: 'description', label: 'Description', value: o.values.description, required: true, errors: o.errors })}
    ${checkbox({ name: 'enabled', label: 'Enabled', checked: o.values.enabled, hint: 'A disabled API refuses every push.' })}
    ${radios({ name: 'response', legend: 'Response format', value: o.values.response, options: [['JSON', 'JSON'], ['XML', 'XML']], errors: o.errors })}
    ${textArea({
      name: 'controlFile',
      label: 'Control file',
      value: o.values.controlFile,
      rows: 22,
      required: true,
      className: 'mono',
      errors: o.errors,
      hint: html`JSON. <a href="/admin/control-files/generate">Generate a control file</a> to start from the model's names.`,
    })}
    <div class="form-actions">
      <button type="submit">${o.mode === 'create' ? 'Create REST API' : 'Save changes'}</button>
      <a href="${o.mode === 'create' ? '/admin/rest-apis' : `/admin/rest-apis/${seg(o.values.url)}`}">Cancel</a>
    </div>
  </form>`;
};

export const restApiDetails = (o: { api: RestApiDoc; endpoint: string; keys: readonly ApiKeyDoc[]; csrf: string; serviceUser: string }): Html => {
  const { api } = o;
  const base = `/admin/rest-apis/${seg(api.url)}`;
  return html`
  ${breadcrumbs([['REST APIs', '/admin/rest-apis'], api.url])}
  ${pageHeading(
    html`REST API <code>${api.url}</code>${api.enabled ? '' : html` <span class="disabled">(disabled)</span>`}`,
    html`<a class="button button-quiet" href="${base}/edit">Edit</a>
      ${postButton({ action: `${base}/api-keys`, label: 'Create API key', csrf: o.csrf })}`,
  )}
  <dl class="properties">
    <dt>Endpoint</dt><dd><code id="endpoint">${o.endpoint}</code> <button type="button" class="copy button-small" data-copy="endpoint" hidden>Copy</button><span class="copy-status" role="status" aria-live="polite"></span></dd>
    <dt>Description</dt><dd>${api.description}</dd>
    <dt>Enabled</dt><dd>${yesNo(api.enabled)}</dd>
    <dt>Response format</dt><dd>${api.response}</dd>
    <dt>Created</dt><dd>${when(api.createdAt)}</dd>
    <dt>Changed</dt><dd>${when(api.updatedAt)}</dd>
  </dl>
  <h2>Control file</h2>
  <pre class="code" tabindex="0" aria-label="Control file">${prettyJson(api.control)}</pre>
  ${usingIt(api.control, o.endpoint)}
  <h2 id="keys">API keys</h2>
  <p>Keys for this API belong to the service user <code>${o.serviceUser}</code> and work for <code>POST ${pushPath(api.url)}</code> only.
    Send one as the password of HTTP Basic authentication with user name <code>svc</code>.</p>
  ${keysTable({ keys: o.keys, csrf: o.csrf, back: `${base}#keys`, showUser: false, caption: `API keys for ${api.url}` })}
  `;
};

export const keyCreatedForApi = (o: { api: RestApiDoc; endpoint: string; key: string; id: string }): Html => html`
  ${breadcrumbs([['REST APIs', '/admin/rest-apis'], [o.api.url, `/admin/rest-apis/${seg(o.api.url)}`], 'New API key'])}
  ${pageHeading('API key created')}
  <div class="notice notice-success" role="status">A key for REST API <code>${o.api.url}</code> was created.</div>
  ${secretBox({
    id: 'api-key',
    label: 'The new API key',
    value: o.key,
    note: html`Copy it now: it is shown only this once and cannot be shown again. It works for <code>POST ${o.endpoint}</code> only.`,
  })}
  ${usingIt(o.api.control, o.endpoint, o.key)}
  <p><a href="/admin/rest-apis/${seg(o.api.url)}">Back to REST API ${o.api.url}</a></p>
`;
