import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtureDay, fixtureTime } from '../helpers/fixture-days.js';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The Paths page (issue 30) in Chromium against the real service: a Sankey drawing and tables of
 * paths computed from events tracked through the API, whose paths are known; a node's flows; the
 * keyboard; the empty, error and plan-gate states; and a shared URL reproducing the view.
 */
/**
 * UPDATE_SCREENSHOTS=1 writes the screenshots the docs show into docs/screenshots;
 * SCREENSHOTS_DIR=… writes them, and a few more to look at (hover, long names), there instead.
 */
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? path.resolve(import.meta.dirname, '../../docs/screenshots')
    : (process.env.SCREENSHOTS_DIR ?? null);
const MORE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? null : (process.env.SCREENSHOTS_DIR ?? null);
const isoDay = fixtureDay;
/** The fixture time (test/helpers/fixture-days.ts) `daysAgo` days ago (two by default), plus `seconds`. */
const at = (seconds: number, daysAgo = 2) => fixtureTime(daysAgo, seconds);

const server = useTestServer();
const browser = useBrowser();
let team: Awaited<ReturnType<typeof accountWithProject>>;
const tabs: DashboardTab[] = [];

/**
 * Each user's events, 10 s apart. From `home`, 4 steps at most, the paths are:
 * u1 home → product → checkout → purchase (its repeated home counts once), u2 home → product →
 * checkout, u3 home → product → home, u4 home → search → product, u6 home; u5 never opens home.
 */
const JOURNEYS: Record<string, string[]> = {
  u1: ['home', 'home', 'product', 'checkout', 'purchase'],
  u2: ['home', 'product', 'checkout'],
  u3: ['home', 'product', 'home'],
  u4: ['home', 'search', 'product'],
  u5: ['product', 'checkout'],
  u6: ['home'],
};

const LONG_JOURNEYS: Record<string, string[]> = {
  l1: ['opened_the_onboarding_checklist', 'connected_a_payment_provider_account', 'invited_the_first_team_member_by_email'],
  l2: ['opened_the_onboarding_checklist', 'skipped_the_payment_provider_step'],
};

/** The moves from `home`, depth 4, as the edges table lists them (most users first, then by step and names). */
const EDGE_ROWS = [
  ['1 → 2', 'home', 'product', '3', '60%'],
  ['2 → 3', 'product', 'checkout', '2', '66.7%'],
  ['1 → 2', 'home', 'search', '1', '20%'],
  ['2 → 3', 'product', 'home', '1', '33.3%'],
  ['2 → 3', 'search', 'product', '1', '100%'],
  ['3 → 4', 'checkout', 'purchase', '1', '50%'],
];

/** The nodes drawn, by step and name, with the users each label gives. */
const NODE_LABELS = {
  '1:home': ['home', '5'],
  '2:product': ['product', '3'],
  '2:search': ['search', '1'],
  '3:checkout': ['checkout', '2'],
  '3:home': ['home', '1'],
  '3:product': ['product', '1'],
  '4:purchase': ['purchase', '1'],
};

async function signedIn(next: string, viewport: { width: number; height: number } = VIEWPORTS.desktop, token = team.token) {
  const tab = await openTab(browser, viewport);
  tabs.push(tab);
  await signIn(tab, server, token, next);
  return tab;
}

const rowsOf = (page: Page, testId: string) =>
  page
    .getByTestId(testId)
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children, (c) => c.textContent),
      ),
    );

/** Every node of the drawing: its step:name and the name and count its label shows. */
const drawnNodes = (page: Page) =>
  page.locator('[data-node]').evaluateAll((groups) =>
    Object.fromEntries(
      groups.map((g) => {
        const element = g as unknown as {
          getAttribute(name: string): string;
          querySelectorAll(s: string): ArrayLike<{ textContent: string }>;
        };
        return [element.getAttribute('data-node'), Array.from(element.querySelectorAll('tspan'), (t) => t.textContent)];
      }),
    ),
  );

