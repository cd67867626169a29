/** One store object: its properties and attributes (now or as at a past time) and its history. */
import { html, seg, type Fragment, type Html } from '../html.ts';
import type { ObjectDoc } from '../../../projections/read-models.ts';
import type { ListPage } from '../../../queries/admin-lists.ts';
import { badge, breadcrumbs, pageHeading, when } from '../layout.ts';
import { emptyList, hrefOf, pager, scrollBox, searchForm } from './lists.ts';

/** The `svc:object:0` serialisation, as far as this page reads it. */
export interface ShownObject {
  readonly ref: string;
  readonly title: string;
  readonly recordVersion: number;
  readonly deleted: boolean;
  readonly creationDate: string;
  readonly lastModificationDate: string;
  readonly type: { readonly code: string; readonly name: string };
  readonly labels: readonly { readonly code: string; readonly title: string }[];
  readonly attributes: Readonly<Record<string, readonly Record<string, unknown>[]>>;
}

export interface ShownVersion {
  readonly recordVersion: number;
  readonly time: string;
  readonly actor: string | null;
  readonly correlationId: string | null;
  readonly event: string;
  readonly attributes: readonly string[];
  readonly labels: { readonly added: readonly string[]; readonly removed: readonly string[] };
  readonly type?: { readonly from: string; readonly to: string };
}

export const objectPath = (ref: string): string => `/admin/objects/${seg(ref)}`;
/** The event-log view of one stream. */
export const streamPath = (stream: string): string => hrefOf('/admin/events', { stream });

/** The object browser: search by title (prefix) and type, each result linking to its object's page. */
export const objectList = (o: { page: ListPage<ObjectDoc>; q: string; type: string; types: readonly (readonly [string, string])[] }): Html => {
  const typeName = new Map(o.types);
  return html`
  ${pageHeading('Objects')}
  <p class="lead">Every store object, whatever its labels, by title. Open one to see its attributes, its history and its events.</p>
  ${searchForm({
    action: '/admin/objects',
    label: 'Search objects',
    fields: [
      { name: 'q', label: 'Title starts with', value: o.q },
      { name: 'type', label: 'Type', value: o.type, options: [['', 'Any type'], ...o.types.map(([code, name]) => [code, `${name} (${code})`] as const)] },
    ],
    hint: 'The start of the title, as it is written (capitals count).',
  })}
  ${pager({ path: '/admin/objects', search: { q: o.q, type: o.type }, page: o.page, noun: 'objects' })}
  ${o.page.items.length === 0
    ? emptyList(o.q !== '' || o.type !== '', 'No objects yet.')
    : scrollBox(
        html`<table class="data" id="objects">
      <caption class="visually-hidden">Objects</caption>
      <thead><tr><th scope="col">Title</th><th scope="col">Type</th><th scope="col">Ref</th><th scope="col">Labels</th><th scope="col">Changed</th></tr></thead>
      <tbody>${o.page.items.map(
        (ob) => html`<tr>
          <th scope="row"><a href="${objectPath(ob.ref)}">${ob.title || html`<span class="hint">(no title)</span>`}</a>${ob.deleted ? html` ${badge('Deleted', 'muted')}` : ''}</th>
          <td>${typeName.get(ob.objectType) ?? ob.objectType}</td>
          <td><code>${ob.ref}</code></td>
          <td>${ob.labels.map((l) => html`<code>${l}</code> `)}</td>
          <td>${when(ob.lastModificationDate)}</td>
        </tr>`,
      )}</tbody>
    </table>`,
        'Objects',
      )}
`;
};

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** A value in words: links to their own page under their title, else the readable form the API gives. */
const valueOf = (v: Readonly<Record<string, unknown>>): Fragment => {
  const qualifier = v.qualifier ? html` <span class="hint">(${text(v.qualifier)})</span>` : '';
  if (v.type === 'link' && typeof v.ref === 'string') {
    // Schema items (types, labels) have no page here: their name is enough.
    const shown = typeof v.title === 'string' ? v.title : v.ref;
    return html`${typeof v.code === 'string' ? html`${shown} <code>${v.code}</code>` : html`<a href="${objectPath(v.ref)}">${shown}</a>`}${qualifier}`;
  }
  if (v.type === 'file') return html`${text(v.filename)} <span class="hint">(${text(v.mimeType)}, ${text(v.fileSize)} bytes)</span>${qualifier}`;
  if (v.readable !== undefined) return html`${text(v.readable)}${qualifier}`;
  return html`${text(v.value)}${qualifier}`;
};

const attributesTable = (o: ShownObject, names: ReadonlyMap<string, string>): Html => {
  const codes = Object.keys(o.attributes);
  if (codes.length === 0) return html`<p class="hint">No attributes.</p>`;
  return html`<table class="data" id="attributes">
    <caption class="visually-hidden">Attributes</caption>
    <thead><tr><th scope="col">Attribute</th><th scope="col">Values</th></tr></thead>
    <tbody>${codes.map(
      (code) => html`<tr>
        <th scope="row">${names.get(code) ?? code} <div class="hint"><code>${code}</code></div></th>
        <td>${o.attributes[code]!.length === 1 ? valueOf(o.attributes[code]![0]!) : html`<ul>${o.attributes[code]!.map((v) => html`<li>${valueOf(v)}</li>`)}</ul>`}</td>
      </tr>`,
    )}</tbody>
  </table>`;
};

