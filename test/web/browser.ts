import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { WEB_DIST_DIR } from '../../src/api/web/web-static.js';
import { provide, stopWhenDone } from '../helpers/lifecycle.js';
import type { TestServer } from '../helpers/server.js';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * Timeouts of the browser tests (vi.setConfig at the top of each file). A test is a whole
 * owner's task, several pages long, on a machine running other test files beside it: 90 s. A
 * polled expectation waits as long as a Playwright locator does (15 s): the default second is
 * shorter than one page load on a loaded machine, and a poll that gives up before the page has
 * drawn what it asserts is the flakiness these tests must not have.
 */
export const BROWSER_TEST_TIMEOUTS = { testTimeout: 90_000, expect: { poll: { timeout: 15_000 } } } as const;

export function assertPrerequisites() {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  if (!existsSync(path.join(WEB_DIST_DIR, 'index.html'))) throw new Error('the dashboard is not built: npm run build:web');
}

/**
 * Chromium for the tests of this file or describe block (call it there): launched before them,
 * closed after them with every tab they opened (lifecycle.ts).
 */
export function useBrowser(): Browser {
  return provide('browser', launchChromium, (browser) => browser.close());
}

/**
 * A headless Chromium, closed when the test that launched it finishes, or, launched in a hook,
 * after the file (closing it earlier is allowed).
 */
export async function launchChromium(): Promise<Browser> {
  assertPrerequisites();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  stopWhenDone(() => browser.close());
  return browser;
}

export type DashboardTab = {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors, CSP violations included: a test ends by asserting none. */
  problems: string[];
  /** Every URL the page requested: a token must never appear in one. */
  requestedUrls: string[];
};

/** A fresh tab (its own session storage) at `viewport`, recording problems. */
export async function openTab(browser: Browser, viewport: { width: number; height: number } = VIEWPORTS.desktop): Promise<DashboardTab> {
  const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const requestedUrls: string[] = [];
  page.on('console', (message) => {
    // A 4xx the page asked for on purpose is logged by Chromium as a failed resource; the pages
    // explain those themselves. Everything else at error level is a problem.
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
      problems.push(message.text());
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => requestedUrls.push(request.url()));
  return { context, page, problems, requestedUrls };
}

/** Signs in through the sign-in page, as an owner would. */
export async function signIn(tab: DashboardTab, server: TestServer, token: string, next = '/projects') {
  await tab.page.goto(`${server.url}/signin?next=${encodeURIComponent(next)}`);
  await tab.page.getByLabel('Admin or member token').fill(token);
  await tab.page.getByRole('button', { name: 'Sign in' }).click();
  await tab.page.waitForURL((url) => url.pathname === next.split('?')[0]);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/**
 * axe-core on the current page; returns the serious and critical violations. Injected through
 * the DevTools protocol (evaluate), which the page's CSP does not govern: the CSP stays on.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string, run in the page: this file is compiled without the DOM's types.
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map((n) => ({ target: n.target })) })))`)) as AxeViolation[];
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