/** Moves the mouse onto the middle of a band (a straight band has no height for Playwright's hover). */
async function hoverBand(page: Page, move: string) {
  const point = (await page.evaluate(`(() => {
    const path = document.querySelector('[data-move="${move}"]');
    const middle = path.getPointAtLength(path.getTotalLength() / 2);
    const m = path.getScreenCTM();
    return { x: middle.x * m.a + m.e, y: middle.y * m.d + m.f };
  })()`)) as { x: number; y: number };
  await page.mouse.move(point.x, point.y);
}

async function assertQuality(page: Page, what: string) {
  expect(await seriousViolations(page), what).toEqual([]);
  expect(
    await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    `${what} is wider than the screen`,
  ).toBeLessThanOrEqual(0);
}

beforeAll(async () => {
  team = await accountWithProject(server, 'team', 'Paths app');
  const events = Object.entries(JOURNEYS).flatMap(([userId, names]) =>
    names.map((eventName, i) => ({ eventName, userId, timestamp: at(i * 10) })),
  );
  // Five days ago, on their own: names as long as real apps use, for the drawing's label room.
  for (const [userId, names] of Object.entries(LONG_JOURNEYS)) {
    events.push(...names.map((eventName, i) => ({ eventName, userId, timestamp: at(i * 10, 5) })));
  }
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: team.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}, 120_000);

afterAll(async () => {
  for (const { problems, requestedUrls } of tabs) {
    expect(problems, 'console errors or CSP violations').toEqual([]);
    for (const url of requestedUrls) expect(url).not.toContain(team.token);
  }
});

