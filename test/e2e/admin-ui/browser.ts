/**
 * Headless Chromium (Debian's `chromium` package) driven by playwright-core, for the end-to-end
 * tests of the admin interface and for the screenshots in docs/screenshots.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { TestService } from '../../support/service.ts';

export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why the browser cannot run here, or undefined when it can. */
export const chromiumMissing = (): string | undefined => (existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install -y chromium)`);

export interface Browser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** A fresh browser with its own new profile directory (--user-data-dir), removed on close. */
export const launchBrowser = async (viewport = { width: 1280, height: 800 }): Promise<Browser> => {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport,
    timeout: 60_000,
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    newPage: () => context.newPage(),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
};

/** Signs in through the sign-in form, as a person would. */
export const signIn = async (page: Page, svc: TestService): Promise<void> => {
  await page.goto(`${svc.url}/admin`);
  await page.getByLabel('Admin token').fill(svc.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/admin\/rest-apis$/);
};
