import path from 'node:path';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AlertEvaluator } from '../../src/workers/alerts.evaluator.js';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, waitForEvents } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The dashboard's Alerts page and the settings' sections (issue 41, docs/dashboard.md) in
 * Chromium: an owner asks the question with the metrics page's filter bar and measure picker, sees
 * what it would have done over the last 30 days, creates it, and reads its checks drawn with the
 * threshold; the settings are one section at a time, reached from the keyboard, the digest among them.
 */
const server = useTestServer();
const browser = useBrowser();
const SCREENSHOTS = process.env.SCREENSHOTS_DIR;
const DAY = 24 * 3600 * 1000;
const tabs: DashboardTab[] = [];
let team: Awaited<ReturnType<typeof accountWithProject>>;

const midnight = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());

beforeAll(async () => {
  await server.workers?.alerts.stop();
  team = await accountWithProject(server, 'team', 'Alerting app');
  // Sign-ups: 2 a day over the last 12 days, 8 on the day 3 days ago (the spike), some on the pro plan.
  const events = [];
  for (let n = 1; n <= 12; n += 1) {
    for (let i = 0; i < (n === 3 ? 8 : 2); i += 1) {
      events.push({
        eventName: 'signup',
        userId: `u${n}-${i}`,
        timestamp: new Date(midnight - n * DAY + 12 * 3600 * 1000 + i * 1000).toISOString(),
        properties: { plan: i % 2 === 0 ? 'pro' : 'free' },
      });
    }
  }
  const r = await server.request('POST', '/api/v1/events/batch', { apiKey: team.apiKey, body: { events } });
  expect(r.status).toBe(200);
  await waitForEvents(
    server,
    team.token,
    team.projectId,
    `date_from=${new Date(midnight - 14 * DAY).toISOString().slice(0, 10)}`,
    events.length,
  );
});

afterAll(() => {
  for (const { problems } of tabs) expect(problems, 'console errors or CSP violations').toEqual([]);
});

async function signedIn(next: string) {
  const tab = await openTab(browser, VIEWPORTS.desktop);
  tabs.push(tab);
  await signIn(tab, server, team.token, next);
  return tab;
}

async function assertQuality(page: Page, what: string) {
  expect(await seriousViolations(page), what).toEqual([]);
  expect(
    await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    `${what} is wider than the screen`,
  ).toBeLessThanOrEqual(0);
}

