import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { fixtureTime, NOW } from '../helpers/fixture-days.js';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The analytics pages of issue 38 section 5 in Chromium against the real service: the SDK users
 * table (email, name, search) and a user's page, the metrics page (one event, week and month,
 * today's ship marks, one date format), the live view filled from the store, retention's
 * unfinished periods hatched, the funnel's headers as written. Values come from the fixture below.
 */
const SCREENSHOTS = process.env.SCREENSHOTS_DIR ?? (process.env.UPDATE_SCREENSHOTS ? path.resolve('docs/screenshots') : undefined);
const DAY_MS = 86_400_000;
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

async function signedIn(next: string, viewport: { width: number; height: number } = VIEWPORTS.desktop) {
  const tab = await openTab(browser, viewport);
  tabs.push(tab);
  await signIn(tab, server, team.token, next);
  return tab;
}

/** A computed style of the element (this file is compiled without the DOM's types). */
const styleOf = (element: Locator, name: 'textTransform' | 'backgroundImage') =>
  element.evaluate(
    (node, property) =>
      (globalThis as unknown as { getComputedStyle: (e: unknown) => Record<string, string> }).getComputedStyle(node)[property] ?? '',
    name,
  );

async function assertQuality(page: Page, what: string) {
  expect(await seriousViolations(page), what).toEqual([]);
  expect(
    await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    `${what} is wider than the screen`,
  ).toBeLessThanOrEqual(0);
}

/*
 * The fixture: five users over the last 10 days. Each day d (9 … 0 days ago) user USERS[d % 5]
 * signs in (on ios when d is odd, else android), so each user's first sign-in is 9 … 5 days ago; every user checks out on days 8 and 1 with a duration and a platform; ada and grace are
 * registered with their email and name.
 */
const USERS = ['ada', 'grace', 'alan', 'edsger', 'barbara'];
const SIGN_INS = Array.from({ length: 10 }, (_, d) => ({
  eventName: 'signed_in',
  userId: USERS[d % 5] as string,
  timestamp: at(d, 60),
  properties: { platform: d % 2 ? 'ios' : 'android' },
}));
const CHECKOUTS = [8, 1].flatMap((d) =>
  USERS.map((userId, i) => ({
    eventName: 'checkout',
    userId,
    timestamp: at(d, 120 + i),
    properties: { plan: i < 2 ? 'pro' : 'free', duration_ms: 100 * (i + 1), platform: i % 2 ? 'ios' : 'android' },
  })),
);

