import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback, waitForEvents } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, signIn, useBrowser } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The owners' dashboard in Chromium against the real service (real PostgreSQL, embedded
 * ClickHouse): what an owner does in the pages reaches the API, and what the API holds shows.
 */
// One quick attempt per delivery, so a webhook nobody answers fails within the test.
const server = useTestServer({ env: { DELIVERY_MAX_ATTEMPTS: '1', DELIVERY_TIMEOUT_MS: '500' } });
const browser = useBrowser();
let team: Awaited<ReturnType<typeof accountWithProject>>;
const tabs: DashboardTab[] = [];

async function tab(): Promise<DashboardTab> {
  const opened = await openTab(browser);
  tabs.push(opened);
  return opened;
}

beforeAll(async () => {
  team = await accountWithProject(server, 'team', 'Acme app');
});

afterAll(async () => {
  for (const { problems, requestedUrls } of tabs) {
    expect(problems, 'console errors or CSP violations').toEqual([]);
    // The token and the API key travel in headers only, never in a URL.
    for (const url of requestedUrls) {
      expect(url).not.toContain(team.token);
      expect(url).not.toContain(team.apiKey);
    }
  }
});

describe('signing in', () => {
  it('refuses a wrong token on the sign-in page, then signs in with the admin token and out again', async () => {
    const t = await tab();
    await t.page.goto(`${server.url}/projects/${team.projectId}/feedback`);
    // Not signed in: the page asks for a token and remembers where the owner wanted to go.
    await t.page.waitForURL(/\/signin\?next=/);
    await t.page.getByLabel('Admin or member token').fill('fba_not_a_real_token');
    await t.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => t.page.getByRole('alert').textContent()).toContain('This token was not accepted');
    expect(await t.page.evaluate('Object.keys(sessionStorage)')).toEqual([]);

    await t.page.getByLabel('Admin or member token').fill(team.token);
    await t.page.getByRole('button', { name: 'Sign in' }).click();
    await t.page.waitForURL(`**/projects/${team.projectId}/feedback`);
    await t.page.getByRole('heading', { name: 'Feedback inbox' }).waitFor();
    expect(await t.page.evaluate('Object.values(sessionStorage)')).toContain(team.token);

    await t.page.getByRole('button', { name: 'Sign out' }).click();
    await t.page.waitForURL('**/signin');
    expect(await t.page.evaluate('Object.keys(sessionStorage)')).toEqual([]);
  });

  it('shows the sign-in page again when the service stops accepting the token', async () => {
    const t = await tab();
    await signIn(t, server, team.token);
    await t.page.evaluate(
      `for (const key of Object.keys(sessionStorage)) if (key.endsWith('.token')) sessionStorage.setItem(key, 'fba_revoked_token')`,
    );
    await t.page.goto(`${server.url}/projects/${team.projectId}/metrics`);
    await t.page.waitForURL(/\/signin/);
    await expect.poll(() => t.page.getByRole('alert').textContent()).toContain('no longer accepts this token');
  });
});

describe('projects', () => {
  it('creates a project and shows its API key once, rotates the key and archives the project', async () => {
    const t = await tab();
    await signIn(t, server, team.token);
    await t.page.getByLabel('Name').fill('Second app');
    await t.page.getByRole('button', { name: 'Create project' }).click();
    const key = await t.page.getByTestId('one-time-secret').textContent();
    expect(key).toMatch(/\S{20,}/);
    const projects = await server.request('GET', '/api/v1/projects', { bearer: team.token });
    const created = projects.body.find((p: { name: string }) => p.name === 'Second app');
    // The key shown works: it is the project's.
    const viaKey = await server.request('GET', '/api/v1/feedbacks', { apiKey: key ?? '' });
    expect(viaKey.status).toBe(200);

    await t.page.getByRole('button', { name: 'I have copied it' }).click();
    const card = t.page.getByRole('listitem').filter({ has: t.page.getByRole('heading', { name: 'Second app' }) });
    t.page.once('dialog', (dialog) => dialog.accept());
    await card.getByRole('button', { name: 'Rotate API key' }).click();
    const rotated = await t.page.getByTestId('one-time-secret').textContent();
    expect(rotated).not.toBe(key);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: key ?? '' })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: rotated ?? '' })).status).toBe(200);

    t.page.once('dialog', (dialog) => dialog.accept());
    await card.getByRole('button', { name: 'Archive' }).click();
    await card.getByText('archived').waitFor();
    const after = await server.request('GET', `/api/v1/projects/${created.id}`, { bearer: team.token });
    expect(after.body.archived).toBe(true);
  });
});

