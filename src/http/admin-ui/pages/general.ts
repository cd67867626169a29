/** Sign-in and the error pages. */
import { html, type Html } from '../html.ts';
import { pageHeading, problemBox, type Problem } from '../layout.ts';

export const signInPage = (o: { csrf: string; next: string; error?: string; notice?: string }): Html => html`
  <div class="narrow">
    <h1>Sign in</h1>
    <p>Sign in with the service's admin token. It is in <code>&lt;SVC_DATA_DIR&gt;/admin-token</code> unless <code>SVC_ADMIN_TOKEN</code> is set.</p>
    ${o.notice ? html`<div class="notice notice-success" role="status">${o.notice}</div>` : ''}
    ${o.error ? html`<div class="notice notice-error" role="alert" id="sign-in-error">${o.error}</div>` : ''}
    <form method="post" action="/admin/sign-in" class="stacked">
      <input type="hidden" name="csrf" value="${o.csrf}">
      <input type="hidden" name="next" value="${o.next}">
      <div class="field${o.error ? ' has-errors' : ''}">
        <label for="f-token">Admin token</label>
        <input type="password" id="f-token" name="token" required autocomplete="current-password" spellcheck="false"${o.error ? html` aria-invalid="true" aria-describedby="sign-in-error"` : ''} autofocus>
      </div>
      <div class="form-actions"><button type="submit">Sign in</button></div>
    </form>
  </div>
`;

export const forbiddenPage = (reason: string): Html => html`
  ${pageHeading('Forbidden')}
  <div class="notice notice-error" role="alert"><p>${reason}</p></div>
  <p>Go back, reload the page and try again. <a href="/admin">Admin home</a></p>
`;

export const notFoundPage = (what: string): Html => html`
  ${pageHeading('Not found')}
  <p>${what}</p>
  <p><a href="/admin">Admin home</a></p>
`;

export const problemPage = (problem: Problem, back?: { href: string; label: string }): Html => html`
  ${pageHeading(problem.status === 404 ? 'Not found' : 'That did not work')}
  ${problemBox(problem, 'What went wrong')}
  ${back ? html`<p><a href="${back.href}">${back.label}</a></p>` : html`<p><a href="/admin">Admin home</a></p>`}
`;
