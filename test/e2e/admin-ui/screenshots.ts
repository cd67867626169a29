/**
 * Screenshots of the admin interface's main pages (1280x800) for the README, in docs/screenshots/.
 * Not a test: `node --import tsx test/admin-ui/screenshots.ts`. Needs /usr/bin/chromium.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { projectRoot } from '../../../src/config/paths.ts';
import { call } from '../../support/fixtures.ts';
import { control } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { chromiumMissing, launchBrowser, signIn } from './browser.ts';

const out = join(projectRoot, 'docs', 'screenshots');

const seed = async (svc: TestService) => {
  const ok = async (path: string, body: unknown) => {
    const reply = await call(svc, path, { method: 'POST', body });
    if (reply.status >= 300) throw new Error(`${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  await ok('/api/admin/groups', { code: 'example:group:readers', title: 'Report readers', readLabels: ['svc:label:common'] });
  await ok('/api/admin/groups', { code: 'example:group:everything', title: 'Read everything', readAll: true });
  await ok('/api/admin/users', { username: 'alice', name: { first: 'Alice', last: 'Example' }, email: 'alice@example.org', groups: ['example:group:readers'] });
  await ok('/api/admin/users', { username: 'bob', name: { first: 'Bob', last: 'Sample' }, email: 'bob@example.org' });
  await ok('/api/admin/users/alice/api-keys', { name: 'Reporting dashboard', path: '/api/v0-reporting/' });
  const people = control('svc:person', [
    { source: 'username', destination: 'load:by-ref', name: 'ref', filters: ['svc:username-to-ref'] },
    { action: 'load', destination: 'profile', using: 'load:by-ref' },
    { source: 'jobTitle', destination: 'profile', name: 'svc:attribute:job-title' },
    { source: 'email', destination: 'profile', name: 'svc:attribute:email' },
  ]);
  await ok('/api/admin/rest-apis', { url: 'staff-profiles', description: 'Staff profile updates from HR', controlFile: people });
  await ok('/api/admin/rest-apis', {
    url: 'projects',
    description: 'PhD projects from the student records system',
    response: 'XML',
    controlFile: control('TYPE:phd:type:project', [{ action: 'new', destination: 'object' }, { source: 'title', destination: 'object', name: 'dc:attribute:title' }]),
  });
  await ok('/api/admin/rest-apis', { url: 'legacy-import', description: 'Old nightly import (retired)', enabled: false, controlFile: people });
  await ok('/api/admin/rest-apis/staff-profiles/api-keys', {});
  await ok('/api/admin/rest-apis/projects/api-keys', {});
};

const shot = async (page: Page, name: string) => {
  await page.screenshot({ path: join(out, `${name}.png`) });
  console.log(`docs/screenshots/${name}.png`);
};

const main = async () => {
  const missing = chromiumMissing();
  if (missing) {
    console.log(`skipped: screenshots need Chromium: ${missing}`);
    return;
  }
  mkdirSync(out, { recursive: true });
  const svc = await startTestService({ SVC_BASE_URL: 'https://svc.example.org' });
  const browser = await launchBrowser();
  try {
    await seed(svc);
    const page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${svc.url}/admin/sign-in`);
    await shot(page, 'sign-in');
    await signIn(page, svc);
    await shot(page, 'rest-apis');

    await page.getByRole('link', { name: 'staff-profiles' }).click();
    await shot(page, 'rest-api-details');
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByLabel('The new API key').waitFor();
    await shot(page, 'api-key-created');

    await page.goto(`${svc.url}/admin/rest-apis/projects/edit`);
    await page.getByLabel('Description').fill('');
    await page.getByLabel('Control file').fill(JSON.stringify({ dataImportControlFileVersion: 0, model: 'TYPE:phd:type:project', files: { DEFAULT: { read: 'json' } }, instructions: [{ action: 'new', destination: 'nowhere' }, { source: 'title', destination: 'object', name: 'no:such:name' }] }, null, 4));
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#problem').waitFor();
    await page.evaluate('window.scrollTo(0, 340)');
    await shot(page, 'rest-api-form-errors');

    await page.goto(`${svc.url}/admin/control-files/generate?model=svc%3Aperson`);
    for (const name of ['svc:attribute:job-title', 'svc:attribute:email', 'svc:attribute:telephone']) await page.getByLabel(name, { exact: true }).check();
    await page.getByLabel('multivalue for svc:attribute:email').check();
    await shot(page, 'generate-control-file-choose');
    await page.getByRole('button', { name: 'Generate control file' }).click();
    await page.getByLabel('Control file (JSON)').waitFor();
    await shot(page, 'generate-control-file');

    await page.goto(`${svc.url}/admin/models/svc%3Auser-sync`);
    await shot(page, 'model-explorer');
    await page.goto(`${svc.url}/admin/users`);
    await shot(page, 'users');
    await page.goto(`${svc.url}/admin/groups`);
    await shot(page, 'groups');
    await page.goto(`${svc.url}/admin/api-keys`);
    await shot(page, 'api-keys');
    await page.goto(`${svc.url}/admin/projections`);
    await page.getByRole('button', { name: 'Rebuild projection users' }).click();
    await page.getByText('Rebuild of users started.').waitFor();
    await shot(page, 'projections');
  } finally {
    await browser.close();
    await svc.stop();
  }
};

await main();