describe('paths', () => {
  it('draws the paths from an event as a Sankey and as tables, with the fixture’s numbers, at both screen sizes', async () => {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      const { page } = await signedIn(`/projects/${team.projectId}/paths`, viewport);
      // The page is in the navigation.
      expect(
        await page
          .getByRole('navigation', { name: 'Project pages' })
          .getByRole('link', { name: 'Paths', exact: true })
          .getAttribute('aria-current'),
      ).toBe('page');
      await page.getByLabel('Follow users').selectOption('start');
      await page.getByLabel('Start event').fill('home');
      await page.getByLabel('From', { exact: true }).fill(isoDay(6));
      await page.getByRole('button', { name: 'Show paths' }).click();

      await expect.poll(() => rowsOf(page, 'paths-edges')).toEqual(EDGE_ROWS);
      expect(await page.getByTestId('paths-summary').textContent()).toContain(
        '5 users with a path starting at home, 4 steps at most; 6 moves drawn.',
      );
      expect(await rowsOf(page, 'paths-top')).toEqual([
        ['home', '1', '20%'],
        ['home → product → checkout', '1', '20%'],
        ['home → product → checkout → purchase', '1', '20%'],
        ['home → product → home', '1', '20%'],
        ['home → search → product', '1', '20%'],
      ]);
      // The drawing: a node per (step, event) labelled with its users, bands as wide as their users.
      await expect.poll(() => page.getByTestId('paths-sankey').getAttribute('data-drawn')).toBe('7:6');
      expect(await drawnNodes(page)).toEqual(NODE_LABELS);
      const band = (move: string) => page.locator(`[data-move="${move}"]`).getAttribute('stroke-width').then(Number);
      expect((await band('2:home>product')) / (await band('2:home>search'))).toBeCloseTo(3, 5);
      // The first column's node is as tall as all 5 users: u6 stopped there.
      const height = (node: string) => page.locator(`[data-node="${node}"] rect`).getAttribute('height').then(Number);
      expect((await height('1:home')) / (await height('2:search'))).toBeCloseTo(5, 5);

      // Hover details on a band and on a node.
      await page.locator('[data-node="2:product"] rect').hover();
      await expect.poll(() => page.getByTestId('paths-tooltip').textContent()).toContain('product at step 23 users');
      await hoverBand(page, '3:product>checkout');
      if (MORE_SCREENSHOTS) await page.screenshot({ path: path.join(MORE_SCREENSHOTS, `paths-hover-${size}.png`) });
      await expect
        .poll(() => page.getByTestId('paths-tooltip').textContent())
        .toBe("product → checkoutStep 2 to 3: 2 users66.7% of product's users at step 2");

      // A click on a node: where its users came from and where they went.
      await page.locator('[data-node="2:product"] rect').click();
      const details = page.getByTestId('paths-details');
      await expect.poll(() => details.getByRole('heading', { level: 3 }).textContent()).toBe('product at step 2: 3 users');
      expect(await rowsOf(page, 'paths-before')).toEqual([['home', '3']]);
      expect(await rowsOf(page, 'paths-after')).toEqual([
        ['checkout', '2'],
        ['home', '1'],
      ]);
      expect(await page.locator('[data-node="2:product"]').getAttribute('aria-pressed')).toBe('true');
      // checkout at step 3: 2 came from product, 1 went on to purchase, 1 (u2) stopped there.
      await page.locator('[data-node="3:checkout"] rect').click();
      await expect.poll(() => details.getByRole('heading', { level: 3 }).textContent()).toBe('checkout at step 3: 2 users');
      expect(await rowsOf(page, 'paths-before')).toEqual([['product', '2']]);
      expect(await rowsOf(page, 'paths-after')).toEqual([
        ['purchase', '1'],
        ['(path ends here)', '1'],
      ]);
      await page.mouse.move(0, 0);
      // The drawing from its first column (the click scrolled a phone's to the selected bar).
      await page.getByTestId('paths-sankey').evaluate((frame) => {
        (frame as unknown as { scrollLeft: number }).scrollLeft = 0;
      });
      if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `paths-${size}.png`), fullPage: true });
      await assertQuality(page, `paths (${size})`);
    }
  });

  it('works from the keyboard: the form, Enter to compute, Tab to a node, Enter or Space to select it, Close', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/paths`);
    await page.getByRole('button', { name: 'Show paths' }).waitFor();
    // From the skip link, Tab reaches the form's first field.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    let steps = 0;
    while ((await page.evaluate('document.activeElement.id')) !== 'paths-anchor' && steps++ < 30) await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('paths-anchor');
    await page.keyboard.press('ArrowUp'); // from any event → ending at
    await page.keyboard.press('ArrowUp'); // → starting at
    expect(await page.getByLabel('Follow users').inputValue()).toBe('start');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('paths-event');
    await page.keyboard.type('home');
    await page.keyboard.press('Tab'); // steps
    await page.keyboard.press('ArrowDown'); // 4 → 5
    await page.keyboard.press('Tab'); // from
    await page.keyboard.press('Control+A');
    await page.keyboard.type(isoDay(6));
    await page.keyboard.press('Enter');
    await expect.poll(() => rowsOf(page, 'paths-edges')).toEqual(EDGE_ROWS);
    expect(new URL(page.url()).searchParams.get('depth')).toBe('5');

    // Tab on to the drawing's nodes, then select one with Enter and another with Space.
    steps = 0;
    while ((await page.evaluate('document.activeElement.getAttribute("data-node")')) !== '2:product' && steps++ < 40) {
      await page.keyboard.press('Tab');
    }
    expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('product 3 users, step 2');
    await expect.poll(() => page.getByTestId('paths-tooltip').textContent()).toContain('product at step 2');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => rowsOf(page, 'paths-after'))
      .toEqual([
        ['checkout', '2'],
        ['home', '1'],
      ]);
    await page.keyboard.press('Shift+Tab'); // back to 1:home
    expect(await page.evaluate('document.activeElement.getAttribute("data-node")')).toBe('1:home');
    await page.keyboard.press(' ');
    await expect
      .poll(() => page.getByTestId('paths-details').getByRole('heading', { level: 3 }).textContent())
      .toBe('home at step 1: 5 users');
    expect(await page.getByTestId('paths-details').textContent()).toContain('The paths begin here.');
    expect(await rowsOf(page, 'paths-after')).toEqual([
      ['product', '3'],
      ['search', '1'],
      ['(path ends here)', '1'],
    ]);
    // The details' Close button is reachable and closes them.
    await page.getByTestId('paths-details').getByRole('button', { name: 'Close' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('paths-details').count()).toBe(0);
    // The tables' regions take the focus, so they scroll from the keyboard on a narrow screen.
    expect(await page.getByRole('region', { name: 'Moves between events' }).getAttribute('tabindex')).toBe('0');
  });

  it('keeps the view in the URL: reloading it or opening it in another tab reproduces the request and the view', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/paths`);
    await page.getByLabel('Follow users').selectOption('start');
    await page.getByLabel('Start event').fill('home');
    await page.getByLabel('Steps', { exact: true }).selectOption('3');
    await page.getByLabel('From', { exact: true }).fill(isoDay(6));
    await page.getByLabel('To', { exact: true }).fill(isoDay(1));
    await page.getByLabel('Moves listed').fill('20');
    await page.getByLabel('Leave out events (comma-separated)').fill('search');
    await page.getByRole('button', { name: 'Show paths' }).click();
    // Without search, u4 is home → product: 4 users take that move.
    const expected = [
      ['1 → 2', 'home', 'product', '4', '80%'],
      ['2 → 3', 'product', 'checkout', '2', '50%'],
      ['2 → 3', 'product', 'home', '1', '25%'],
    ];
    await expect.poll(() => rowsOf(page, 'paths-edges')).toEqual(expected);
    await page.locator('[data-node="2:product"] rect').click();
    await page.getByTestId('paths-details').waitFor();
    const shared = new URL(page.url());
    expect(Object.fromEntries(shared.searchParams)).toEqual({
      start: 'home',
      depth: '3',
      from: isoDay(6),
      to: isoDay(1),
      limit: '20',
      exclude: 'search',
      node: '2:product',
    });

    // Each load asks the API the same question.
    const bodies: unknown[] = [];
    const record = (p: Page) =>
      p.on('request', (request) => {
        if (request.url().endsWith('/insights/paths')) bodies.push(request.postDataJSON());
      });
    record(page);
    await page.reload();
    await expect.poll(() => rowsOf(page, 'paths-edges')).toEqual(expected);
    // product at step 2: u1 and u2 go on to checkout, u3 back home, u4's path ends there.
    await expect
      .poll(() => rowsOf(page, 'paths-after'))
      .toEqual([
        ['checkout', '2'],
        ['home', '1'],
        ['(path ends here)', '1'],
      ]);
    expect(await page.getByLabel('Start event').inputValue()).toBe('home');
    expect(await page.getByLabel('Steps', { exact: true }).inputValue()).toBe('3');
    expect(await page.getByLabel('Leave out events (comma-separated)').inputValue()).toBe('search');

    // Another tab, signed in afresh, opening the shared link.
    const other = await signedIn(`${shared.pathname}${shared.search}`);
    await expect.poll(() => rowsOf(other.page, 'paths-edges')).toEqual(expected);
    record(other.page);
    await other.page.reload();
    await expect.poll(() => rowsOf(other.page, 'paths-edges')).toEqual(expected);
    await expect
      .poll(() => other.page.getByTestId('paths-details').getByRole('heading', { level: 3 }).textContent())
      .toBe('product at step 2: 4 users');
    const request = { startEvent: 'home', depth: 3, dateFrom: isoDay(6), dateTo: isoDay(1), limit: 20, excludeEvents: ['search'] };
    expect(bodies).toEqual([request, request]);

    // An end event from the URL: the last 2 names up to each user's last checkout.
    await other.page.goto(`${server.url}${shared.pathname}?end=checkout&depth=2&from=${isoDay(6)}&to=${isoDay(0)}`);
    await expect.poll(() => rowsOf(other.page, 'paths-edges')).toEqual([['1 → 2', 'product', 'checkout', '3', '100%']]);
    expect(await other.page.getByLabel('Follow users').inputValue()).toBe('end');
    expect(await other.page.getByLabel('End event').inputValue()).toBe('checkout');
  });

  it('gives every label room: long event names stay inside their column and the drawing, at both screen sizes', async () => {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      const { page } = await signedIn(
        `/projects/${team.projectId}/paths?start=opened_the_onboarding_checklist&depth=3&from=${isoDay(5)}&to=${isoDay(5)}`,
        viewport,
      );
      await expect.poll(() => page.getByTestId('paths-sankey').getAttribute('data-drawn')).toBe('4:3');
      // Each label ends before the next column's bars begin, and inside the drawing.
      const overlaps = await page.evaluate(`(() => {
        const svg = document.querySelector('[data-testid="paths-sankey"] svg');
        const width = Number(svg.getAttribute('width'));
        const nodes = [...svg.querySelectorAll('[data-node]')].map((g) => ({
          step: Number(g.getAttribute('data-node').split(':')[0]),
          x: Number(g.querySelector('rect').getAttribute('x')),
          right: g.querySelector('text').getBBox().x + g.querySelector('text').getBBox().width,
        }));
        return nodes.flatMap((node) => {
          const next = nodes.filter((other) => other.step === node.step + 1).map((other) => other.x);
          const limit = next.length > 0 ? Math.min(...next) : width;
          return node.right <= limit ? [] : [node.step + ': ' + node.right + ' > ' + limit];
        });
      })()`);
      expect(overlaps, size).toEqual([]);
      expect(await drawnNodes(page)).toEqual({
        '1:opened_the_onboarding_checklist': ['opened_the_onboarding_checklist', '2'],
        '2:connected_a_payment_provider_account': ['connected_a_payment_provider_account', '1'],
        '2:skipped_the_payment_provider_step': ['skipped_the_payment_provider_step', '1'],
        '3:invited_the_first_team_member_by_email': ['invited_the_first_team_member_by_email', '1'],
      });
      await assertQuality(page, `paths with long names (${size})`);
      if (MORE_SCREENSHOTS) await page.screenshot({ path: path.join(MORE_SCREENSHOTS, `paths-long-names-${size}.png`), fullPage: true });
    }
  });

  it('says when it is loading, when there is nothing to draw, when the request is refused, and the plan gate below Pro', async () => {
    const base = `/projects/${team.projectId}/paths`;
    const { page } = await signedIn(`${base}?start=home&from=${isoDay(20)}&to=${isoDay(10)}`, VIEWPORTS.phone);
    await page.getByText('No user did home in this range.').waitFor();
    // While the answer is on its way: the loading state, and the button waits.
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/insights/paths', async (route) => {
      await held;
      await route.continue();
    });
    await page.getByLabel('Steps', { exact: true }).selectOption('3');
    await page.getByRole('button', { name: 'Show paths' }).click();
    await page.getByRole('status').filter({ hasText: 'Loading the paths' }).waitFor();
    expect(await page.getByRole('button', { name: 'Show paths' }).isDisabled()).toBe(true);
    release();
    await page.getByText('No user did home in this range.').waitFor();
    await page.unroute('**/insights/paths');
    expect(await page.getByTestId('paths-edges').count()).toBe(0);
    await assertQuality(page, 'paths empty (phone)');

    // The start event cannot be left out: the API's 400 in words.
    await page.goto(`${server.url}${base}?start=home&exclude=home`);
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('The service refused the request');

    const free = await accountWithProject(server, 'free', 'Free paths app');
    const freeTab = await signedIn(`/projects/${free.projectId}/paths?start=purchase`, VIEWPORTS.desktop, free.token);
    const gate = freeTab.page.getByRole('note', { name: 'Plan limit' });
    await gate.waitFor();
    expect(await gate.textContent()).toContain('custom event "purchase" requires the Pro or Team plan');
    expect(await gate.textContent()).toContain('Paths through custom events are part of the Pro and Team plans');
    await assertQuality(freeTab.page, 'paths plan gate (desktop)');
    if (SCREENSHOTS) await freeTab.page.screenshot({ path: path.join(SCREENSHOTS, 'paths-plan-gate.png'), fullPage: true });
  });

  it('is a lazily loaded chunk: the first page does not bring the Sankey layout', async () => {
    const { page, requestedUrls } = await signedIn(`/projects/${team.projectId}/funnels`);
    await page.getByText('Choose two to ten steps').waitFor();
    const scriptsBefore = requestedUrls.filter((url) => url.endsWith('.js'));
    expect(scriptsBefore.some((url) => /\/assets\/paths-[^/]+\.js$/.test(url))).toBe(false);
    await page.getByRole('navigation', { name: 'Project pages' }).getByRole('link', { name: 'Paths', exact: true }).click();
    await page.getByRole('button', { name: 'Show paths' }).waitFor();
    expect(requestedUrls.some((url) => /\/assets\/paths-[^/]+\.js$/.test(url))).toBe(true);
  });
});
