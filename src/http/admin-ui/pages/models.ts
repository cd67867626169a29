/** Model explorer (haplo-behaviour.md §3.4) and "Generate control file" (§3.11). */
import type { ModelDescription } from '../../../commands/push-data/generate-control.ts';
import type { ModelDef } from '../../../domain/model.ts';
import { html, seg, type Html } from '../html.ts';
import { badge, breadcrumbs, csrfField, pageHeading, problemBox, type Problem } from '../layout.ts';
import { emptyList, numberedPager, scrollBox, searchForm } from './lists.ts';

const yes = (b: boolean) => (b ? html`<span aria-label="yes">✓</span>` : html`<span class="visually-hidden">no</span>`);

export const modelList = (o: { models: readonly ModelDef[]; total: number; q: string; page: number; size: number }): Html => html`
  ${pageHeading('Models')}
  <p class="lead">Data-import models: the destinations a control file can write to, and their names.</p>
  ${searchForm({ action: '/admin/models', label: 'Search models', fields: [{ name: 'q', label: 'Name or title contains', value: o.q }] })}
  ${numberedPager({ path: '/admin/models', search: { q: o.q }, page: o.page, size: o.size, total: o.total, shown: o.models.length, noun: 'models' })}
  ${o.models.length === 0 ? emptyList(o.q !== '', 'No models.') : scrollBox(html`<table class="data">
    <caption class="visually-hidden">Models</caption>
    <thead><tr><th scope="col">Model</th><th scope="col">Title</th><th scope="col">Description</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${o.models.map(
      (m) => html`<tr>
        <th scope="row"><a href="/admin/models/${seg(m.name)}"><code>${m.name}</code></a></th>
        <td>${m.title}</td>
        <td>${m.description}</td>
        <td><a href="/admin/control-files/generate?model=${seg(m.name)}" aria-label="Generate a control file for ${m.name}">Generate control file</a></td>
      </tr>`,
    )}</tbody>
  </table>`, 'Models')}
`;

export const destinationBadges = (d: ModelDescription['destinations'][number]): Html =>
  html`${d.dependsOn ? badge(`Depends on ${d.dependsOn}`, 'info') : ''} ${d.optional ? badge('Optional') : ''} ${d.pseudo ? badge('Pseudo destination', 'muted') : ''}`;

export const modelExplorer = (model: ModelDescription): Html => html`
  ${breadcrumbs([['Models', '/admin/models'], model.name])}
  ${pageHeading(html`${model.title} <code class="subtle">${model.name}</code>`, html`<a class="button" href="/admin/control-files/generate?model=${seg(model.name)}">Generate control file</a>`)}
  <p class="lead">${model.description}</p>
  <nav aria-label="Destinations" class="toc"><h2 class="toc-title">Destinations</h2><ul>${model.destinations.map(
    (d, i) => html`<li><a href="#dest-${i}">${d.title}</a> <code>${d.name}</code></li>`,
  )}</ul></nav>
  ${model.destinations.map(
    (d, i) => html`<section class="destination" aria-labelledby="dest-${i}">
      <h2 id="dest-${i}">${d.title} <span class="badges">${destinationBadges(d)}</span></h2>
      <p><code class="snippet">${JSON.stringify(d.snippet)}</code> <span class="subtle">${d.kind === 'object' ? 'Store object' : 'Dictionary'}</span></p>
      ${scrollBox(html`<table class="data">
        <caption class="visually-hidden">Names of destination ${d.name}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col"><abbr title="Multi-value">MV?</abbr></th><th scope="col"><abbr title="Required">Req?</abbr></th><th scope="col">Description</th></tr></thead>
        <tbody>${d.names.map(
          (n) => html`<tr>
            <th scope="row"><code>${n.name}</code></th>
            <td>${n.type}${n.refTypes?.length ? html`<div class="subtle">links to ${n.refTypes.join(', ')}</div>` : ''}</td>
            <td class="center">${yes(n.multivalue)}</td>
            <td class="center">${yes(n.required)}</td>
            <td>${n.description}</td>
          </tr>`,
        )}</tbody>
      </table>`, `Names of ${d.name}`)}
    </section>`,
  )}
`;

