/** API keys: tables with revoke buttons, the page of all keys. */
import type { ApiKeyDoc } from '../../../projections/read-models.ts';
import { html, seg, type Html } from '../html.ts';
import { badge, pageHeading, postButton, when } from '../layout.ts';

export const keysTable = (o: { keys: readonly ApiKeyDoc[]; csrf: string; back: string; showUser: boolean; caption: string }): Html =>
  o.keys.length === 0
    ? html`<p class="empty">No API keys.</p>`
    : html`<table class="data">
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
    </table>`;

export const apiKeysPage = (o: { keys: readonly ApiKeyDoc[]; csrf: string }): Html => html`
  ${pageHeading('API keys')}
  <p class="lead">Every API key, of read clients and of the push-data service user. A key is shown only when it is issued;
    to issue one for a read client, open the <a href="/admin/users">user</a>. Keys for push-data APIs are made on the page of each <a href="/admin/rest-apis">REST API</a>.</p>
  ${keysTable({ keys: o.keys, csrf: o.csrf, back: '/admin/api-keys', showUser: true, caption: 'All API keys' })}
`;
