/**
 * The admin interface end to end in headless Chromium (playwright-core driving /usr/bin/chromium):
 * sign in, create a REST API from a generated control file, create its key, push with it and see
 * the object change, revoke it and see the push refused; CSRF attempts are refused; rebuild
 * progress updates live; the pages work from the keyboard.
 *
 * Without Chromium the suite prints one `skipped:` line and registers no tests.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { basic, call } from '../../support/fixtures.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { chromiumMissing, launchBrowser, type Browser } from './browser.ts';

interface Ctx {
  svc: TestService;
  browser: Browser;
  page: Page;
}

const pushTo = (svc: TestService, url: string, key: string, body: unknown) =>
  fetch(`${svc.url}/api/push-data/${url}`, { method: 'POST', headers: { Authorization: basic(key), 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

const jobTitleOf = async (svc: TestService, username: string): Promise<unknown[]> => {
  const user = await call(svc, `/api/admin/users/${username}`);
  const object = await call(svc, `/api/admin/objects/${user.body.profileRef}`);
  return (object.body.object.attributes['svc:attribute:job-title'] ?? []).map((v: { value: unknown }) => v.value);
};

const missing = chromiumMissing();
if (missing) {
  console.log(`skipped: admin UI browser tests (${missing})`);
} else {
  const test = suite<Ctx>('Admin UI in Chromium', {} as Ctx);

  test.before(async (ctx) => {
    ctx.svc = await startTestService();
    ctx.browser = await launchBrowser();
    await ctx.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.svc.url });
    ctx.page = await ctx.browser.newPage();
    ctx.page.on('dialog', (dialog) => void dialog.accept());
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.svc?.stop();
  });

  test('sign in from the keyboard: the token field has focus, Enter submits, Tab reaches the skip link', async ({ svc, page }) => {
    await page.goto(`${svc.url}/admin/users`);
    assert.match(page.url(), /\/admin\/sign-in\?next=%2Fadmin%2Fusers$/);
    assert.is(await page.evaluate('document.activeElement && document.activeElement.id'), 'f-token');
    await page.keyboard.type(svc.adminToken);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/admin\/users$/);
    assert.is(await page.getByRole('heading', { level: 1 }).textContent(), 'Users');
    await page.keyboard.press('Tab');
    assert.is(await page.evaluate('document.activeElement && document.activeElement.textContent'), 'Skip to content');
    await page.keyboard.press('Enter');
    assert.is(await page.evaluate('document.activeElement && document.activeElement.id'), 'main');
  });

  test('create a REST API from a generated control file, create a key, push, revoke, push refused', async ({ svc, page }) => {
    // A person whose profile the API will update.
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await page.getByLabel('User name').fill('alice');
    await page.getByLabel('First name').fill('Alice');
    await page.getByLabel('Last name').fill('Example');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.waitForURL(/\/admin\/users\/alice$/);
    await page.getByText('User alice created.').waitFor();

    // Generate a control file for the person model with the job title.
    await page.getByRole('link', { name: 'Generate control file' }).click();
    await page.getByLabel('Model').selectOption('svc:person');
    await page.getByRole('button', { name: 'Choose' }).click();
    await page.getByLabel('svc:attribute:job-title', { exact: true }).check();
    await page.getByRole('button', { name: 'Generate control file' }).click();
    const generated = await page.getByLabel('Control file (JSON)').inputValue();
    assert.match(generated, '"source": "TODO-JOB-TITLE"');
    assert.match(generated, '"source": "TODO-USERNAME"');

    // Start a new REST API with it, replacing the TODOs as the page asks.
    await page.getByRole('button', { name: 'Start a new REST API with this control file' }).click();
    await page.getByRole('heading', { name: 'New REST API' }).waitFor();
    const prefilled = await page.getByLabel('Control file').inputValue();
    assert.equal(JSON.parse(prefilled), JSON.parse(generated));
    const control = JSON.parse(prefilled.replace('TODO-USERNAME', 'username').replace('TODO-JOB-TITLE', 'jobTitle'));
    control.files.DEFAULT.singleRecord = true;
    await page.getByLabel('URL').fill('staff-jobs');
    await page.getByLabel('Description').fill('Job titles from HR');
    await page.getByLabel('Control file').fill(JSON.stringify(control, null, 2));
    await page.getByRole('button', { name: 'Create REST API' }).click();
    await page.waitForURL(/\/admin\/rest-apis\/staff-jobs$/);
    await page.getByText('REST API staff-jobs created.').waitFor();
    assert.match((await page.locator('#endpoint').textContent())!, /^http:\/\/localhost:\d+\/api\/push-data\/staff-jobs$/);
    assert.equal(JSON.parse((await page.locator('pre.code').first().textContent())!), control);

    // Create its key: shown once, with a working copy button.
    await page.getByRole('button', { name: 'Create API key' }).click();
    const keyField = page.getByRole('textbox', { name: 'The new API key' });
    const key = await keyField.inputValue();
    assert.match(key, /^[A-Za-z0-9_-]{44}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.is(await page.evaluate('navigator.clipboard.readText()'), key);

    // A real push with the key changes the person's profile.
    assert.equal(await jobTitleOf(svc, 'alice'), []);
    const pushed = await pushTo(svc, 'staff-jobs', key, { username: 'alice', jobTitle: 'Professor of Testing' });
    const result = (await pushed.json()) as { result: string; errors: string[] };
    assert.is(pushed.status, 200, JSON.stringify(result));
    assert.is(result.result, 'success');
    assert.equal(await jobTitleOf(svc, 'alice'), ['Professor of Testing']);
    // ... and the browser sees it too, through the admin API with its session cookie.
    await page.goto(`${svc.url}/admin/users/alice`);
    await page.locator('a[href^="/api/admin/objects/"]').click();
    assert.match((await page.textContent('body'))!, 'Professor of Testing');

    // Revoke the key on the API's page; the next push is refused.
    await page.goto(`${svc.url}/admin/rest-apis/staff-jobs`);
    await page.getByRole('button', { name: 'Revoke API key REST API: Job titles from HR' }).click();
    await page.getByText('API key "REST API: Job titles from HR" revoked.').waitFor();
    assert.is(await page.getByRole('button', { name: /^Revoke API key/ }).count(), 0);
    const refused = await pushTo(svc, 'staff-jobs', key, { username: 'alice', jobTitle: 'Emeritus' });
    assert.is(refused.status, 403);
    assert.equal(await jobTitleOf(svc, 'alice'), ['Professor of Testing']);
  });

  test('a control file with problems shows every message beside the field', async ({ svc, page }) => {
    await page.goto(`${svc.url}/admin/new-rest-api`);
    await page.getByLabel('URL').fill('broken');
    await page.getByLabel('Description').fill('Broken');
    const bad = { dataImportControlFileVersion: 0, model: 'svc:person', files: { DEFAULT: { read: 'json' } }, instructions: [{ action: 'new', destination: 'nowhere' }, { action: 'frobnicate' }] };
    await page.getByLabel('Control file').fill(JSON.stringify(bad));
    await page.getByRole('button', { name: 'Create REST API' }).click();
    const expected = await call(svc, '/api/admin/rest-apis', { method: 'POST', body: { url: 'broken', description: 'Broken', controlFile: bad } });
    assert.is(expected.status, 400);
    const shown = await page.locator('#f-controlFile-errors li').allTextContents();
    assert.equal(shown, expected.body.errors);
    assert.is(await page.getByLabel('Control file').getAttribute('aria-invalid'), 'true');
  });

  test('a CSRF attempt without the token is refused: forged same-site form, cross-site form, cookie-only API call', async ({ svc, page }) => {
    const before = await svc.engines.events.headPosition();
    // 1. A form without the token, submitted from a signed-in page (the cookie is sent).
    await page.goto(`${svc.url}/admin/rest-apis`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/admin/rest-apis') && r.request().method() === 'POST'),
      page.evaluate(`(() => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = '/admin/rest-apis';
        for (const [name, value] of [['url', 'forged'], ['description', 'Forged'], ['response', 'JSON'], ['controlFile', '{}']]) {
          const input = document.createElement('input');
          input.type = 'hidden'; input.name = name; input.value = value;
          form.appendChild(input);
        }
        document.body.appendChild(form);
        form.submit();
      })()`),
    ]);
    assert.is(response.status(), 403);
    await page.getByRole('heading', { name: 'Forbidden' }).waitFor();

    // 2. Another site's page that posts to the admin interface (the SameSite=Strict cookie is not sent).
    const attacker: Server = createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(`<!doctype html><form id="f" method="post" action="${svc.url}/admin/rest-apis">
        <input name="url" value="cross-site"><input name="description" value="x"><input name="csrf" value="guess">
        <input name="controlFile" value="{}"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      await page.waitForURL(/\/admin\/sign-in/);
    } finally {
      attacker.close();
    }

    // 3. The admin API from a signed-in page: the cookie alone does not do for a POST.
    await page.goto(`${svc.url}/admin/rest-apis`);
    const body = JSON.stringify({ url: 'by-script', description: 'By script', controlFile: { dataImportControlFileVersion: 0, model: 'svc:person', files: { DEFAULT: { read: 'json' } }, instructions: [] } });
    const statusOf = (headers: string) =>
      page.evaluate(`fetch('/api/admin/rest-apis', { method: 'POST', headers: ${headers}, body: ${JSON.stringify(body)} }).then((r) => r.status)`);
    assert.is(await statusOf(`{ 'Content-Type': 'application/json' }`), 403);
    assert.is(await svc.engines.events.headPosition(), before, 'nothing was written');
    for (const url of ['forged', 'cross-site', 'by-script']) assert.is((await call(svc, `/api/admin/rest-apis/${url}`)).status, 404, url);
    // With the page's token it is accepted.
    assert.is(await statusOf(`{ 'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content }`), 201);
  });

  test('projections: the rebuild button starts a rebuild and the page follows its progress live', async ({ svc, page }) => {
    await page.goto(`${svc.url}/admin/projections`);
    const row = page.locator('tr[data-projection="objects"]');
    await row.getByRole('button', { name: 'Rebuild projection objects' }).click();
    await page.getByText('Rebuild of objects started.').waitFor();
    // The script polls the admin API (with the session cookie) and rewrites the row until the rebuild is done.
    await row.getByText(/^Rebuilt: \d+ events read$/).waitFor({ timeout: 15_000 });
    assert.match((await row.locator('[data-field="state"]').textContent())!, /live|catching-up/);
    // Progress also moves without a page load: push events and watch the head change.
    const headBefore = Number((await row.locator('[data-field="head"]').textContent())!.replace(/\D/g, ''));
    await call(svc, '/api/admin/groups', { method: 'POST', body: { code: 'test:group:live', title: 'Live' } });
    const head = async () => Number((await row.locator('[data-field="head"]').textContent())!.replace(/\D/g, ''));
    const deadline = Date.now() + 10_000;
    while ((await head()) <= headBefore) {
      assert.ok(Date.now() < deadline, 'the head was not refreshed');
      await page.waitForTimeout(200);
    }
  });

  test('sign out: back to sign-in; admin pages need signing in again', async ({ svc, page }) => {
    await page.goto(`${svc.url}/admin/rest-apis`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    await page.goto(`${svc.url}/admin/rest-apis/staff-jobs`);
    assert.match(page.url(), /\/admin\/sign-in\?next=/);
    assert.is((await page.goto(`${svc.url}/api/admin/projections`))!.status(), 401);
  });

  test.run();
}
