/** Projections: state, lag, and blue/green rebuilds with their progress. */
import type { ProjectionStatus } from '../../../projections/runner.ts';
import { html, seg, type Html } from '../html.ts';
import { badge, pageHeading, postButton } from '../layout.ts';
import { scrollBox } from './lists.ts';

const STATE_VARIANT: Readonly<Record<string, string>> = { live: 'ok', failed: 'error', rebuilding: 'info', 'catching-up': 'info', starting: 'muted', stopped: 'muted' };

export const rebuildRunning = (p: ProjectionStatus) => !!p.rebuild && !p.rebuild.error && (p.rebuild.phase === 'building' || p.rebuild.phase === 'switching');

const number = (n: number) => n.toLocaleString('en-GB');

/** The rebuild cell's words; admin.js writes the same words when it refreshes the cell. */
export const rebuildText = (p: ProjectionStatus): string => {
  const r = p.rebuild;
  if (!r) return 'Not rebuilt since the service started';
  if (r.error) return `Rebuild failed: ${r.error}`;
  const pct = r.head > 0 ? Math.min(100, Math.floor((r.position / r.head) * 100)) : 0;
  switch (r.phase) {
    case 'building':
      return `Rebuilding: ${number(r.processed)} events read, ${pct}% of the log${r.eventsPerSecond ? `, ${number(Math.round(r.eventsPerSecond))} events/s` : ''}${r.etaSeconds !== null ? `, about ${Math.ceil(r.etaSeconds)} s left` : ''}`;
    case 'switching':
      return 'Switching the rebuilt read model in…';
    case 'done':
      return `Rebuilt: ${number(r.processed)} events read`;
    case 'interrupted':
      return `Rebuild interrupted after ${number(r.processed)} events; start it again to resume`;
  }
};

const progress = (p: ProjectionStatus): Html => {
  const r = p.rebuild;
  const running = rebuildRunning(p);
  return html`<div class="rebuild" data-field="rebuild">
    ${running && r ? html`<progress max="${Math.max(r.head, 1)}" value="${r.position}" aria-label="Rebuild progress of ${p.name}"></progress>` : ''}
    <span class="rebuild-text">${rebuildText(p)}</span>
  </div>`;
};

export const projectionsPage = (o: { projections: readonly ProjectionStatus[]; csrf: string }): Html => html`
  ${pageHeading('Projections')}
  <p class="lead">Read models folded from the event log. Lag is how far each is behind the head of the log. A rebuild folds the whole log
    into fresh copies while the live read model keeps serving, then switches them in.</p>
  ${scrollBox(html`<table class="data" id="projections" data-live="${o.projections.some(rebuildRunning) ? 'rebuilding' : 'idle'}">
    <caption class="visually-hidden">Projections</caption>
    <thead><tr><th scope="col">Projection</th><th scope="col">State</th><th scope="col" class="num">Checkpoint</th><th scope="col" class="num">Head</th><th scope="col" class="num">Lag</th><th scope="col">Rebuild</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${o.projections.map(
      (p) => html`<tr data-projection="${p.name}">
        <th scope="row"><code>${p.name}</code></th>
        <td data-field="state">${badge(p.state, STATE_VARIANT[p.state] ?? '')}${p.lastError ? html`<div class="error-text">${p.lastError}</div>` : ''}</td>
        <td class="num" data-field="checkpoint">${number(p.checkpoint)}</td>
        <td class="num" data-field="head">${number(p.head)}</td>
        <td class="num" data-field="lag">${number(p.lag)}</td>
        <td>${progress(p)}</td>
        <td>${postButton({
          action: `/admin/projections/${seg(p.name)}/rebuild`,
          label: 'Rebuild',
          csrf: o.csrf,
          className: 'button-small',
          ariaLabel: `Rebuild projection ${p.name}`,
          confirm: `Rebuild ${p.name} from the whole event log?`,
        })}</td>
      </tr>`,
    )}</tbody>
  </table>`, 'Projections')}
  <p class="hint" id="live-status" role="status" aria-live="polite">${o.projections.some(rebuildRunning) ? 'A rebuild is running; this page updates itself.' : ''}</p>
`;