describe('the Alerts page', () => {
  it('builds an alert with the filter bar and the measure picker, previews it, creates it and draws its checks with the threshold', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/metrics`);
    // Reached from the metrics page.
    await page.getByRole('link', { name: /Alerts: be told when a measure moves/ }).click();
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    await page.getByText('No alert yet.').waitFor();

    // The question, from the keyboard: the event, then a filter, then the measure.
    await page.getByLabel('Event', { exact: true }).fill('signup');
    const bar = page.getByRole('region', { name: 'Filters' });
    await bar.getByLabel('Property').focus();
    await page.keyboard.type('properties.plan');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('pro');
    await page.keyboard.press('Enter');
    await expect.poll(() => bar.getByTestId('alert-filter-chips').textContent()).toContain('plan is "pro"');
    await page.getByLabel('Measure', { exact: true }).selectOption('unique_event_users');
    await page.getByRole('button', { name: 'Use this measure' }).click();
    await expect.poll(() => page.getByTestId('alert-question').textContent()).toBe('Unique users of signup, 1 filter');

    await page.getByLabel('Name').fill('Pro sign-ups spike');
    await page.getByLabel('It fires when the value').selectOption('above');
    await page.getByLabel('Threshold').fill('2');
    await page.getByRole('button', { name: 'Would it have fired?' }).click();
    // 1 pro sign-up a day, 4 on the spike's day: it would have fired once (and resolved).
    await expect
      .poll(() => page.getByTestId('alert-preview-summary').textContent())
      .toBe('Over the last 30 days it would have fired 1 time.');
    expect(await page.getByTestId('alert-preview-changes').textContent()).toContain('would have started firing at 4');
    await page.locator('figure[data-drawn]').first().waitFor();
    await assertQuality(page, 'alert form with preview');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'alerts-form.png'), fullPage: true });

    await page.getByRole('button', { name: 'Create the alert' }).click();
    const row = page.getByTestId('alert-row');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toContain('Pro sign-ups spike');
    expect(await row.getByTestId('alert-state').textContent()).toBe('Not checked yet');
    const [alert] = (await server.request('GET', `/api/v1/projects/${team.projectId}/alerts`, { bearer: team.token })).body;
    expect(alert).toMatchObject({
      measure: 'unique_event_users',
      event: 'signup',
      filters: [{ property: 'properties.plan', op: 'eq', value: 'pro' }],
      condition: { type: 'above', value: 2 },
    });

    // The checks of the last days, on a test clock, drawn with the threshold.
    let clock = new Date(midnight - 6 * DAY);
    const evaluator = new AlertEvaluator(server.sql, server.clickhouse, pino({ level: 'silent' }), { now: () => clock });
    for (let n = 5; n >= 1; n -= 1) {
      clock = new Date(midnight - n * DAY + 2 * 60_000);
      await evaluator.runOnce();
    }
    await page.reload();
    await expect.poll(() => row.getByTestId('alert-state').textContent()).toBe('OK');
    await page.getByRole('button', { name: 'Check history of Pro sign-ups spike' }).click();
    const history = page.getByRole('region', { name: 'Checks of “Pro sign-ups spike”' });
    await history.locator('figure[data-drawn]').waitFor();
    expect(await history.locator('figcaption').textContent()).toContain('5 checks of Unique users, threshold is above 2');
    const changes = await history.getByTestId('check-changes').textContent();
    expect(changes).toContain('started firing at 4');
    expect(changes).toContain('resolved at 1');
    await assertQuality(page, 'alerts with history');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'alerts-history.png'), fullPage: true });

    // Send test: the value so far, the state unchanged.
    await page.getByRole('button', { name: 'Send test of Pro sign-ups spike' }).click();
    await expect.poll(() => page.getByTestId('alert-test-result').textContent()).toContain('So far this day: 0');
  });

  it('explains the plan gate on Free before anything is tried', async () => {
    const free = await accountWithProject(server, 'free', 'Free app');
    const tab = await openTab(browser, VIEWPORTS.phone);
    tabs.push(tab);
    await signIn(tab, server, free.token, `/projects/${free.projectId}/alerts`);
    await expect
      .poll(() => tab.page.getByRole('note', { name: 'Plan limit' }).textContent())
      .toContain('Alerts are part of the Pro and Team plans; this account is on the Free plan');
    expect(await tab.page.getByRole('button', { name: 'Create the alert' }).count()).toBe(0);
    await assertQuality(tab.page, 'alerts on Free, phone');
  });
});

describe('the settings, one section at a time', () => {
  it('moves between sections from the keyboard, each its own URL; the digest’s switch and the week so far', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/settings`);
    await page.getByRole('heading', { name: 'General', level: 2 }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Settings sections' });
    expect(await nav.getByRole('link').allTextContents()).toEqual([
      'General',
      'Widget and board',
      'Integrations and deliveries',
      'Alerts and digest',
      'Members',
      'Data',
    ]);
    await nav.getByRole('link', { name: 'Alerts and digest' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/section=alerts/);
    await page.getByRole('heading', { name: 'Weekly digest' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Alerts and digest' }).getAttribute('aria-current')).toBe('page');
    // The owner's digest is on by default; the week so far is shown.
    const toggle = page.getByLabel(/Send me the weekly digest/);
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await expect.poll(() => page.getByTestId('digest-preview').textContent()).toContain('new feedback');
    await toggle.focus();
    await page.keyboard.press('Space');
    await expect
      .poll(
        async () =>
          (await server.request('GET', `/api/v1/projects/${team.projectId}/digest/settings`, { bearer: team.token })).body.enabled,
      )
      .toBe(false);
    await assertQuality(page, 'settings: alerts and digest');
    // Each section is short: no more one long column.
    const height = await page.evaluate('document.documentElement.scrollHeight');
    expect(height).toBeLessThan(3000);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'settings-digest.png'), fullPage: true });
    await page.goBack();
    await page.getByRole('heading', { name: 'General', level: 2 }).waitFor();
  });

  it('pages the deliveries, 25 at a time, from the keyboard', async () => {
    const pro = await accountWithProject(server, 'pro', 'Paged app');
    const hook = await server.request('POST', `/api/v1/projects/${pro.projectId}/integrations`, {
      bearer: pro.token,
      body: { kind: 'webhook', url: 'http://127.0.0.1:9/paged' },
    });
    expect(hook.status).toBe(200);
    // 27 test messages: 27 deliveries (they fail at once: nobody may be reached on 127.0.0.1).
    for (let i = 0; i < 27; i += 1) {
      const r = await server.request('POST', `/api/v1/projects/${pro.projectId}/integrations/${hook.body.id}/test`, { bearer: pro.token });
      expect(r.status).toBe(200);
    }
    const tab = await openTab(browser, VIEWPORTS.desktop);
    tabs.push(tab);
    await signIn(tab, server, pro.token, `/projects/${pro.projectId}/settings?section=integrations`);
    const { page } = tab;
    const deliveries = page.getByRole('region', { name: 'Notification deliveries' });
    await expect.poll(() => deliveries.locator('tbody tr').count()).toBe(25);
    const pages = page.getByRole('navigation', { name: 'Delivery pages' });
    expect(await pages.getByRole('button', { name: 'Newer' }).isDisabled()).toBe(true);
    await pages.getByRole('button', { name: 'Older' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('delivery-page').textContent()).toBe('Page 2');
    await expect.poll(() => deliveries.locator('tbody tr').count()).toBe(2);
    expect(await pages.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    // The target is never broken mid-word.
    // (this file is compiled without the DOM's types)
    const whiteSpace = await deliveries
      .locator('td.recipient')
      .first()
      .evaluate(
        (td) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { whiteSpace: string } }).getComputedStyle(td).whiteSpace,
      );
    expect(whiteSpace).toBe('nowrap');
    await assertQuality(page, 'deliveries, page 2');
  });
});