beforeAll(async () => {
  team = await accountWithProject(server, 'team', 'Analytics app');
  for (const body of [
    { userId: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', mrr: 30 },
    { userId: 'grace', email: 'grace@navy.example', name: 'Grace Hopper' },
  ]) {
    expect((await server.request('POST', '/api/v1/users/register', { apiKey: team.apiKey, body })).status).toBe(200);
  }
  await track(team.apiKey, [...SIGN_INS, ...CHECKOUTS]);
  await server.eventsVisible();
}, 120_000);

afterAll(async () => {
  for (const { problems, requestedUrls } of tabs) {
    expect(problems, 'console errors or CSP violations').toEqual([]);
    for (const url of requestedUrls) expect(url).not.toContain(team.token);
  }
});

describe('SDK users and a user’s page', () => {
  it('shows email and name, searches by the keyboard (kept in the URL), and links each user to their page', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/users`);
    const table = page.getByRole('region', { name: 'SDK users' });
    await table.getByRole('cell', { name: 'ada@example.com' }).waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'User',
      'Email',
      'Name',
      expect.stringMatching(/^MRR/),
      expect.stringMatching(/^First registered/),
      expect.stringMatching(/^Last registered/),
      'Erasure',
    ]);
    const rowOf = (userId: string) => table.getByRole('row').filter({ has: page.getByRole('link', { name: userId, exact: true }) });
    expect(await rowOf('grace').textContent()).toContain('Grace Hopper');

    await page.getByLabel('User id, email or name').focus();
    await page.keyboard.type('LOVELACE');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=LOVELACE/);
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    expect(await page.getByRole('heading', { name: /Users/ }).textContent()).toContain('(1)');
    await assertQuality(page, 'SDK users searched');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'sdk-users-search.png'), fullPage: true });

    // A reload keeps the search; the user id leads to the user's page.
    await page.reload();
    expect(await page.getByLabel('User id, email or name').inputValue()).toBe('LOVELACE');
    await table.getByRole('link', { name: 'ada', exact: true }).click();
    await page.waitForURL(`**/projects/${team.projectId}/users/ada`);
    const facts = page.getByTestId('user-facts');
    await facts.waitFor();
    expect(await facts.textContent()).toContain('ada@example.com');
    expect(await facts.textContent()).toContain('Ada Lovelace');
    expect(await facts.textContent()).toContain('$30.00');
  });

  it('links a feedback item’s submitter and voters, and every event’s user, to the user’s page', async () => {
    const item = await createFeedback(server, team.apiKey, 'Dark mode', { userId: 'ada' });
    await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: team.apiKey, body: { userId: 'grace' } });
    const { page } = await signedIn(`/projects/${team.projectId}/feedback/${item.id}`);
    const voters = page.getByRole('region', { name: 'Voters' });
    await voters.getByRole('link', { name: 'grace', exact: true }).waitFor();
    expect(await voters.getByRole('link', { name: 'grace', exact: true }).getAttribute('href')).toBe(
      `/projects/${team.projectId}/users/grace`,
    );
    await page.getByRole('link', { name: 'ada', exact: true }).first().click();
    await page.waitForURL(`**/users/ada`);

    await page.goto(`${server.url}/projects/${team.projectId}/metrics`);
    const feed = page.getByRole('region', { name: 'Events', exact: true });
    await feed.getByRole('link', { name: 'barbara', exact: true }).first().waitFor();
    expect(await feed.getByRole('link', { name: 'barbara', exact: true }).first().getAttribute('href')).toBe(
      `/projects/${team.projectId}/users/barbara`,
    );
  });
});

describe('metrics', () => {
  it('charts one event, by week and by month, keeps it in the URL, and writes dates one way', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/metrics`);
    await page.locator('.chart[data-drawn^="day:30"]').waitFor();
    expect(await page.getByTestId('tile-event_count').textContent()).toBe('20');
    const summary = await page.getByTestId('chart-summary').textContent();
    // "20 events in 30 days from 2 Nov 2026 to 1 Dec 2026.": the day as every page writes it.
    expect(summary).toMatch(/^20 events in 30 days from \d{1,2} [A-Z][a-z]{2,3} \d{4} to \d{1,2} [A-Z][a-z]{2,3} \d{4}\.$/);
    const ticks = (await page.locator('figure.chart').getAttribute('data-x-ticks')) ?? '';
    expect(ticks.split('|').length).toBeGreaterThan(1);
    for (const tick of ticks.split('|')) expect(tick).toMatch(/^\d{1,2} [A-Z][a-z]{2,3}( \d{4})?$/);

    await page.getByLabel('Event (all when empty)').fill('checkout');
    await page.getByLabel('Interval').selectOption('week');
    await page.getByLabel('Event (all when empty)').press('Enter');
    await page.waitForURL(/event=checkout/);
    expect(page.url()).toContain('interval=week');
    await page.locator('.chart[data-drawn^="week:"]').waitFor();
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('10');
    await expect.poll(() => page.getByTestId('chart-summary').textContent()).toMatch(/^10 events in \d weeks from /);
    expect(await page.getByRole('heading', { name: /per week/ }).textContent()).toContain('checkout');

    await page.getByLabel('Interval').selectOption('month');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('.chart[data-drawn^="month:"]').waitFor();
    const monthTicks = (await page.locator('figure.chart').getAttribute('data-x-ticks')) ?? '';
    for (const tick of monthTicks.split('|')) expect(tick).toMatch(/^([A-Z][a-z]{2,3} \d{4}|\d{1,2} [A-Z][a-z]{2,3}( \d{4})?)$/);
    // A 365-day window by the week is 53 points, not 365.
    await page.goto(`${server.url}/projects/${team.projectId}/metrics?from=${at(364).slice(0, 10)}&to=${at(0).slice(0, 10)}&interval=week`);
    await page.locator('.chart[data-drawn^="week:"]').waitFor();
    expect(Number((await page.locator('figure.chart').getAttribute('data-drawn'))?.split(':')[1])).toBeLessThanOrEqual(54);
    await assertQuality(page, 'metrics by the week');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'metrics-weeks.png'), fullPage: true });
  });

  it('draws an item completed today on the day chart (after the last day’s start), as the list under it says', async () => {
    const item = await createFeedback(server, team.apiKey, 'Shipped this afternoon');
    const ship = await server.request('PATCH', `/api/v1/projects/${team.projectId}/feedbacks/${item.id}`, {
      bearer: team.token,
      body: { status: 'completed' },
    });
    expect(ship.status).toBe(200);
    const { page } = await signedIn(`/projects/${team.projectId}/metrics`);
    await page.getByTestId('ship-dates').getByRole('link', { name: 'Shipped this afternoon' }).waitFor();
    // marks=1 counts the marks drawn inside the buckets: today's, after today's start, is one.
    await expect.poll(() => page.locator('figure.chart').getAttribute('data-drawn')).toBe('day:30:marks=1');
    await expect.poll(() => page.getByTestId('ship-dates').textContent()).toMatch(/\d{1,2} [A-Z][a-z]{2,3} \d{4}, \d{2}:\d{2} UTC/);
  });
});