describe('feedback', () => {
  it('lists an item created through the API in the inbox, with counts per status, filters and search', async () => {
    const item = await createFeedback(server, team.apiKey, 'Dark mode for the editor');
    await createFeedback(server, team.apiKey, 'Export to CSV', { category: 'improvement' });
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/feedback`);
    const row = t.page.getByRole('row').filter({ hasText: 'Dark mode for the editor' });
    await row.waitFor();
    expect(await row.getByRole('link').getAttribute('href')).toBe(`/projects/${team.projectId}/feedback/${item.id}`);

    await t.page.getByLabel('Search titles').fill('export');
    await t.page.getByRole('row').filter({ hasText: 'Dark mode' }).waitFor({ state: 'detached' });
    await t.page.getByRole('row').filter({ hasText: 'Export to CSV' }).waitFor();
    expect(t.page.url()).toContain('q=export');
    // The counts are the API's, under the search: one item matches.
    const allTab = t.page.getByRole('navigation', { name: 'Status' }).getByRole('link', { name: /All/ });
    await expect.poll(() => allTab.textContent()).toBe('All 1');
    // The search is the API's (q=), with its wildcards taken literally.
    await t.page.getByLabel('Search titles').fill('%');
    await t.page.getByText('No feedback matches these filters.').waitFor();

    await t.page.getByLabel('Search titles').fill('');
    // Sorted by the voters' MRR: the item with fewer votes but a paying voter comes first.
    const calendar = await createFeedback(server, team.apiKey, 'Calendar view');
    for (const userId of ['fan-1', 'fan-2']) {
      await server.request('POST', `/api/v1/feedbacks/${calendar.id}/votes`, { apiKey: team.apiKey, body: { userId } });
    }
    const exportItem = (await server.request('GET', '/api/v1/feedbacks', { apiKey: team.apiKey })).body.find(
      (f: { title: string }) => f.title === 'Export to CSV',
    );
    await server.request('POST', '/api/v1/users/register', { apiKey: team.apiKey, body: { userId: 'whale', mrr: 500 } });
    await server.request('POST', `/api/v1/feedbacks/${exportItem.id}/votes`, { apiKey: team.apiKey, body: { userId: 'whale' } });
    await t.page.reload();
    const firstTitle = () => t.page.getByRole('region', { name: 'Feedback items' }).getByRole('row').nth(1).getByRole('link').textContent();
    await expect.poll(firstTitle).toBe('Calendar view');
    await t.page.getByLabel('Sort by').selectOption('mrr');
    await expect.poll(firstTitle).toBe('Export to CSV');
    expect(await t.page.getByRole('region', { name: 'Feedback items' }).getByRole('row').nth(1).textContent()).toContain('$500.00');

    await t.page.getByLabel('Category').selectOption('improvement');
    await t.page.getByRole('row').filter({ hasText: 'Dark mode' }).waitFor({ state: 'detached' });
    // The counts follow the filter once their own answer is drawn: poll, do not read once.
    await expect
      .poll(() =>
        t.page
          .getByRole('navigation', { name: 'Status' })
          .getByRole('link', { name: /Pending/ })
          .textContent(),
      )
      .toContain('1');
  });

  it('changes the status in the page, with a reason when rejecting, and the API answers the new status', async () => {
    const item = await createFeedback(server, team.apiKey, 'Offline mode');
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/feedback/${item.id}`);
    await t.page.getByRole('heading', { name: 'Offline mode' }).waitFor();

    await t.page.getByLabel('New status').selectOption('in_progress');
    await t.page.getByRole('button', { name: 'Save status' }).click();
    await expect
      .poll(async () => (await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: team.apiKey })).body.status)
      .toBe('in_progress');

    await t.page.getByLabel('New status').selectOption('rejected');
    await t.page.getByLabel(/Reason for rejecting/).fill('Out of scope for this year');
    await t.page.getByRole('button', { name: 'Save status' }).click();
    await expect
      .poll(async () => (await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: team.apiKey })).body)
      .toMatchObject({ status: 'rejected', rejection_reason: 'Out of scope for this year' });
    await t.page.getByText('Out of scope for this year').first().waitFor();
  });

  it('merges an item into another chosen by search, and posts an owner reply', async () => {
    const source = await createFeedback(server, team.apiKey, 'Night theme please');
    const target = await createFeedback(server, team.apiKey, 'Dark theme support');
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/feedback/${source.id}`);
    await t.page.getByRole('heading', { name: 'Night theme please' }).waitFor();

    await t.page.getByLabel('Find the item to merge into').fill('dark theme');
    t.page.once('dialog', (dialog) => dialog.accept());
    await t.page.getByRole('button', { name: 'Merge into Dark theme support' }).click();
    await t.page.getByText(/Merged .* into/).waitFor();
    const merged = await server.request('GET', `/api/v1/feedbacks/${source.id}`, { apiKey: team.apiKey });
    expect(merged.body.merged_into_id).toBe(target.id);
    const into = await server.request('GET', `/api/v1/feedbacks/${target.id}`, { apiKey: team.apiKey });
    expect(into.body.merged_feedback_ids).toContain(source.id);
    expect(into.body.vote_count).toBe(2);

    // The inbox leaves merged items out unless asked for.
    await t.page.goto(`${server.url}/projects/${team.projectId}/feedback?q=theme`);
    await t.page.getByRole('link', { name: 'Dark theme support' }).waitFor();
    expect(await t.page.getByRole('link', { name: 'Night theme please' }).count()).toBe(0);
    await t.page.getByLabel('Show merged items').check();
    await t.page.getByRole('link', { name: 'Night theme please' }).waitFor();

    // Comments are read and answered with the admin token: no API key is pasted.
    await server.request('POST', `/api/v1/feedbacks/${target.id}/comments`, {
      apiKey: team.apiKey,
      body: { content: 'Please, my eyes!', userId: 'user-7' },
    });
    await t.page.getByRole('link', { name: 'Dark theme support' }).click();
    await t.page.getByRole('heading', { level: 1, name: 'Dark theme support' }).waitFor();
    await t.page.getByText('Please, my eyes!').waitFor();
    expect(await t.page.getByLabel('Project API key').count()).toBe(0);
    await t.page.getByLabel('Reply as the team').fill('On the roadmap for May.');
    await t.page.getByRole('button', { name: 'Post reply' }).click();
    await t.page.getByText('On the roadmap for May.').waitFor();
    const comments = await server.request('GET', `/api/v1/feedbacks/${target.id}/comments`, { apiKey: team.apiKey });
    const account = await server.request('GET', '/api/v1/account', { bearer: team.token });
    expect(comments.body.at(-1)).toMatchObject({ user_id: `account:${account.body.id}` });
    expect(comments.body.at(-1)).toMatchObject({ content: 'On the roadmap for May.', is_admin: true });
  });
});

describe('voters and SDK users', () => {
  it('lists an item’s voters with their email and MRR, highest first, and the total', async () => {
    const item = await createFeedback(server, team.apiKey, 'Keyboard shortcuts', { userId: 'kb-creator' });
    for (const [userId, mrr] of [
      ['kb-small', 9],
      ['kb-big', 249],
    ] as const) {
      await server.request('POST', '/api/v1/users/register', { apiKey: team.apiKey, body: { userId, mrr } });
      await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, {
        apiKey: team.apiKey,
        body: { userId, email: `${userId}@example.com` },
      });
    }
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/feedback/${item.id}`);
    const voters = t.page.getByRole('region', { name: 'Voters' });
    await voters.getByRole('cell', { name: 'kb-big', exact: true }).waitFor();
    const rows = await voters.getByRole('row').allTextContents();
    expect(rows.slice(1)).toEqual([
      expect.stringMatching(/kb-big.*kb-big@example\.com.*\$249\.00/),
      expect.stringMatching(/kb-small.*kb-small@example\.com.*\$9\.00/),
      expect.stringMatching(/kb-creator.*—.*—/),
    ]);
    expect(await t.page.getByTestId('voters-total-mrr').textContent()).toBe('$258.00');
  });

  it('lists SDK users one by one, sorted by the column the owner picks', async () => {
    const project = await accountWithProject(server, 'pro', 'Users app');
    for (const [userId, mrr] of [
      ['first-user', 50],
      ['second-user', null],
      ['third-user', 700],
    ] as const) {
      await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId, mrr } });
    }
    const t = await tab();
    await signIn(t, server, project.token, `/projects/${project.projectId}/users`);
    const table = t.page.getByRole('region', { name: 'SDK users' });
    const userIds = () => table.locator('tbody tr td:first-child').allTextContents();
    // Last registered first by default.
    await expect.poll(userIds).toEqual(['third-user', 'second-user', 'first-user']);
    expect(await t.page.getByRole('heading', { name: /Users/ }).textContent()).toContain('(3)');

    await table.getByRole('link', { name: /^MRR/ }).click();
    await expect.poll(userIds).toEqual(['third-user', 'first-user', 'second-user']);
    expect(t.page.url()).toContain('sort=mrr&order=desc');
    await table.getByRole('link', { name: /^MRR/ }).click();
    // Ascending: the unknown MRR stays last.
    await expect.poll(userIds).toEqual(['first-user', 'third-user', 'second-user']);
    await table.getByRole('link', { name: /^First registered/ }).click();
    await expect.poll(userIds).toEqual(['third-user', 'second-user', 'first-user']);
    expect(await table.getByRole('columnheader', { name: /First registered/ }).getAttribute('aria-sort')).toBe('descending');
  });
});

