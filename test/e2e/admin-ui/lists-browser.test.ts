/**
 * The admin interface's lists in headless Chromium (issue 16, item 6): paging through more than 50
 * REST APIs, searching, the object browser to an object's page and its events, the file list, and
 * the layout on a 390 px phone screen (a compact header, no sideways scrolling of the page).
 *
 * Without Chromium the suite prints one `skipped:` line and registers no tests.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { call, createObject, patchObject } from '../../support/fixtures.ts';
import { control } from '../../support/push-data.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { chromiumMissing, launchBrowser, signIn, type Browser } from './browser.ts';

interface Ctx {
  svc: TestService;
  browser: Browser;
  page: Page;
  project: string;
}

const TITLE = 'dc:attribute:title';
const CONTROL = control('TYPE:phd:type:project', [{ action: 'new', destination: 'object' }, { source: 'title', destination: 'object', name: TITLE }], {}, { read: 'tsv-with-name-row' });

/** The link texts of the first column of a table. */
const firstColumn = (page: Page, selector = 'table.data') => page.locator(`${selector} tbody th[scope="row"]`).allInnerTexts();

const missing = chromiumMissing();
if (missing) {
  console.log(`skipped: admin UI list browser tests (${missing})`);
} else {
  const test = suite<Ctx>('Admin UI lists in Chromium', {} as Ctx);

  test.before(async (ctx) => {
    ctx.svc = await startTestService();
    for (let i = 0; i < 57; i++) {
      const url = `feed-${String(i).padStart(2, '0')}`;
      const made = await call(ctx.svc, '/api/admin/rest-apis', { method: 'POST', body: { url, description: `Feed ${i} with a long description that a narrow screen must wrap or scroll`, controlFile: CONTROL } });
      assert.is(made.status, 201, JSON.stringify(made.body));
    }
    ctx.project = (await createObject(ctx.svc, 'phd:type:project', { [TITLE]: 'Quokka survey' })).ref;
    assert.is((await patchObject(ctx.svc, ctx.project, { attributes: { [TITLE]: 'Quokka survey, second edition' } })).status, 200);
    await createObject(ctx.svc, 'svc:type:department', { [TITLE]: 'Quantum department' });
    const stored = await ctx.svc.request('/api/admin/files?filename=report-with-a-rather-long-name.txt', { method: 'POST', body: 'hello', headers: { 'Content-Type': 'text/plain' } });
    assert.ok(stored.status === 201 || stored.status === 200, `file: ${stored.status}`);
    ctx.browser = await launchBrowser();
    ctx.page = await ctx.browser.newPage();
    await signIn(ctx.page, ctx.svc);
  });
  test.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.svc?.stop();
  });

  test('page through 57 REST APIs: 50, Next to the other 7, Previous back', async ({ svc, page }) => {
    await page.goto(`${svc.url}/admin/rest-apis`);
    const first = await firstColumn(page);
    assert.is(first.length, 50);
    assert.is(first[0]!.trim(), 'feed-00');
    assert.is((await page.locator('.pager .count').first().innerText()).trim(), '1–50 of 57 REST APIs');
    await page.getByRole('link', { name: 'Next →' }).first().click();
    await page.waitForURL(/after=/);
    assert.equal((await firstColumn(page)).map((s) => s.trim()), ['feed-50', 'feed-51', 'feed-52', 'feed-53', 'feed-54', 'feed-55', 'feed-56']);
    assert.is((await page.locator('.pager .count').first().innerText()).trim(), '51–57 of 57 REST APIs');
    await page.getByRole('link', { name: '← Previous' }).first().click();
    await page.waitForURL(/before=/);
    assert.equal((await firstColumn(page)).map((s) => s.trim()), first.map((s) => s.trim()));
  });

  test('search REST APIs: the form filters on the server, Clear returns to all', async ({ page }) => {
    await page.getByLabel('URL starts with').fill('feed-3');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=feed-3/);
    assert.equal((await firstColumn(page)).map((s) => s.trim()), Array.from({ length: 10 }, (_, i) => `feed-3${i}`));
    assert.is((await page.locator('.pager .count').first().innerText()).trim(), '1–10 of 10 REST APIs');
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.waitForURL(/\/admin\/rest-apis$/);
    assert.is((await firstColumn(page)).length, 50);
  });

  test('object browser: search by title, open the object, then its events', async ({ page, project }) => {
    await page.getByRole('link', { name: 'Objects', exact: true }).click();
    await page.waitForURL(/\/admin\/objects$/);
    await page.getByLabel('Title starts with').fill('Qu');
    await page.getByLabel('Type').selectOption('phd:type:project');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=Qu/);
    assert.equal((await firstColumn(page, '#objects')).map((s) => s.trim()), ['Quokka survey, second edition']);
    await page.getByRole('link', { name: 'Quokka survey, second edition' }).click();
    await page.waitForURL(new RegExp(`/admin/objects/${project}$`));
    assert.is(await page.getByRole('heading', { level: 1 }).innerText(), 'Quokka survey, second edition');
    await page.getByRole('link', { name: "The object's events" }).click();
    await page.waitForURL(/\/admin\/events\?stream=object-/);
    assert.equal(await page.locator('#events tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-revision'))), ['0', '1']);
    assert.match(await page.locator('#events').innerText(), 'ObjectCreated');
    assert.match(await page.locator('#events').innerText(), 'Quokka survey');
  });

  test('file list: the stored file with size, type and digest; its page offers a download', async ({ page }) => {
    await page.getByRole('link', { name: 'Files', exact: true }).click();
    await page.waitForURL(/\/admin\/files$/);
    const row = page.locator('#files tbody tr').first();
    const text = await row.innerText();
    assert.match(text, 'report-with-a-rather-long-name.txt');
    assert.match(text, '5 bytes');
    assert.match(text, 'text/plain');
    await row.getByRole('link').click();
    await page.waitForURL(/\/admin\/files\/[0-9a-f]{64}-5$/);
    const href = await page.locator('#download').getAttribute('href');
    assert.match(href ?? '', /^\/api\/v0-file\/download\/[0-9a-f]{64}\/5\/report-with-a-rather-long-name\.txt\?e=\d+&s=[0-9a-f]+$/);
    const got = await page.request.get(new URL(href!, page.url()).href);
    assert.is(got.status(), 200);
    assert.is(await got.text(), 'hello');
    assert.match(got.headers()['content-disposition'] ?? '', 'report-with-a-rather-long-name.txt');
  });

  test('390 px wide: the header takes at most 15% of the height; no page scrolls sideways; tables scroll in their box', async ({ svc, project }) => {
    const phone = await launchBrowser({ width: 390, height: 844 });
    try {
      const p = await phone.newPage();
      await signIn(p, svc);
      const paths = ['/admin/rest-apis', '/admin/rest-apis/feed-01', '/admin/objects', '/admin/files', '/admin/events', '/admin/users', '/admin/api-keys', '/admin/models', '/admin/projections', '/admin/new-rest-api',
        '/admin/models/svc%3Aperson', '/admin/control-files/generate?model=svc%3Aperson', `/admin/objects/${project}`, `/admin/events?stream=object-${project}`, '/admin/groups'];
      for (const path of paths) {
        await p.goto(`${svc.url}${path}`);
        const m = (await p.evaluate(
          `({ header: document.querySelector('.site-header').getBoundingClientRect().height, scroll: document.documentElement.scrollWidth, width: window.innerWidth })`,
        )) as { header: number; scroll: number; width: number };
        assert.is(m.width, 390, path);
        assert.ok(m.header <= 844 * 0.15, `${path}: header ${m.header}px high`);
        assert.ok(m.scroll <= 390, `${path}: page ${m.scroll}px wide`);
      }
      // Every section is still reachable: the nav row scrolls sideways within the header.
      await p.goto(`${svc.url}/admin/rest-apis`);
      await p.getByRole('link', { name: 'Projections', exact: true }).click();
      await p.waitForURL(/\/admin\/projections$/);
      await p.goto(`${svc.url}/admin/events`);
      const box = (await p.evaluate(
        `(() => { const b = document.querySelector('.table-scroll'); return { client: b.clientWidth, scroll: b.scrollWidth }; })()`,
      )) as { client: number; scroll: number };
      assert.ok(box.scroll > box.client, `the events table scrolls inside its box (${box.scroll} > ${box.client})`);
    } finally {
      await phone.close();
    }
  });

  test.run();
}