describe('live view', () => {
  it('opens with the events stored in the last 30 minutes, not with 0', async () => {
    // A project of its own: the fixture's events of today may fall in the last 30 minutes early
    // in a UTC day, and alan's live event would join his fixture session of today.
    const live = await accountWithProject(server, 'team', 'Live app');
    const now = new Date().toISOString();
    await track(live.apiKey, [
      { eventName: 'opened_live', userId: 'ada', timestamp: now },
      { eventName: 'opened_live', userId: 'grace', timestamp: now },
      { eventName: 'opened_live', userId: 'alan', timestamp: new Date(Date.now() - 10 * 60_000).toISOString() },
      // Older than 30 minutes: not counted.
      { eventName: 'opened_live', userId: 'edsger', timestamp: new Date(Date.now() - 45 * 60_000).toISOString() },
    ]);
    await server.eventsVisible();
    const tab = await openTab(browser, VIEWPORTS.desktop);
    tabs.push(tab);
    await signIn(tab, server, live.token, `/projects/${live.projectId}/live`);
    const { page } = tab;
    await expect
      .poll(() => page.getByTestId('live-fill').textContent())
      .toBe('Of these, 3 were stored before this page opened and 0 arrived since.');
    expect(await page.getByRole('region', { name: 'Events per minute' }).textContent()).toContain('3 events in the last 30 minutes');
    await expect.poll(() => page.getByTestId('live-events').locator('tbody tr').count()).toBe(3);
    await assertQuality(page, 'live view filled');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'live-filled.png'), fullPage: true });
  });
});

