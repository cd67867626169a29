/** Users, groups, and API keys of read clients. */
import type { ApiKeyDoc, GroupDoc, UserDoc } from '../../../projections/read-models.ts';
import type { ListPage } from '../../../queries/admin-lists.ts';
import { html, seg, type Html } from '../html.ts';
import {
  badge,
  breadcrumbs,
  checkbox,
  csrfField,
  pageHeading,
  problemBox,
  secretBox,
  textField,
  yesNo,
  type FieldErrors,
  type Problem,
} from '../layout.ts';
import { keysTable } from './api-keys.ts';
import { emptyList, pager, scrollBox, searchForm } from './lists.ts';

const groupChecks = (groups: readonly GroupDoc[], checked: ReadonlySet<string>, errors: FieldErrors, legend: string): Html =>
  html`<fieldset class="field checks${errors.groups?.length ? ' has-errors' : ''}"${errors.groups?.length ? html` aria-describedby="f-groups-errors"` : ''}>
    <legend>${legend}</legend>
    ${groups.length === 0 ? html`<p class="hint">There are no groups yet. <a href="/admin/groups">Create one</a>.</p>` : ''}
    ${groups.map((g, i) => checkbox({ name: 'groups', id: `f-group-${i}`, value: g.code, checked: checked.has(g.code), label: html`${g.title} <code>${g.code}</code>` }))}
    ${errors.groups?.length ? html`<ul class="field-errors" id="f-groups-errors">${errors.groups.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
  </fieldset>`;

export interface NewUserValues {
  readonly username: string;
  readonly title: string;
  readonly first: string;
  readonly last: string;
  readonly email: string;
  readonly groups: ReadonlySet<string>;
}

export const emptyUser: NewUserValues = { username: '', title: '', first: '', last: '', email: '', groups: new Set() };

export const usersPage = (o: { page: ListPage<UserDoc>; q: string; groups: readonly GroupDoc[]; csrf: string; values: NewUserValues; problem?: Problem; errors: FieldErrors }): Html => html`
  ${pageHeading('Users')}
  <p class="lead">People and service users. Read clients authenticate with API keys issued to a user; what they may read follows the user's groups.</p>
  ${searchForm({ action: '/admin/users', label: 'Search users', fields: [{ name: 'q', label: 'Search users', value: o.q }], hint: 'User names starting with this.' })}
  ${pager({ path: '/admin/users', search: { q: o.q }, page: o.page, noun: 'users' })}
  ${o.page.items.length === 0
    ? emptyList(o.q !== '', 'No users yet.')
    : scrollBox(html`<table class="data">
      <caption class="visually-hidden">Users</caption>
      <thead><tr><th scope="col">User name</th><th scope="col">Email</th><th scope="col">Groups</th><th scope="col">Kind</th><th scope="col">Active</th></tr></thead>
      <tbody>${o.page.items.map(
        (u) => html`<tr>
          <th scope="row"><a href="/admin/users/${seg(u.username)}">${u.username}</a></th>
          <td>${u.email ?? ''}</td>
          <td>${u.groups.map((g) => html`<code>${g}</code> `)}</td>
          <td>${u.service ? badge('Service user', 'muted') : 'Person'}</td>
          <td>${u.active ? 'Yes' : badge('Inactive', 'muted')}</td>
        </tr>`,
      )}</tbody>
    </table>`, 'Users')}
  <section aria-labelledby="new-user" class="panel">
    <h2 id="new-user">Create a user</h2>
    ${problemBox(o.problem, 'The user was not created')}
    <form method="post" action="/admin/users" class="stacked" novalidate>
      ${csrfField(o.csrf)}
      ${textField({ name: 'username', label: 'User name', value: o.values.username, required: true, errors: o.errors, hint: 'Lower case: a-z, 0-9 and . _ @ -, starting with a letter or digit.', attrs: html` autocomplete="off" spellcheck="false"` })}
      <div class="row">
        ${textField({ name: 'title', label: 'Title', value: o.values.title, errors: o.errors, attrs: html` autocomplete="off"` })}
        ${textField({ name: 'first', label: 'First name', value: o.values.first, errors: o.errors, attrs: html` autocomplete="off"` })}
        ${textField({ name: 'last', label: 'Last name', value: o.values.last, errors: o.errors, attrs: html` autocomplete="off"` })}
      </div>
      ${textField({ name: 'email', label: 'Email', type: 'email', value: o.values.email, errors: o.errors, attrs: html` autocomplete="off"` })}
      ${groupChecks(o.groups, o.values.groups, o.errors, 'Groups')}
      <div class="form-actions"><button type="submit">Create user</button></div>
    </form>
  </section>
`;

export const userPage = (o: {
  user: UserDoc;
  groups: readonly GroupDoc[];
  keys: readonly ApiKeyDoc[];
  csrf: string;
  keyProblem?: Problem;
  keyErrors: FieldErrors;
  keyValues: { name: string; path: string };
  changeProblem?: Problem;
  changeErrors: FieldErrors;
}): Html => {
  const u = o.user;
  const base = `/admin/users/${seg(u.username)}`;
  return html`
  ${breadcrumbs([['Users', '/admin/users'], u.username])}
  ${pageHeading(html`User <code>${u.username}</code>`)}
  <dl class="properties">
    <dt>Kind</dt><dd>${u.service ? 'Service user' : 'Person'}</dd>
    <dt>Email</dt><dd>${u.email ?? '—'}</dd>
    <dt>Active</dt><dd>${yesNo(u.active)}</dd>
    <dt>Groups</dt><dd>${u.groups.length ? u.groups.map((g) => html`<code>${g}</code> `) : '—'}</dd>
    ${u.profileRef ? html`<dt>Profile object</dt><dd><a href="/admin/objects/${seg(u.profileRef)}"><code>${u.profileRef}</code></a> <a href="/api/admin/objects/${seg(u.profileRef)}?output=pretty" class="hint">(JSON)</a></dd>` : ''}
  </dl>
  <section aria-labelledby="change-user" class="panel">
    <h2 id="change-user">Groups and status</h2>
    ${problemBox(o.changeProblem, 'The user was not changed')}
    <form method="post" action="${base}" class="stacked">
      ${csrfField(o.csrf)}
      ${groupChecks(o.groups, new Set(u.groups), o.changeErrors, 'Member of')}
      ${checkbox({ name: 'active', label: 'Active', checked: u.active, hint: 'Keys of inactive users are refused.' })}
      <div class="form-actions"><button type="submit">Save</button></div>
    </form>
  </section>
  <h2 id="keys">API keys</h2>
  ${keysTable({ keys: o.keys, csrf: o.csrf, back: `${base}#keys`, showUser: false, caption: `API keys of ${u.username}` })}
  <section aria-labelledby="new-key" class="panel">
    <h3 id="new-key">Issue an API key</h3>
    ${problemBox(o.keyProblem, 'No key was issued')}
    <form method="post" action="${base}/api-keys" class="stacked" novalidate>
      ${csrfField(o.csrf)}
      ${textField({ name: 'name', label: 'Name', value: o.keyValues.name, errors: o.keyErrors, hint: 'What the key is for, e.g. the client system.' })}
      ${textField({ name: 'path', label: 'Path', value: o.keyValues.path, errors: o.keyErrors, hint: html`Requests whose path starts with this are allowed, e.g. <code>/api/</code> or <code>/api/v0-object/</code>; <code>=/exact/path</code> allows one path only.`, attrs: html` spellcheck="false"` })}
      <div class="form-actions"><button type="submit">Issue API key</button></div>
    </form>
  </section>`;
};

export const keyCreatedForUser = (o: { user: UserDoc; key: string; path: string }): Html => html`
  ${breadcrumbs([['Users', '/admin/users'], [o.user.username, `/admin/users/${seg(o.user.username)}`], 'New API key'])}
  ${pageHeading('API key issued')}
  <div class="notice notice-success" role="status">A key for user <code>${o.user.username}</code> was issued, valid for paths <code>${o.path}</code>.</div>
  ${secretBox({ id: 'api-key', label: 'The new API key', value: o.key, note: 'Copy it now: it is shown only this once and cannot be shown again.' })}
  <p><a href="/admin/users/${seg(o.user.username)}">Back to user ${o.user.username}</a></p>
`;

export interface NewGroupValues {
  readonly code: string;
  readonly title: string;
  readonly readAll: boolean;
  readonly readLabels: ReadonlySet<string>;
}
export const emptyGroup: NewGroupValues = { code: '', title: '', readAll: false, readLabels: new Set() };

export const groupsPage = (o: {
  page: ListPage<GroupDoc>;
  q: string;
  labels: readonly { code: string; name: string }[];
  csrf: string;
  values: NewGroupValues;
  problem?: Problem;
  errors: FieldErrors;
}): Html => html`
  ${pageHeading('Groups')}
  <p class="lead">Groups decide what read clients may see: everything, or objects with some labels.</p>
  ${searchForm({ action: '/admin/groups', label: 'Search groups', fields: [{ name: 'q', label: 'Search groups', value: o.q }], hint: 'Group codes starting with this.' })}
  ${pager({ path: '/admin/groups', search: { q: o.q }, page: o.page, noun: 'groups' })}
  ${o.page.items.length === 0
    ? emptyList(o.q !== '', 'No groups yet.')
    : scrollBox(html`<table class="data">
      <caption class="visually-hidden">Groups</caption>
      <thead><tr><th scope="col">Code</th><th scope="col">Title</th><th scope="col">Reads all</th><th scope="col">Reads labels</th></tr></thead>
      <tbody>${o.page.items.map(
        (g) => html`<tr>
          <th scope="row"><code>${g.code}</code></th>
          <td>${g.title}</td>
          <td>${yesNo(g.readAll)}</td>
          <td>${g.readLabels.map((l) => html`<code>${l}</code> `)}</td>
        </tr>`,
      )}</tbody>
    </table>`, 'Groups')}
  <section aria-labelledby="new-group" class="panel">
    <h2 id="new-group">Create a group</h2>
    ${problemBox(o.problem, 'The group was not created')}
    <form method="post" action="/admin/groups" class="stacked" novalidate>
      ${csrfField(o.csrf)}
      ${textField({ name: 'code', label: 'Code', value: o.values.code, required: true, errors: o.errors, hint: 'Namespaced, e.g. example:group:readers.', attrs: html` autocomplete="off" spellcheck="false"` })}
      ${textField({ name: 'title', label: 'Title', value: o.values.title, required: true, errors: o.errors })}
      ${checkbox({ name: 'readAll', label: 'Members may read every object', checked: o.values.readAll })}
      <fieldset class="field checks${o.errors.readLabels?.length ? ' has-errors' : ''}">
        <legend>Members may read objects with these labels</legend>
        ${o.labels.map((l, i) => checkbox({ name: 'readLabels', id: `f-label-${i}`, value: l.code, checked: o.values.readLabels.has(l.code), label: html`${l.name} <code>${l.code}</code>` }))}
        ${o.errors.readLabels?.length ? html`<ul class="field-errors">${o.errors.readLabels.map((e) => html`<li>${e}</li>`)}</ul>` : ''}
      </fieldset>
      <div class="form-actions"><button type="submit">Create group</button></div>
    </form>
  </section>
`;