const changed = (v: ShownVersion): Fragment => {
  const parts: Fragment[] = [];
  if (v.attributes.length) parts.push(html`<div>Attributes: ${v.attributes.map((a, i) => html`${i ? ', ' : ''}<code>${a}</code>`)}</div>`);
  if (v.labels.added.length) parts.push(html`<div>Labels added: ${v.labels.added.map((l, i) => html`${i ? ', ' : ''}<code>${l}</code>`)}</div>`);
  if (v.labels.removed.length) parts.push(html`<div>Labels removed: ${v.labels.removed.map((l, i) => html`${i ? ', ' : ''}<code>${l}</code>`)}</div>`);
  if (v.type) parts.push(html`<div>Type: <code>${v.type.from}</code> → <code>${v.type.to}</code></div>`);
  return parts.length ? parts : '—';
};

const historyTable = (ref: string, versions: readonly ShownVersion[]): Html => html`<table class="data" id="history">
    <caption class="visually-hidden">History</caption>
    <thead><tr><th scope="col" class="num">Version</th><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Correlation id</th><th scope="col">Event</th><th scope="col">Changed</th></tr></thead>
    <tbody>${versions.map(
      (v) => html`<tr data-version="${v.recordVersion}">
        <td class="num">${v.recordVersion}</td>
        <td><a href="${objectPath(ref)}?at=${encodeURIComponent(v.time)}" title="The object as it was after this change">${when(v.time)}</a></td>
        <td>${v.actor ? html`<code>${v.actor}</code>` : '—'}</td>
        <td>${v.correlationId ? html`<code>${v.correlationId}</code>` : '—'}</td>
        <td><code>${v.event}</code></td>
        <td>${changed(v)}</td>
      </tr>`,
    )}</tbody>
  </table>`;

const atForm = (ref: string, at: string): Html => html`<form method="get" action="${objectPath(ref)}" class="inline-form">
    <label for="at">Show as at</label>
    <input type="text" id="at" name="at" value="${at}" placeholder="2025-04-01T10:30:00Z" aria-describedby="at-hint">
    <button type="submit">Show</button>
    <span class="hint" id="at-hint">An ISO 8601 date and time; without a zone it is UTC.</span>
  </form>`;

const asAtBanner = (ref: string, at: Date): Html => html`<div class="notice notice-warning as-at" role="status">
    <p><strong>As at ${when(at.toISOString())}</strong>: the object as it was then, after the last change recorded at or before that time.
    <a href="${objectPath(ref)}">Show it as it is now</a>.</p>
  </div>`;

export const objectPage = (o: {
  object: ShownObject;
  /** Attribute names by code. */
  names: ReadonlyMap<string, string>;
  history: readonly ShownVersion[];
  at?: Date;
  /** What the `at` field shows. */
  atText: string;
}): Html => {
  const ob = o.object;
  return html`
  ${breadcrumbs([['Objects', '/admin/objects'], `Object ${ob.ref}`])}
  ${pageHeading(ob.title || html`<span class="hint">(no title)</span>`)}
  ${o.at ? asAtBanner(ob.ref, o.at) : ''}
  <dl class="properties">
    <dt>Ref</dt><dd><code>${ob.ref}</code></dd>
    <dt>Type</dt><dd>${ob.type.name} <code>${ob.type.code}</code></dd>
    <dt>Labels</dt><dd>${ob.labels.length ? ob.labels.map((l) => html`<span title="${l.title}"><code>${l.code}</code></span> `) : '—'}</dd>
    <dt>Record version</dt><dd>${ob.recordVersion}</dd>
    <dt>Created</dt><dd>${when(ob.creationDate)}</dd>
    <dt>Last modified</dt><dd>${when(ob.lastModificationDate)}</dd>
    ${ob.deleted ? html`<dt>Deleted</dt><dd>Yes</dd>` : ''}
  </dl>
  ${atForm(ob.ref, o.atText)}
  <section aria-labelledby="attributes-heading">
    <h2 id="attributes-heading">Attributes</h2>
    ${scrollBox(attributesTable(ob, o.names), 'Attributes')}
  </section>
  <section aria-labelledby="history-heading">
    <h2 id="history-heading">History</h2>
    ${scrollBox(historyTable(ob.ref, o.history), 'History')}
    <p><a href="${streamPath(`object-${ob.ref}`)}">The object's events</a> (stream <code>object-${ob.ref}</code>)</p>
  </section>
  <p><a href="/api/admin/objects/${seg(ob.ref)}?output=pretty">This object in the admin API (JSON)</a></p>
`;
};

/** The object did not exist yet (or was not readable) at the time asked for. */
export const notThenPage = (ref: string, at: Date): Html => html`
  ${breadcrumbs([['Objects', '/admin/objects'], `Object ${ref}`])}
  ${pageHeading('Not found')}
  <p>Object <code>${ref}</code> did not exist as at ${when(at.toISOString())}.</p>
  <p><a href="${objectPath(ref)}">Show it as it is now</a></p>
`;