describe('retention and funnels', () => {
  it('hatches the period not over yet and says so, and leaves finished periods plain', async () => {
    const { page } = await signedIn(
      `/projects/${team.projectId}/retention?cohort=signed_in&return=&interval=day&periods=6&from=${at(9).slice(0, 10)}&to=${at(0).slice(0, 10)}`,
    );
    const matrix = page.getByTestId('retention-matrix');
    await matrix.waitFor();
    const dayName = (daysAgo: number) =>
      new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(NOW - daysAgo * DAY_MS));
    const cohort = (daysAgo: number) => matrix.getByRole('row').filter({ has: page.getByRole('rowheader', { name: dayName(daysAgo) }) });
    // Ada's cohort, 5 days ago: its period 5 is today, not over; period 4 (yesterday) is.
    const ada = cohort(5);
    const today = ada.locator('td[data-period="5"]');
    expect(await today.getAttribute('data-partial')).toBe('true');
    expect(await today.textContent()).toContain('period not over yet');
    expect(await styleOf(today, 'backgroundImage')).toContain('repeating-linear-gradient');
    expect(await ada.locator('td[data-period="4"]').getAttribute('data-partial')).toBeNull();
    // The cohort of nine days ago: its six periods are all over.
    expect(await cohort(9).locator('td[data-period]').count()).toBe(7);
    expect(await cohort(9).locator('td[data-partial]').count()).toBe(0);
    await assertQuality(page, 'retention');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'retention-partial.png'), fullPage: true });
  });

  it('writes event names and property values as they are, and says a user with several values counts in each row', async () => {
    const { page } = await signedIn(
      `/projects/${team.projectId}/funnels?step=signed_in&step=checkout&window=30d&from=${at(9).slice(0, 10)}&to=${at(0).slice(0, 10)}&breakdown=platform`,
    );
    const table = page.getByTestId('funnel-breakdown');
    await table.waitFor();
    const header = table.getByRole('rowheader', { name: 'ios' });
    // Drawn as written: no text transform on the headers (it drew "IOS").
    expect(await styleOf(header, 'textTransform')).toBe('none');
    expect(await styleOf(table.getByRole('columnheader', { name: '2. checkout' }), 'textTransform')).toBe('none');
    expect(await page.getByTestId('funnel-breakdown-note').textContent()).toContain('counts in each of those rows');
    await assertQuality(page, 'funnel breakdown');
  });
});

/*
 * The pieces whose API the other issue-38 branches build: the filter bar, the measure picker, the
 * comparison, the Sessions card and the user's timeline. Windows end yesterday where the live
 * view's events (tracked "now" above) would otherwise change the figures.
 */
/*
 * Sessions and the user timeline come from the sessions branch of issue 38, which the lead merges
 * with the others; until this tree has them (its own OpenAPI document declares the timeline), their
 * two cases are skipped, and say so. Both passed against that branch's API on 2026-12-01.
 */
const hasSessions = '/projects/{id}/users/{userId}/timeline' in (buildOpenApiDocument().paths ?? {});

