import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixtureDay, fixtureTime } from '../helpers/fixture-days.js';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The insights pages (issue 24) in Chromium against the real service: a funnel and a retention
 * matrix computed from events tracked through the API, the live view receiving events as they are
 * tracked, and feature impact on an item's page from linking its events to adoption and MRR.
 */
/** UPDATE_SCREENSHOTS=1 also writes docs/screenshots/{funnels,retention,live,impact}.png. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
const isoDay = fixtureDay;
/** The fixture time (test/helpers/fixture-days.ts) `daysAgo` days ago, plus `seconds`. */
const at = (daysAgo: number, seconds = 0) => fixtureTime(daysAgo, seconds);

const server = useTestServer();
const browser = useBrowser();
let team: Awaited<ReturnType<typeof accountWithProject>>;
const tabs: DashboardTab[] = [];

type Tracked = { eventName: string; userId: string; timestamp: string; properties?: Record<string, unknown> };

async function track(apiKey: string, events: Tracked[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function signedIn(next: string, viewport: { width: number; height: number } = VIEWPORTS.desktop, token = team.token) {
  const tab = await openTab(browser, viewport);
  tabs.push(tab);
  await signIn(tab, server, token, next);
  return tab;
}

/** axe finds nothing serious or critical, and nothing is wider than the screen. */
async function assertQuality(page: Page, what: string) {
  expect(await seriousViolations(page), what).toEqual([]);
  expect(
    await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    `${what} is wider than the screen`,
  ).toBeLessThanOrEqual(0);
}

beforeAll(async () => {
  team = await accountWithProject(server, 'team', 'Insights app');
  // A 3-step funnel two days ago: 4 users sign up, 3 of them view pricing, 2 of them buy.
  // u1 views after 60 s and buys after 180 s; u2 after 120 s and 300 s; u3 views after 60 s.
  const plan = { u1: 'pro', u2: 'pro', u3: 'free', u4: 'free' } as const;
  const funnel: [keyof typeof plan, string, number][] = [
    ['u1', 'signed_up', 0],
    ['u1', 'viewed_pricing', 60],
    ['u1', 'purchased', 180],
    ['u2', 'signed_up', 0],
    ['u2', 'viewed_pricing', 120],
    ['u2', 'purchased', 300],
    ['u3', 'signed_up', 0],
    ['u3', 'viewed_pricing', 60],
    ['u4', 'signed_up', 0],
  ];
  // Retention of opened_app by day: r1, r2, r3 start 3 days ago; r1 and r2 come back the next day,
  // r1 the day after; r4 starts 2 days ago and comes back the next day.
  const opened: [string, number][] = [
    ['r1', 3],
    ['r2', 3],
    ['r3', 3],
    ['r1', 2],
    ['r2', 2],
    ['r4', 2],
    ['r1', 1],
    ['r4', 1],
  ];
  await track(team.apiKey, [
    ...funnel.map(([userId, eventName, seconds]) => ({ eventName, userId, timestamp: at(2, seconds), properties: { plan: plan[userId] } })),
    ...opened.map(([userId, daysAgo]) => ({ eventName: 'opened_app', userId, timestamp: at(daysAgo) })),
  ]);
  await server.eventsVisible();
}, 120_000);

afterAll(async () => {
  for (const { problems, requestedUrls } of tabs) {
    expect(problems, 'console errors or CSP violations').toEqual([]);
    for (const url of requestedUrls) expect(url).not.toContain(team.token);
  }
});

describe('funnels', () => {
  it('computes and draws a 3-step funnel from tracked events, with conversions, median times and a breakdown', async () => {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      const { page } = await signedIn(`/projects/${team.projectId}/funnels`, viewport);
      await page.getByText('Choose two to ten steps').waitFor();
      // The step names are offered from the project's event names.
      await expect
        .poll(() => page.locator('#funnel-event-names option').evaluateAll((options) => options.map((o) => (o as { value: string }).value)))
        .toEqual(expect.arrayContaining(['signed_up', 'viewed_pricing', 'purchased']));
      await page.getByLabel('Step 1 event').fill('signed_up');
      await page.getByLabel('Step 2 event').fill('viewed_pricing');
      await page.getByRole('button', { name: 'Add a step' }).click();
      await page.getByLabel('Step 3 event').fill('purchased');
      await page.getByLabel('From', { exact: true }).fill(isoDay(6));
      await page.getByLabel('Break down by property (optional)').fill('plan');
      await page.getByRole('button', { name: 'Compute funnel' }).click();

      const rows = page.getByTestId('funnel-steps').locator('tbody tr');
      await expect.poll(() => rows.count()).toBe(3);
      const cells = await rows.evaluateAll((trs) =>
        trs.map((tr) =>
          Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children, (c) => c.textContent),
        ),
      );
      expect(cells).toEqual([
        ['1. signed_up', '4', '100%', '—', '—'],
        ['2. viewed_pricing', '3', '75%', '75%', '1 min'],
        ['3. purchased', '2', '50%', '66.7%', '4 min'],
      ]);
      // The bar chart draws the same conversions.
      expect(await page.getByTestId('funnel-chart').locator('.funnel-bar-value').allTextContents()).toEqual(['100%', '75%', '50%']);
      const breakdown = await page
        .getByTestId('funnel-breakdown')
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) =>
            Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children, (c) => c.textContent),
          ),
        );
      expect(breakdown).toEqual(
        expect.arrayContaining([
          ['pro', '2', '2', '2', '100%'],
          ['free', '2', '1', '0', '0%'],
        ]),
      );
      await assertQuality(page, `funnels (${size})`);
      if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `funnels-${size}.png`), fullPage: true });
    }
  });

  it('works from the keyboard: type the steps, tab between them, Enter computes', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/funnels`);
    await page.getByLabel('Step 1 event').focus();
    await page.keyboard.type('signed_up');
    await page.keyboard.press('Tab'); // "Add a condition"
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('step-2');
    await page.keyboard.type('viewed_pricing');
    await page.keyboard.press('Enter');
    const users = page.getByTestId('funnel-steps').locator('tbody tr td:nth-child(2)');
    await expect.poll(() => users.allTextContents()).toEqual(['4', '3']);
  });

  it('explains a refusal: a custom step on the Free plan is the plan gate with its message', async () => {
    const free = await accountWithProject(server, 'free', 'Free app');
    const { page } = await signedIn(`/projects/${free.projectId}/funnels`, VIEWPORTS.desktop, free.token);
    await page.getByLabel('Step 1 event').fill('feedback_list');
    await page.getByLabel('Step 2 event').fill('purchased');
    await page.getByRole('button', { name: 'Compute funnel' }).click();
    const gate = page.getByRole('note', { name: 'Plan limit' });
    await gate.waitFor();
    expect(await gate.textContent()).toContain('custom event "purchased" requires the Pro or Team plan');
  });
  it('keeps the funnel in the URL: a shared link computes the same funnel, and back and reload follow the query', async () => {
    const base = `/projects/${team.projectId}/funnels`;
    // Step 2 only counts viewed_pricing with plan "free" (u3), who never purchased.
    const query = new URLSearchParams([
      ['step', 'signed_up'],
      ['step', 'viewed_pricing'],
      ['step', 'purchased'],
      ['where', '2:["plan","free"]'],
      ['window', '1h'],
      ['from', isoDay(6)],
      ['to', isoDay(0)],
    ]);
    const { page } = await signedIn(`${base}?${query}`);
    const users = page.getByTestId('funnel-steps').locator('tbody tr td:nth-child(2)');
    await expect.poll(() => users.allTextContents()).toEqual(['4', '1', '0']);
    const bodies: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/insights/funnel')) bodies.push(request.postDataJSON());
    });
    // The form shows what the URL says.
    expect(await page.getByLabel('Step 3 event').inputValue()).toBe('purchased');
    expect(await page.getByLabel('Step 2 condition 1 property').inputValue()).toBe('plan');
    expect(await page.getByLabel('Step 2 condition 1 value').inputValue()).toBe('free');
    expect(await page.getByLabel('Conversion window', { exact: true }).inputValue()).toBe('1');
    expect(await page.getByLabel('Conversion window unit').inputValue()).toBe('hours');

    // A change made in the form is a new URL; back returns to the shared one, fields included.
    await page.getByRole('button', { name: 'Remove condition 1 of step 2' }).click();
    await page.getByRole('button', { name: 'Compute funnel' }).click();
    await expect.poll(() => users.allTextContents()).toEqual(['4', '3', '2']);
    expect(new URL(page.url()).searchParams.getAll('where')).toEqual([]);
    await page.goBack();
    await expect.poll(() => users.allTextContents()).toEqual(['4', '1', '0']);
    expect(await page.getByLabel('Step 2 condition 1 value').inputValue()).toBe('free');
    expect(new URL(page.url()).search).toBe(`?${query}`);
    await page.reload();
    await expect.poll(() => users.allTextContents()).toEqual(['4', '1', '0']);

    // The changed funnel, then the shared one again after back and after the reload: the same question.
    const shared = {
      steps: [{ eventName: 'signed_up' }, { eventName: 'viewed_pricing', where: { plan: 'free' } }, { eventName: 'purchased' }],
      dateFrom: isoDay(6),
      dateTo: isoDay(0),
      conversionWindowSeconds: 3600,
    };
    expect(bodies).toEqual([{ ...shared, steps: [shared.steps[0], { eventName: 'viewed_pricing' }, shared.steps[2]] }, shared, shared]);
  });
});

describe('retention', () => {
  it('shows the cohort matrix as a heat map table with the expected counts', async () => {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      const { page } = await signedIn(`/projects/${team.projectId}/retention`, viewport);
      await page.getByLabel('Cohort event').fill('opened_app');
      await page.getByLabel('Return event').fill('opened_app');
      await page.getByLabel('By', { exact: true }).selectOption('day');
      await page.getByLabel('Periods', { exact: true }).fill('3');
      await page.getByLabel('From', { exact: true }).fill(isoDay(3));
      await page.getByLabel('To', { exact: true }).fill(isoDay(0));
      await page.getByRole('button', { name: 'Show cohorts' }).click();
      const matrix = page.getByTestId('retention-matrix');
      await matrix.waitFor();
      const cells = await matrix
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) =>
            Array.from((tr as unknown as { children: ArrayLike<{ textContent: string | null }> }).children, (c) => c.textContent).slice(1),
          ),
        );
      // Users, then day 0..3 with each share; a period that has not begun is an empty (hatched)
      // cell, today's (begun, not over) keeps its count hatched and says so (issue 38); a cohort
      // nobody joined says so instead of drawing a row of zeros (issue 28 part 4).
      expect(cells).toEqual([
        ['3', '3100%', '266.7%', '133.3%', '00% (period not over yet: so far)'],
        ['1', '1100%', '1100%', '00% (period not over yet: so far)', 'not measurable yet'],
        ['0', 'No user joined this day.'],
        ['0', 'No user joined this day.'],
      ]);
      expect(await page.locator('.heat-legend').textContent()).toContain('Hatched cells: periods not over yet.');
      // The matrix is a real table: column and row headers name each cell.
      expect(await matrix.getByRole('columnheader').allTextContents()).toEqual(['Cohort', 'Users', 'Day 0', 'Day 1', 'Day 2', 'Day 3']);
      await assertQuality(page, `retention (${size})`);
      if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `retention-${size}.png`), fullPage: true });
    }
  });
  it('keeps the cohorts in the URL: the submitted form is a link that shows the same matrix after a reload or in another tab', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/retention`);
    await page.getByLabel('Cohort event').fill('opened_app');
    await page.getByLabel('Return event').fill('opened_app');
    await page.getByLabel('By', { exact: true }).selectOption('day');
    await page.getByLabel('Periods', { exact: true }).fill('3');
    await page.getByLabel('From', { exact: true }).fill(isoDay(3));
    await page.getByLabel('To', { exact: true }).fill(isoDay(0));
    await page.getByRole('button', { name: 'Show cohorts' }).click();
    const sizes = (p: Page) => p.getByTestId('retention-matrix').locator('tbody tr td:nth-child(2)').allTextContents();
    await expect.poll(() => sizes(page)).toEqual(['3', '1', '0', '0']);
    const shared = new URL(page.url());
    expect(Object.fromEntries(shared.searchParams)).toEqual({
      cohort: 'opened_app',
      return: 'opened_app',
      interval: 'day',
      periods: '3',
      from: isoDay(3),
      to: isoDay(0),
    });
    await page.reload();
    await expect.poll(() => sizes(page)).toEqual(['3', '1', '0', '0']);
    expect(await page.getByLabel('Cohort event').inputValue()).toBe('opened_app');
    expect(await page.getByLabel('Periods', { exact: true }).inputValue()).toBe('3');

    const other = await signedIn(`${shared.pathname}${shared.search}`, VIEWPORTS.phone);
    await expect.poll(() => sizes(other.page)).toEqual(['3', '1', '0', '0']);
    expect(await other.page.getByTestId('retention-matrix').getByRole('columnheader').allTextContents()).toEqual([
      'Cohort',
      'Users',
      'Day 0',
      'Day 1',
      'Day 2',
      'Day 3',
    ]);
    // Without a query the page is the empty form again, nothing computed.
    await other.page.goto(`${server.url}${shared.pathname}`);
    await other.page.getByText('Choose the events and the interval').waitFor();
  });
});

