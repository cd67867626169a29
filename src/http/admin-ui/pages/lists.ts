/** What every list page is made of: a search form, the count, Previous / Next links, a scrolling table box. */
import type { Cursor, ListPage } from '../../../queries/admin-lists.ts';
import { html, type Fragment, type Html } from '../html.ts';
import { encodeCursor, PAGE_SIZE } from '../paging.ts';

/** The search a list was asked for, kept by its links (empty values left out). */
export type Search = Readonly<Record<string, string>>;

export const hrefOf = (path: string, params: Readonly<Record<string, string | undefined>>): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
};

export interface SearchField {
  readonly name: string;
  readonly label: string;
  readonly value: string;
  /** A select's options as [value, label]; a text field without them. */
  readonly options?: readonly (readonly [string, string])[];
  readonly placeholder?: string;
}

/** A GET form: the search lives in the address, so a result can be bookmarked and paged. */
export const searchForm = (o: { action: string; fields: readonly SearchField[]; hint?: Fragment; label: string }): Html => html`
  <form method="get" action="${o.action}" class="search" role="search" aria-label="${o.label}">
    ${o.fields.map((f) =>
      f.options
        ? html`<span class="search-field"><label for="s-${f.name}">${f.label}</label>
            <select id="s-${f.name}" name="${f.name}">${f.options.map(([v, l]) => html`<option value="${v}"${v === f.value ? html` selected` : ''}>${l}</option>`)}</select></span>`
        : html`<span class="search-field"><label for="s-${f.name}">${f.label}</label>
            <input type="search" id="s-${f.name}" name="${f.name}" value="${f.value}" placeholder="${f.placeholder ?? ''}" autocomplete="off" spellcheck="false"${o.hint ? html` aria-describedby="s-hint"` : ''}></span>`,
    )}
    <button type="submit">Search</button>
    ${Object.values(o.fields).some((f) => f.value) ? html`<a href="${o.action}">Clear</a>` : ''}
    ${o.hint ? html`<p class="hint" id="s-hint">${o.hint}</p>` : ''}
  </form>`;

/** "51–100 of 320 REST APIs" and the links to the neighbouring pages, keeping the search. */
export const pager = <T>(o: { path: string; search: Search; page: ListPage<T>; noun: string }): Html => {
  const { page } = o;
  const link = (rel: 'after' | 'before', c: Cursor | undefined, label: string) =>
    c
      ? html`<a href="${hrefOf(o.path, { ...o.search, ...(page.size !== PAGE_SIZE ? { size: String(page.size) } : {}), [rel]: encodeCursor(c) })}" rel="${rel === 'after' ? 'next' : 'prev'}">${label}</a>`
      : html`<span class="pager-off" aria-disabled="true">${label}</span>`;
  const range = page.items.length ? html`${page.offset + 1}–${page.offset + page.items.length} of ${page.total}` : html`${page.total}`;
  return html`<nav class="pager" aria-label="Pages of ${o.noun}">
    <p class="count" role="status">${range} ${o.noun}</p>
    ${page.prev || page.next ? html`<p class="pager-links">${link('before', page.prev, '← Previous')} ${link('after', page.next, 'Next →')}</p>` : ''}
  </nav>`;
};

/** Wide tables scroll sideways inside this box rather than widening the page. */
export const scrollBox = (table: Fragment, label: string): Html => html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${table}</div>`;

/** Nothing matched the search, or there is nothing yet. */
export const emptyList = (searching: boolean, none: Fragment): Html =>
  searching ? html`<p class="empty">Nothing matches this search.</p>` : html`<p class="empty">${none}</p>`;

/** Pages by number, for lists held in memory (the models, from configuration): "1–50 of 70", Previous / Next. */
export const numberedPager = (o: { path: string; search: Search; page: number; size: number; total: number; shown: number; noun: string }): Html => {
  const last = Math.max(1, Math.ceil(o.total / o.size));
  const link = (n: number, label: string, rel: 'prev' | 'next') =>
    n >= 1 && n <= last && n !== o.page
      ? html`<a href="${hrefOf(o.path, { ...o.search, page: n === 1 ? undefined : String(n) })}" rel="${rel}">${label}</a>`
      : html`<span class="pager-off" aria-disabled="true">${label}</span>`;
  const from = (o.page - 1) * o.size;
  return html`<nav class="pager" aria-label="Pages of ${o.noun}">
    <p class="count" role="status">${o.shown ? html`${from + 1}–${from + o.shown} of ${o.total}` : o.total} ${o.noun}</p>
    ${last > 1 ? html`<p class="pager-links">${link(o.page - 1, '← Previous', 'prev')} <span>Page ${o.page} of ${last}</span> ${link(o.page + 1, 'Next →', 'next')}</p>` : ''}
  </nav>`;
};
