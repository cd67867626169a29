/** The event log: one stream's events, or the whole log narrowed by stream prefix and type. */
import type { EventRow, LogPage, StreamPage } from '../../../queries/admin-events.ts';
import { html, seg, type Fragment, type Html } from '../html.ts';
import { breadcrumbs, pageHeading, when } from '../layout.ts';
import { hrefOf, scrollBox, searchForm } from './lists.ts';

/** The admin page of what a stream is about, where there is one. */
const ownerPage = (stream: string): Html | undefined => {
  const at = stream.indexOf('-');
  const kind = stream.slice(0, at);
  const id = stream.slice(at + 1);
  if (kind === 'object') return html`<a href="/admin/objects/${seg(id)}">the object's page</a>`;
  if (kind === 'file') return html`<a href="/admin/files/${seg(id)}">the file's page</a>`;
  if (kind === 'user') return html`<a href="/admin/users/${seg(id)}">the user's page</a>`;
  if (kind === 'restapi') return html`<a href="/admin/rest-apis/${seg(id)}">the REST API's page</a>`;
  return undefined;
};

const streamLink = (stream: string): Html => html`<a href="${hrefOf('/admin/events', { stream })}"><code>${stream}</code></a>`;

const eventsTable = (rows: readonly EventRow[], withStream: boolean, caption: string): Html =>
  scrollBox(
    html`<table class="data events" id="events">
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr>${withStream ? html`<th scope="col" class="num">Position</th><th scope="col">Stream</th>` : ''}<th scope="col" class="num">Version</th><th scope="col">Type</th><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Correlation id</th><th scope="col">Data</th></tr></thead>
    <tbody>${rows.map(
      (e) => html`<tr data-revision="${e.revision}">
        ${withStream ? html`<td class="num">${e.position}</td><td>${streamLink(e.stream)}</td>` : ''}
        <td class="num">${e.revision}</td>
        <td><code>${e.type}</code></td>
        <td>${when(e.recordedAt)}</td>
        <td>${e.actor ? html`<code>${e.actor}</code>` : '—'}</td>
        <td>${e.correlationId ? html`<code>${e.correlationId}</code>` : '—'}</td>
        <td><code class="preview">${e.preview}${e.truncated ? '…' : ''}</code></td>
      </tr>`,
    )}</tbody>
  </table>`,
    caption,
  );

const links = (parts: readonly [string | undefined, string, 'prev' | 'next'][]): Fragment =>
  parts.some(([href]) => href)
    ? html`<p class="pager-links">${parts.map(([href, label, rel]) =>
        href ? html`<a href="${href}" rel="${rel}">${label}</a> ` : html`<span class="pager-off" aria-disabled="true">${label}</span> `,
      )}</p>`
    : '';

export const streamPage = (o: { stream: string; page: StreamPage; size: number; sizeParam?: string }): Html => {
  const { page } = o;
  const href = (from: number | undefined) => (from === undefined ? undefined : hrefOf('/admin/events', { stream: o.stream, from: String(from), size: o.sizeParam }));
  const owner = ownerPage(o.stream);
  const first = page.items[0];
  return html`
  ${breadcrumbs([['Events', '/admin/events'], o.stream])}
  ${pageHeading(html`Events of <code>${o.stream}</code>`)}
  ${owner ? html`<p>See also ${owner}.</p>` : ''}
  <nav class="pager" aria-label="Pages of events">
    <p class="count" role="status">${first ? html`${first.revision + 1}–${first.revision + page.items.length} of ${page.total}` : page.total} events</p>
    ${links([
      [href(page.prev), '← Earlier', 'prev'],
      [href(page.next), 'Later →', 'next'],
    ])}
  </nav>
  ${page.items.length ? eventsTable(page.items, false, `Events of ${o.stream}`) : html`<p class="empty">${page.total ? 'No events from this version on.' : 'This stream has no events.'}</p>`}
`;
};

export const logPage = (o: { page: LogPage; q: string; type: string; after: number; sizeParam?: string }): Html => {
  const href = (after: number | undefined) => (after === undefined ? undefined : hrefOf('/admin/events', { q: o.q, type: o.type, after: String(after), size: o.sizeParam }));
  return html`
  ${pageHeading('Events')}
  <p class="lead">The event log, oldest first: every change to the store is an event in one stream (an object's is <code>object-&lt;ref&gt;</code>).
    Open a stream to see its events alone.</p>
  <form method="get" action="/admin/events" class="search" aria-label="Open a stream">
    <span class="search-field"><label for="s-stream">Stream</label>
    <input type="search" id="s-stream" name="stream" value="" placeholder="object-80000" autocomplete="off" spellcheck="false"></span>
    <button type="submit">Open stream</button>
  </form>
  ${searchForm({
    action: '/admin/events',
    label: 'Search the log',
    fields: [
      { name: 'q', label: 'Stream starts with', value: o.q, placeholder: 'user-' },
      { name: 'type', label: 'Event type', value: o.type, placeholder: 'ObjectCreated' },
    ],
  })}
  <nav class="pager" aria-label="Pages of events">
    <p class="count" role="status">${o.page.items.length} events${o.after > 0 ? html` after position ${o.after}` : ' from the start'}</p>
    ${links([
      [o.after > 0 ? hrefOf('/admin/events', { q: o.q, type: o.type, size: o.sizeParam }) : undefined, '⇤ First', 'prev'],
      [href(o.page.next), 'Next →', 'next'],
    ])}
  </nav>
  ${o.page.items.length ? eventsTable(o.page.items, true, 'Events') : html`<p class="empty">No events${o.q || o.type ? ' match this search' : ''}.</p>`}
`;
};