describe('filters, measures, comparison, sessions and the timeline', () => {
  const day = (daysAgo: number) => at(daysAgo).slice(0, 10);
  const metricsAt = (query: string) => `/projects/${team.projectId}/metrics?from=${day(9)}&to=${day(1)}${query}`;

  it('adds filters from the keyboard with the ops that fit the property, keeps them in the URL, and removes them', async () => {
    const { page } = await signedIn(metricsAt(''));
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('19');
    const bar = page.getByRole('region', { name: 'Filters' });

    // A text property: the text conditions, no numeric ones.
    await bar.getByLabel('Property').focus();
    await page.keyboard.type('properties.plan');
    await expect.poll(() => bar.getByLabel('Condition').locator('option').allTextContents()).toContain('contains');
    expect(await bar.getByLabel('Condition').locator('option').allTextContents()).not.toContain('is at least');
    await page.keyboard.press('Tab'); // the condition: "is"
    await page.keyboard.press('Tab');
    await page.keyboard.type('pro');
    await page.keyboard.press('Enter');
    await page.waitForURL(/filters=/);
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '')).toEqual([
      { property: 'properties.plan', op: 'eq', value: 'pro' },
    ]);
    // ada's and grace's checkouts on days 8 and 1.
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('4');
    expect(await bar.getByTestId('filter-chips').textContent()).toContain('plan is "pro"');

    // A number property: the comparisons; the value goes as a JSON number.
    await bar.getByLabel('Remove filter: plan is "pro"').click();
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('19');
    await bar.getByLabel('Property').fill('properties.duration_ms');
    await expect.poll(() => bar.getByLabel('Condition').locator('option').allTextContents()).toContain('is at least');
    expect(await bar.getByLabel('Condition').locator('option').allTextContents()).not.toContain('contains');
    await bar.getByLabel('Condition').selectOption('gte');
    await bar.getByLabel('Value').fill('300');
    await bar.getByRole('button', { name: 'Add filter' }).click();
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('6');
    expect(JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '')).toEqual([
      { property: 'properties.duration_ms', op: 'gte', value: 300 },
    ]);
    // A reload asks the same.
    await page.reload();
    await expect.poll(() => page.getByTestId('tile-event_count').textContent()).toBe('6');
    await assertQuality(page, 'metrics filtered');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'metrics-filters.png'), fullPage: true });

    // A pattern the engine refuses is said in the API's words, naming the filter.
    await page.goto(
      `${server.url}${metricsAt(`&filters=${encodeURIComponent(JSON.stringify([{ property: 'event_name', op: 'regex', value: '(' }]))}`)}`,
    );
    await expect.poll(() => page.getByRole('region', { name: 'Summary' }).textContent()).toContain('filters.0');
  });

  it('charts a property’s sum and the monthly active users, each from the picker, in the URL', async () => {
    const { page } = await signedIn(metricsAt(''));
    await page.getByLabel('Measure', { exact: true }).selectOption('sum');
    await page.getByLabel('Of the property').fill('duration_ms');
    await page.getByRole('button', { name: 'Chart this measure' }).click();
    await page.waitForURL(/measure=sum/);
    expect(new URL(page.url()).searchParams.get('measure')).toBe('sum:properties.duration_ms');
    // (100 + 200 + 300 + 400 + 500) on days 8 and 1.
    await expect.poll(() => page.getByTestId('tile-measure').textContent()).toBe('3,000');
    await expect.poll(() => page.getByRole('heading', { name: /per day/ }).textContent()).toContain('Sum of duration_ms');

    await page.getByLabel('Measure', { exact: true }).selectOption('mau');
    await page.getByRole('button', { name: 'Chart this measure' }).click();
    await page.waitForURL(/measure=mau/);
    await expect.poll(() => page.getByTestId('tile-measure').textContent()).toBe('5');
    await page.locator('.chart[data-drawn^="day:9"]').waitFor();
  });

  it('compares with the previous period: the earlier series dashed, the change on the tiles and breakdown rows', async () => {
    // Days 7…1 ago hold 12 events (7 sign-ins, 5 checkouts on day 1); days 14…8 hold 7 (2 and 5).
    const { page } = await signedIn(`/projects/${team.projectId}/metrics?from=${day(7)}&to=${day(1)}`);
    await page.locator('.chart[data-drawn^="day:7"]').waitFor();
    await page.getByLabel('Compare with the previous period').focus();
    await page.keyboard.press('Space');
    await page.waitForURL(/compare=previous_period/);
    await expect.poll(() => page.getByTestId('compare-window').textContent()).toContain(`Compared with`);
    const summary = page.getByRole('region', { name: 'Summary' });
    await expect
      .poll(() =>
        summary
          .locator('.tile')
          .filter({ has: page.getByTestId('tile-event_count') })
          .textContent(),
      )
      .toMatch(/\+71\.4% vs previous period/);
    // The summary and the series are two answers: the chart may be redrawn after the tiles change.
    await expect.poll(() => page.locator('.chart .u-legend').textContent()).toContain('Events (previous period)');
    const breakdown = page.getByTestId('breakdown-table');
    await expect.poll(() => breakdown.getByRole('row').filter({ hasText: 'signed_in' }).textContent()).toContain('+250%');
    expect(await breakdown.getByRole('row').filter({ hasText: 'checkout' }).textContent()).toContain('0%');
    await assertQuality(page, 'metrics compared');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'metrics-compare.png'), fullPage: true });
  });

  it.skipIf(!hasSessions)('shows the Sessions card: sessions, bounce rate and events per session from the fixture', async () => {
    const { page } = await signedIn(metricsAt(''));
    const card = page.getByTestId('sessions-card');
    // Sign-in only on 7 days (bounces); on days 8 and 1 each of the five users has one session, of
    // two events for the one who also signed in that day, of one (a bounce) for the other four.
    await expect.poll(() => card.getByTestId('session-tile-sessions').textContent()).toBe('17');
    expect(await card.getByTestId('session-tile-bounce_rate').textContent()).toBe('88.2%');
    expect(await card.getByTestId('session-tile-events_per_session').textContent()).toBe('1.12');
    await card.locator('.chart-secondary[data-drawn="day:9"]').waitFor();
    // Entry events: the 7 sign-in-only sessions and the two whose sign-in came before the checkout
    // (edsger on day 8, grace on day 1) begin with signed_in; the other 8 with checkout.
    const entries = card.getByTestId('sessions-by-entry');
    const cells = (name: string) => entries.getByRole('row').filter({ hasText: name }).getByRole('cell').allTextContents();
    await expect.poll(async () => (await cells('signed_in')).slice(0, 3)).toEqual(['signed_in', '9', '77.8%']);
    expect((await cells('checkout')).slice(0, 3)).toEqual(['checkout', '8', '100%']);
  });

  it.skipIf(!hasSessions)('opens a user’s timeline from the SDK users page: sessions newest first, events in time order', async () => {
    const { page } = await signedIn(`/projects/${team.projectId}/users?q=grace`);
    await page.getByRole('region', { name: 'SDK users' }).getByRole('link', { name: 'grace', exact: true }).click();
    await page.waitForURL('**/users/grace');
    await page.goto(`${server.url}/projects/${team.projectId}/users/grace?from=${day(9)}&to=${day(1)}`);
    const timeline = page.getByTestId('timeline');
    await timeline.waitFor();
    // grace: day 1 (sign-in, then checkout 61 s later), day 6 (sign-in), day 8 (checkout).
    const sessions = timeline.locator('.timeline-session');
    expect(await sessions.count()).toBe(3);
    expect(await sessions.nth(0).locator('h3').textContent()).toMatch(/1 min · 2 events$/);
    // The fixture's time of day (HH:MM, UTC) of grace's sign-in (+60 s) and checkout (+121 s).
    const clock = (seconds: number) => at(1, seconds).slice(11, 16);
    expect(await sessions.nth(0).locator('li').allTextContents()).toEqual([
      expect.stringMatching(new RegExp(`^${clock(60)} signed_in`)),
      expect.stringMatching(new RegExp(`^${clock(121)} checkout`)),
    ]);
    expect(await sessions.nth(2).locator('li').allTextContents()).toEqual([expect.stringMatching(new RegExp(`^${clock(121)} checkout`))]);
    // Keyboard: a session's events fold away and back.
    await sessions.nth(0).getByRole('button', { name: 'Hide events' }).focus();
    await page.keyboard.press('Enter');
    expect(await sessions.nth(0).locator('li').count()).toBe(0);
    await page.keyboard.press('Enter');
    expect(await sessions.nth(0).locator('li').count()).toBe(2);
    await assertQuality(page, 'user timeline');
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'user-timeline.png'), fullPage: true });
  });
});

describe('the funnel compared', () => {
  it('adds the previous period’s users to each step, with the change', async () => {
    const day = (daysAgo: number) => at(daysAgo).slice(0, 10);
    // Days 7…1: five users sign in, all check out on day 1; days 14…8: edsger and ada, both check out on day 8.
    const { page } = await signedIn(
      `/projects/${team.projectId}/funnels?step=signed_in&step=checkout&window=30d&from=${day(7)}&to=${day(1)}`,
    );
    const steps = page.getByTestId('funnel-steps');
    await steps.waitFor();
    await page.getByLabel('Compare with the previous period').check();
    await page.waitForURL(/compare=previous_period/);
    await expect.poll(() => steps.getByRole('row').nth(1).textContent()).toMatch(/2 \+150%/);
    expect(await page.getByTestId('funnel-compare').textContent()).toContain(`"Before": the same funnel from`);
    await assertQuality(page, 'funnel compared');
  });
});
