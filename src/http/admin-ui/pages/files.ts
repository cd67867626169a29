/** Stored files: the list (newest first, searched by name or digest) and one file's details with a download link. */
import type { FileDoc } from '../../../projections/read-models.ts';
import type { ListPage } from '../../../queries/admin-lists.ts';
import { html, seg, type Html } from '../html.ts';
import { breadcrumbs, pageHeading, when } from '../layout.ts';
import { emptyList, hrefOf, pager, scrollBox, searchForm } from './lists.ts';

export const filePath = (f: Pick<FileDoc, 'digest' | 'fileSize'>): string => `/admin/files/${seg(`${f.digest}-${f.fileSize}`)}`;

/** A size in bytes as people read it, the exact count kept in the title. */
export const sizeText = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
};

const size = (bytes: number): Html => html`<span title="${bytes} bytes">${sizeText(bytes)}</span>`;
const digestShort = (digest: string): Html => html`<code title="${digest}">${digest.slice(0, 12)}…</code>`;

export const fileList = (o: { page: ListPage<FileDoc>; q: string }): Html => html`
  ${pageHeading('Files')}
  <p class="lead">Stored files, newest first. One copy is kept of the same bytes; objects refer to a file by its digest and size.
    Files are stored with <code>POST /api/admin/files</code>.</p>
  ${searchForm({ action: '/admin/files', label: 'Search files', fields: [{ name: 'q', label: 'Name or digest starts with', value: o.q, placeholder: 'report or e3b0c442' }] })}
  ${pager({ path: '/admin/files', search: { q: o.q }, page: o.page, noun: 'files' })}
  ${o.page.items.length === 0
    ? emptyList(o.q !== '', 'No files yet.')
    : scrollBox(
        html`<table class="data" id="files">
      <caption class="visually-hidden">Files</caption>
      <thead><tr><th scope="col">Name</th><th scope="col" class="num">Size</th><th scope="col">Type</th><th scope="col">Digest</th><th scope="col">Created</th></tr></thead>
      <tbody>${o.page.items.map(
        (f) => html`<tr>
          <th scope="row"><a href="${filePath(f)}">${f.filename}</a></th>
          <td class="num">${size(f.fileSize)}</td>
          <td><code>${f.mimeType}</code></td>
          <td>${digestShort(f.digest)}</td>
          <td>${when(f.createdAt)}</td>
        </tr>`,
      )}</tbody>
    </table>`,
        'Files',
      )}
`;

export const fileDetails = (o: { file: FileDoc; download: { url: string; validUntil: string } }): Html => {
  const f = o.file;
  const p = f.properties;
  const tags = Object.entries(f.tags);
  return html`
  ${breadcrumbs([['Files', '/admin/files'], f.filename])}
  ${pageHeading(html`File <code>${f.filename}</code>`)}
  <dl class="properties">
    <dt>Name</dt><dd>${f.filename}</dd>
    <dt>Size</dt><dd>${sizeText(f.fileSize)} (${f.fileSize} bytes)</dd>
    <dt>Type</dt><dd><code>${f.mimeType}</code></dd>
    <dt>Digest (SHA-256)</dt><dd><code class="wrap">${f.digest}</code></dd>
    <dt>Created</dt><dd>${when(f.createdAt)}</dd>
    ${p.dimensions ? html`<dt>Dimensions</dt><dd>${p.dimensions.width} × ${p.dimensions.height} ${p.dimensions.units}</dd>` : ''}
    ${p.numberOfPages !== undefined ? html`<dt>Pages</dt><dd>${p.numberOfPages}</dd>` : ''}
    ${p.thumbnail ? html`<dt>Thumbnail</dt><dd>${p.thumbnail.width} × ${p.thumbnail.height} <code>${p.thumbnail.mimeType}</code></dd>` : ''}
    <dt>Tags</dt><dd>${tags.length ? html`<ul class="plain">${tags.map(([k, v]) => html`<li><code>${k}</code> = ${v}</li>`)}</ul>` : '—'}</dd>
  </dl>
  <p><a class="button" href="${o.download.url}" id="download">Download</a>
    <span class="hint">A signed link, valid until ${when(o.download.validUntil)}.</span></p>
  <p><a href="${hrefOf('/admin/events', { stream: `file-${f.digest}-${f.fileSize}` })}">The file's events</a> (stream <code>file-${f.digest}-${f.fileSize}</code>)</p>
`;
};
