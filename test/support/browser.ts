// Headless Chromium for the web inspector's end-to-end tests: Debian's `chromium` (installed by .ci/run), driven by
// playwright-core. Screenshots go to test-artifacts/ (not in git) for a person to look at after a run.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { root } from './cli.js';

/** Where the tests find Chromium: Debian's package, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where screenshots are saved. */
export const ARTIFACTS = join(root, 'test-artifacts', 'web-inspector');

/** Starts headless Chromium, offline (no background traffic), without the sandbox when run as root (as in CI). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium), or set CHROMIUM_PATH.`);
  }
  const args = ['--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args });
}

/** Saves a screenshot of the page as test-artifacts/web-inspector/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** A page that fails the test on a script error in it. */
export async function openPage(browser: Browser, url: string, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(url);
  return page;
}