describe('live', () => {
  it('shows events tracked through the API within 2 s, pauses and resumes', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/live`);
    await page.getByText('Live: new events appear at the top.').waitFor();
    await page.getByText('Waiting for events').waitFor();
    const started = Date.now();
    const tracked = await server.request('POST', '/api/v1/events/track', {
      apiKey: team.apiKey,
      body: { eventName: 'live_check', userId: 'watcher-1', properties: { n: 1 } },
    });
    expect(tracked.status).toBe(200);
    await page.getByTestId('live-events').getByRole('cell', { name: 'live_check' }).waitFor({ timeout: 2000 });
    const latency = Date.now() - started;
    console.log(`live view: an event tracked through the API was on the page ${latency} ms later`);
    expect(latency).toBeLessThan(2000);
    await expect.poll(() => page.getByTestId('sparkline-summary').textContent()).toContain('1 events in the last 30 minutes');

    // Paused, new events are held back; resumed, they show at the top.
    await page.getByRole('button', { name: 'Pause' }).click();
    await server.request('POST', '/api/v1/events/track', { apiKey: team.apiKey, body: { eventName: 'while_paused', userId: 'watcher-2' } });
    await page.getByText('Paused: 1 new events held back').waitFor();
    expect(await page.getByRole('cell', { name: 'while_paused' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume' }).click();
    const firstEvent = page.getByTestId('live-events').locator('tbody tr').first().locator('td').nth(1);
    await expect.poll(() => firstEvent.textContent()).toBe('while_paused');
    // Counts are whole: with 4 events in a minute uPlot's own steps labelled a tick 2.5.
    for (const n of [2, 3]) {
      await server.request('POST', '/api/v1/events/track', {
        apiKey: team.apiKey,
        body: { eventName: 'live_check', userId: `watcher-${n}` },
      });
    }
    await expect.poll(() => page.getByTestId('sparkline-summary').textContent()).toContain('4 events in the last 30 minutes');
    const ticks = ((await page.locator('figure.sparkline').getAttribute('data-y-ticks')) ?? '').split(' ').map(Number);
    expect(
      ticks.filter((tick) => !Number.isInteger(tick)),
      `ticks ${ticks.join(', ')}`,
    ).toEqual([]);
    expect(ticks.length, `ticks ${ticks.join(', ')}`).toBeGreaterThan(1);
    await assertQuality(page, 'live (desktop)');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'live.png'), fullPage: true });
    // Leaving the page closes its stream and frees its slot.
    await page.close();
  });

  it('says when the stream is refused: more streams than the account may open get the wait notice', async () => {
    const pages: Page[] = [];
    // LIVE_MAX_CONNECTIONS_PER_ACCOUNT is 5: the sixth page is refused with 429.
    for (let i = 0; i < 6; i++) {
      const { page } = await signedIn(`/projects/${team.projectId}/live`);
      pages.push(page);
    }
    const last = pages[5]!;
    await last.getByText('Too many requests').waitFor();
    for (const page of pages.slice(0, 5)) await page.close();
    // Once a slot is free again, retrying connects.
    await last.getByRole('button', { name: /Retry now/ }).click({ timeout: 15_000 });
    await last.getByText('Live: new events appear at the top.').waitFor();
    await last.close();
  });
});

describe('feature impact', () => {
  it('links events to an item, shows not shipped, then after completing it: adoption among voters, their MRR and the ship date', async () => {
    const project = await accountWithProject(server, 'team', 'Impact app');
    for (const [userId, mrr] of [
      ['v1', 10],
      ['v2', 20],
      ['v3', 30],
    ] as const) {
      await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId, mrr } });
    }
    const item = await createFeedback(server, project.apiKey, 'Export as PDF', { userId: 'v1' });
    for (const userId of ['v2', 'v3']) {
      await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId } });
    }
    await track(project.apiKey, [{ eventName: 'exported_pdf', userId: 'v2', timestamp: at(3) }]);
    await server.eventsVisible();

    const { page } = await signedIn(`/projects/${project.projectId}/feedback/${item.id}`, VIEWPORTS.desktop, project.token);
    const impact = page.getByRole('region', { name: 'Feature impact' });
    await impact.getByLabel('Event name').fill('exported_pdf');
    await impact.getByLabel('Event name').press('Enter');
    await impact.getByRole('button', { name: 'Save linked events' }).click();
    await impact.getByTestId('impact-not-shipped').waitFor();
    expect(await impact.getByTestId('impact-not-shipped').textContent()).toContain('its 3 voters');
    const linked = await server.request('GET', `/api/v1/projects/${project.projectId}/feedbacks/${item.id}/impact`, {
      bearer: project.token,
    });
    expect(linked.body.event_names).toEqual(['exported_pdf']);

    await page.getByLabel('New status').selectOption('completed');
    await page.getByRole('button', { name: 'Save status' }).click();
    await page.getByText('Saved.').waitFor();
    let shippedAt = '';
    await expect
      .poll(
        async () => {
          const answer = await server.request('GET', `/api/v1/projects/${project.projectId}/feedbacks/${item.id}/impact`, {
            bearer: project.token,
          });
          shippedAt = answer.body.shipped_at ?? '';
          return shippedAt;
        },
        { timeout: 60_000 },
      )
      .not.toBe('');
    // After shipping, v1 and v3 use the feature; v2 does not; someone else opens the app.
    const after = new Date(Math.max(Date.parse(shippedAt) + 1000, Date.now())).toISOString();
    await track(project.apiKey, [
      { eventName: 'exported_pdf', userId: 'v1', timestamp: after },
      { eventName: 'exported_pdf', userId: 'v3', timestamp: after },
      { eventName: 'opened_app', userId: 'someone', timestamp: after },
    ]);
    await server.eventsVisible();
    await page.reload();
    const tile = (id: string) => impact.getByTestId(`impact-${id}`);
    await tile('voters-adopted').waitFor();
    expect(await tile('voters').textContent()).toBe('3');
    expect(await tile('voters-adopted').textContent()).toBe('2');
    expect(await tile('voters-adopted-mrr').textContent()).toBe('$40.00');
    expect(await tile('adoption-share').textContent()).toBe('66.7%');
    expect(await tile('users-before-after').textContent()).toBe('1 / 2');
    // The before/after chart is drawn with the ship date marked.
    await expect.poll(() => impact.locator('figure.chart').getAttribute('data-drawn')).toBe('day:61:marks=1');
    expect(await impact.locator('figure.chart figcaption').textContent()).toContain('shipped on');
    await assertQuality(page, 'feature impact (desktop)');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'impact.png'), fullPage: true });

    // The metrics chart marks the ship date, and names the item.
    await page.goto(`${server.url}/projects/${project.projectId}/metrics`);
    await page.getByTestId('ship-dates').getByRole('link', { name: 'Export as PDF' }).waitFor();
    await expect.poll(() => page.locator('figure.chart').getAttribute('data-drawn')).toMatch(/^day:30:marks=1$/);
  });

  it('on Free, a linked custom event is the plan gate with its message, and the links can still be changed', async () => {
    const free = await accountWithProject(server, 'free', 'Free impact app');
    const item = await createFeedback(server, free.apiKey, 'Calendar sync');
    const put = await server.request('PUT', `/api/v1/projects/${free.projectId}/feedbacks/${item.id}/impact`, {
      bearer: free.token,
      body: { eventNames: ['synced_calendar'] },
    });
    expect(put.status).toBe(200);
    const { page } = await signedIn(`/projects/${free.projectId}/feedback/${item.id}`, VIEWPORTS.phone, free.token);
    const impact = page.getByRole('region', { name: 'Feature impact' });
    const gate = impact.getByRole('note', { name: 'Plan limit' });
    await gate.waitFor();
    expect(await gate.textContent()).toContain('custom event "synced_calendar" requires the Pro or Team plan');
    await impact.getByRole('button', { name: 'Change linked events' }).click();
    await impact.getByLabel('Event name').fill('feedback_detail');
    await impact.getByRole('button', { name: 'Add event' }).click();
    await impact.getByRole('button', { name: 'Save linked events' }).click();
    await impact.getByTestId('impact-not-shipped').waitFor();
    await assertQuality(page, 'feature impact plan gate (phone)');
  });
});