export interface GeneratorSelection {
  readonly include: ReadonlySet<string>;
  readonly multivalue: ReadonlySet<string>;
}

export const selectionKey = (destination: string, name: string) => `${destination}^${name}`;

const modelPicker = (models: readonly ModelDef[], selected: string | undefined): Html => html`
  <form method="get" action="/admin/control-files/generate" class="inline-form">
    <label for="f-model">Model</label>
    <select id="f-model" name="model">
      ${selected ? '' : html`<option value="">Choose a model…</option>`}
      ${models.map((m) => html`<option value="${m.name}"${m.name === selected ? html` selected` : ''}>${m.title} (${m.name})</option>`)}
    </select>
    <button type="submit" class="button-quiet">${selected ? 'Change model' : 'Choose'}</button>
  </form>`;

export const generatorPage = (o: {
  models: readonly ModelDef[];
  model?: ModelDescription;
  /** Destinations the generator may use (not excluded). */
  usable?: ReadonlySet<string>;
  selection: GeneratorSelection;
  csrf: string;
  generated?: string;
  problem?: Problem;
}): Html => html`
  ${pageHeading('Generate control file')}
  <p class="lead">Pick a model, tick the names to import (and "multivalue" to replace every value of a multi-value name), and generate a control file to start from.</p>
  ${modelPicker(o.models, o.model?.name)}
  ${problemBox(o.problem, 'No control file was generated')}
  ${o.generated !== undefined
    ? html`<section class="generated" aria-labelledby="generated-heading">
        <h2 id="generated-heading">Generated control file</h2>
        <div class="notice notice-warning"><p>Review it before use: replace every <code>TODO</code> source with the field name in your data,
          and check every <code>new</code> instruction — it may need to be a <code>load</code>. For a REST API that is sent one record at a time,
          add <code>"singleRecord": true</code> to the file's read settings; otherwise send an array of records.</p></div>
        <div class="field">
          <label for="generated">Control file (JSON)</label>
          <textarea id="generated" rows="13" readonly class="mono" spellcheck="false">${o.generated}</textarea>
        </div>
        <div class="form-actions">
          <button type="button" class="copy" data-copy="generated" hidden>Copy</button>
          <form method="post" action="/admin/new-rest-api" class="inline">${csrfField(o.csrf)}
            <input type="hidden" name="controlFile" value="${o.generated}">
            <button type="submit">Start a new REST API with this control file</button>
          </form>
          <span class="copy-status" role="status" aria-live="polite"></span>
        </div>
      </section>`
    : ''}
  ${o.model && o.usable
    ? html`<form method="post" action="/admin/control-files/generate" class="generator">
        ${csrfField(o.csrf)}
        <input type="hidden" name="model" value="${o.model.name}">
        ${o.model.destinations
          .filter((d) => o.usable!.has(d.name))
          .map(
            (d, i) => html`<fieldset class="destination">
              <legend>${d.title} <code>${d.name}</code> <span class="badges">${destinationBadges(d)}</span></legend>
              ${scrollBox(html`<table class="data">
                <thead><tr><th scope="col">Include</th><th scope="col">Type</th><th scope="col">Multivalue</th><th scope="col">Description</th></tr></thead>
                <tbody>${d.names.map((n, j) => {
                  const key = selectionKey(d.name, n.name);
                  const id = `inc-${i}-${j}`;
                  return html`<tr>
                    <td><input type="checkbox" id="${id}" name="include" value="${key}"${o.selection.include.has(key) ? html` checked` : ''}>
                      <label for="${id}"><code>${n.name}</code>${n.required ? html` <span class="required">(required)</span>` : ''}</label></td>
                    <td>${n.type}</td>
                    <td>${n.multivalue
                      ? html`<input type="checkbox" id="mv-${i}-${j}" name="multivalue" value="${key}"${o.selection.multivalue.has(key) ? html` checked` : ''}>
                        <label for="mv-${i}-${j}">multivalue<span class="visually-hidden"> for ${n.name}</span></label>`
                      : ''}</td>
                    <td>${n.description}</td>
                  </tr>`;
                })}</tbody>
              </table>`, `Names of ${d.name}`)}
            </fieldset>`,
          )}
        <div class="form-actions"><button type="submit">Generate control file</button></div>
      </form>`
    : ''}
`;