describe('settings', () => {
  it('adds a webhook (its secret shown once), retries its failed delivery, and adds a member who signs in with their token', async () => {
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/settings?section=integrations`);
    await t.page.getByLabel('Kind').selectOption('webhook');
    await t.page.getByLabel('URL').fill('http://127.0.0.1:9/feedback-hook');
    await t.page.getByRole('button', { name: 'Add integration' }).click();
    expect(await t.page.getByRole('region', { name: 'Webhook signing secret' }).getByTestId('one-time-secret').textContent()).toMatch(
      /\S{16,}/,
    );
    await t.page.getByRole('button', { name: 'I have copied it' }).click();
    await t.page.getByText('http://127.0.0.1:9/feedback-hook').waitFor();

    // Nobody listens on port 9: the delivery of the next item's notification fails.
    await createFeedback(server, team.apiKey, 'Webhook me');
    const deliveries = () => server.request('GET', `/api/v1/projects/${team.projectId}/deliveries?status=failed`, { bearer: team.token });
    const ofItem = async () =>
      (await deliveries()).body.find(
        (d: { feedback_title: string; channel: string }) => d.feedback_title === 'Webhook me' && d.channel === 'webhook',
      );
    await expect.poll(ofItem, { timeout: 20_000 }).toBeDefined();
    const failed = await ofItem();
    await t.page.getByLabel('Show').selectOption('failed');
    // The row of that delivery (other failed ones of the project may be listed above it).
    const row = t.page.getByRole('row').filter({ hasText: 'Webhook me' }).filter({ hasText: '127.0.0.1:9' });
    await row.getByRole('button', { name: 'Retry' }).click();
    // The retry is queued (pending) or already made (one more attempt).
    const retried = async () => {
      const all = await server.request('GET', `/api/v1/projects/${team.projectId}/deliveries`, { bearer: team.token });
      const delivery = all.body.find((d: { id: string }) => d.id === failed.id);
      return delivery.status === 'pending' || delivery.attempts > failed.attempts;
    };
    await expect.poll(retried, { timeout: 30_000 }).toBe(true);

    // Members are a section of their own.
    await t.page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Members' }).click();
    await t.page.getByLabel('Email').fill('teammate@example.com');
    await t.page.getByRole('button', { name: 'Add member' }).click();
    const memberToken = await t.page
      .getByRole('region', { name: 'Token for teammate@example.com' })
      .getByTestId('one-time-secret')
      .textContent();
    await t.page.getByRole('button', { name: 'I have copied it' }).click();
    await t.page.getByText('teammate@example.com').waitFor();

    const member = await tab();
    await signIn(member, server, memberToken ?? '', `/projects/${team.projectId}/feedback`);
    await member.page.getByRole('heading', { name: 'Feedback inbox' }).waitFor();
  });
});

describe('states', () => {
  it('draws an empty inbox, a 429 as wait-and-retry and a 5xx with its request id', async () => {
    const empty = await accountWithProject(server, 'pro', 'Brand new app');
    const t = await tab();
    await signIn(t, server, empty.token, `/projects/${empty.projectId}/feedback`);
    await t.page.getByText('No feedback yet').waitFor();

    // The service's refusals, answered in the browser for the next list request only: the API
    // cannot be made to fail on demand, and these are the pages' reactions to tell apart.
    const list = `**/api/v1/projects/${empty.projectId}/feedbacks*`;
    await t.page.route(
      list,
      (route) =>
        route.fulfill({
          status: 429,
          headers: { 'retry-after': '2', 'content-type': 'application/json' },
          body: '{"error":true,"reason":"rate limit exceeded"}',
        }),
      { times: 1 },
    );
    await t.page.reload();
    await expect.poll(() => t.page.getByRole('alert').textContent()).toContain('Too many requests: the service asks to wait 2 s');
    const retry = t.page.getByRole('button', { name: /Retry/ });
    expect(await retry.isDisabled()).toBe(true);
    await t.page.getByRole('button', { name: 'Retry now' }).click({ timeout: 5_000 });
    await t.page.getByText('No feedback yet').waitFor();

    await t.page.route(
      list,
      (route) =>
        route.fulfill({
          status: 503,
          headers: { 'x-request-id': 'req-abc-123', 'content-type': 'application/json' },
          body: '{"error":true,"reason":"unavailable"}',
        }),
      { times: 1 },
    );
    await t.page.reload();
    await expect.poll(() => t.page.getByRole('alert').textContent()).toContain('The service failed to answer (503)');
    expect(await t.page.locator('.request-id').textContent()).toBe('req-abc-123');
    await t.page.getByRole('button', { name: 'Try again' }).click();
    await t.page.getByText('No feedback yet').waitFor();
    // Chromium logs the deliberate 503 as a failed resource: expected here, and only here.
    const expected = (problem: string) => problem.includes('status of 503');
    expect(t.problems.filter(expected)).toHaveLength(1);
    t.problems.splice(0, t.problems.length, ...t.problems.filter((problem) => !expected(problem)));
  });
});

describe('metrics', () => {
  it('draws tracked events in the chart and pages through the event feed with its cursor', async () => {
    const events = Array.from({ length: 30 }, (_, i) => ({
      eventName: i % 2 ? 'feedback_list' : 'checkout',
      userId: `buyer-${i % 4}`,
      properties: { plan: i % 3 ? 'pro' : 'free', i },
    }));
    expect((await server.request('POST', '/api/v1/events/batch', { apiKey: team.apiKey, body: { events } })).status).toBe(200);
    await waitForEvents(server, team.token, team.projectId, '', 30);

    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/metrics`);
    await expect.poll(() => t.page.getByTestId('chart-summary').textContent()).toContain('30 events in 30 days');
    // uPlot draws after the summary text is rendered: wait for the drawing itself (the figure
    // says what it drew once uPlot's draw hook ran), not for the text beside it.
    await t.page.locator('.chart[data-drawn="day:30"]').waitFor();
    expect(await t.page.locator('.chart canvas').count()).toBe(1);
    expect(await t.page.getByTestId('tile-event_count').textContent()).toBe('30');
    // The breakdown by event name (Team plan: allowed) lists the custom event too.
    await t.page.getByRole('region', { name: 'Breakdown rows' }).getByRole('cell', { name: 'checkout' }).waitFor();
    await t.page.getByLabel('Group events by').selectOption('property');
    await t.page.getByRole('button', { name: 'Show' }).click();
    await t.page.getByRole('region', { name: 'Breakdown rows' }).getByRole('cell', { name: 'pro' }).waitFor();

    const feed = t.page.getByRole('region', { name: 'Events', exact: true });
    await expect.poll(() => feed.getByRole('row').count()).toBe(26); // header + 25
    const firstPage = await feed.getByRole('row').nth(1).textContent();
    await t.page.getByRole('link', { name: 'Older events' }).click();
    await expect.poll(() => feed.getByRole('row').count()).toBe(6); // header + the last 5
    expect(t.page.url()).toContain('cursor=');
    expect(await feed.getByRole('row').nth(1).textContent()).not.toBe(firstPage);
    await t.page.getByRole('link', { name: 'Newest events' }).click();
    await expect.poll(() => feed.getByRole('row').count()).toBe(26);

    // By the hour: three days are 72 buckets.
    const today = new Date().toISOString().slice(0, 10);
    await t.page.getByLabel('From', { exact: true }).fill(new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10));
    await t.page.getByLabel('To', { exact: true }).fill(today);
    await t.page.getByLabel('Interval').selectOption('hour');
    await t.page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => t.page.getByTestId('chart-summary').textContent()).toContain('30 events in 72 hours');
    await t.page.locator('.chart[data-drawn="hour:72"]').waitFor();
    expect(await t.page.locator('.chart canvas').count()).toBe(1);
    expect(t.page.url()).toContain('interval=hour');
  });

  it('explains the plan gates of a free project in words, with the plan that lifts them', async () => {
    const free = await accountWithProject(server, 'free', 'Free app');
    const t = await tab();
    await signIn(t, server, free.token, `/projects/${free.projectId}/metrics?from=2020-01-01`);
    const gates = t.page.getByRole('note', { name: 'Plan limit' });
    await expect.poll(() => gates.count()).toBe(2); // breakdown by event name, event feed
    expect(await gates.allTextContents()).toEqual([
      expect.stringContaining('Breakdowns by event name are part of the Pro and Team plans'),
      expect.stringContaining('The raw event feed is part of the Pro and Team plans'),
    ]);
    // The window was clamped to the plan's 30 days: said, with the plan that keeps more.
    expect(await t.page.getByTestId('clamp-notice').textContent()).toContain('Your plan keeps 30 days of metrics');

    // The plan is shown, and settings explain what it leaves out before anything is tried.
    expect(await t.page.getByTestId('plan').textContent()).toBe('Free plan');
    await t.page.goto(`${server.url}/projects/${free.projectId}/settings?section=integrations`);
    await expect
      .poll(() => gates.allTextContents())
      .toEqual([expect.stringContaining('Integrations are part of the Pro and Team plans; this account is on the Free plan')]);
    expect(await t.page.getByRole('button', { name: 'Add integration' }).count()).toBe(0);
    await t.page.goto(`${server.url}/projects/${free.projectId}/settings?section=members`);
    await expect
      .poll(() => gates.allTextContents())
      .toEqual([expect.stringContaining('Team members are part of the Team plan; this account is on the Free plan')]);
    expect(await t.page.getByRole('button', { name: 'Add member' }).count()).toBe(0);
  });
});
