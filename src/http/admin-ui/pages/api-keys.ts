/** API keys: tables with revoke buttons, the page of all keys. */
import type { ApiKeyDoc } from '../../../projections/read-models.ts';
import type { ListPage } from '../../../queries/admin-lists.ts';
import { html, seg, type Html } from '../html.ts';
import { badge, pageHeading, postButton, when } from '../layout.ts';
import { emptyList, hrefOf, pager, scrollBox, searchForm } from './lists.ts';

export const keysTable = (o: { keys: readonly ApiKeyDoc[]; csrf: string; back: string; showUser: boolean; caption: string }): Html =>
  o.keys.length === 0
    ? html`<p class="empty">No API keys.</p>`
    : scrollBox(html`<table class="data">
      <caption class="visually-hidden">${o.caption}</caption>
      <thead><tr><th scope="col">Name</th>${o.showUser ? html`<th scope="col">User</th>` : ''}<th scope="col">Path</th><th scope="col">Key starts</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${o.keys.map(
        (k) => html`<tr${k.revoked ? html` class="revoked"` : ''}>
          <th scope="row">${k.name}</th>
          ${o.showUser ? html`<td><a href="/admin/users/${seg(k.username)}">${k.username}</a></td>` : ''}
          <td><code>${k.path}</code></td>
          <td><code>${k.lookup.slice(0, 6)}…</code></td>
          <td>${when(k.createdAt)}</td>
          <td>${k.revoked ? badge('Revoked', 'muted') : badge('Active', 'ok')}</td>
          <td>${k.revoked
            ? ''
            : postButton({
                action: `/admin/api-keys/${seg(k.id)}/revoke`,
                label: 'Revoke',
                csrf: o.csrf,
                fields: { back: o.back },
                className: 'button-danger button-small',
                confirm: `Revoke the API key "${k.name}"? Clients using it will be refused.`,
                ariaLabel: `Revoke API key ${k.name}`,
              })}</td>
        </tr>`,
      )}</tbody>
    </table>`, o.caption);

export const apiKeysPage = (o: { page: ListPage<ApiKeyDoc>; q: string; csrf: string }): Html => {
  const here = hrefOf('/admin/api-keys', { q: o.q });
  return html`
  ${pageHeading('API keys')}
  <p class="lead">Every API key, of read clients and of the push-data service user. A key is shown only when it is issued;
    to issue one for a read client, open the <a href="/admin/users">user</a>. Keys for push-data APIs are made on the page of each <a href="/admin/rest-apis">REST API</a>.</p>
  ${searchForm({ action: '/admin/api-keys', label: 'Search API keys', fields: [{ name: 'q', label: 'User name starts with', value: o.q }] })}
  ${pager({ path: '/admin/api-keys', search: { q: o.q }, page: o.page, noun: 'API keys' })}
  ${o.page.items.length === 0 && o.q ? emptyList(true, '') : keysTable({ keys: o.page.items, csrf: o.csrf, back: here, showUser: true, caption: 'API keys' })}
`;
};
