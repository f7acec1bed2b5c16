import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpReceiver } from '../helpers/receivers.js';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback, waitForEvents } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

/*
 * The dashboard as an owner uses it (issue 20 part 3), in Chromium against the real service: the
 * conversation before the voters, merged items read-only, deletions, exports with progress, a
 * user's erasure, integrations' event selection and send test, deliveries in words, only the
 * intervals the API answers, the partial bucket, the admin-only tiles explained, and the install
 * snippet after a project is created. UPDATE_SCREENSHOTS=1 also writes docs/screenshots/new-project.png.
 */
vi.setConfig(BROWSER_TEST_TIMEOUTS);
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;

// The send-test receiver listens on this machine: private addresses allowed for this server only.
const server = useTestServer({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_MAX_ATTEMPTS: '1', DELIVERY_TIMEOUT_MS: '1000' } });
const browser = useBrowser();
let team: Awaited<ReturnType<typeof accountWithProject>>;
const tabs: DashboardTab[] = [];
const run = promisify(execFile);

async function tab(viewport: { width: number; height: number } = VIEWPORTS.desktop): Promise<DashboardTab> {
  const opened = await openTab(browser, viewport);
  tabs.push(opened);
  return opened;
}

beforeAll(async () => {
  team = await accountWithProject(server, 'team', 'Owner app');
}, 60_000);

afterAll(async () => {
  for (const { problems } of tabs) expect(problems, 'console errors or CSP violations').toEqual([]);
});

describe('a feedback item', () => {
  it('puts the conversation first: the reply box is in the first screen even with 44 voters, and before the voters on a phone', async () => {
    const item = await createFeedback(server, team.apiKey, 'Popular request');
    for (let i = 0; i < 43; i++) {
      await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: team.apiKey, body: { userId: `voter-${i}` } });
    }
    await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: team.apiKey,
      body: { content: 'Me too, please.', userId: 'voter-1' },
    });
    for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      const t = await tab(viewport);
      await signIn(t, server, team.token, `/projects/${team.projectId}/feedback/${item.id}`);
      await t.page.getByRole('region', { name: 'Voters' }).getByRole('cell', { name: 'voter-42', exact: true }).waitFor();
      await t.page.getByText('Me too, please.').waitFor();
      const reply = await t.page.getByLabel('Reply as the team').boundingBox();
      const voters = await t.page.getByRole('heading', { name: /^Voters/ }).boundingBox();
      if (viewport === VIEWPORTS.desktop) expect(reply!.y, 'the reply box on the first screen').toBeLessThan(viewport.height);
      else expect(reply!.y, 'the reply box above the voters').toBeLessThan(voters!.y);
    }
  });

  it('shows a merged item as merged: read-only, a link to the target, its comments carried there, left out of the counts', async () => {
    const project = await accountWithProject(server, 'pro', 'Merge app');
    const source = await createFeedback(server, project.apiKey, 'Night mode');
    await createFeedback(server, project.apiKey, 'Dark theme');
    await server.request('POST', `/api/v1/feedbacks/${source.id}/comments`, {
      apiKey: project.apiKey,
      body: { content: 'Night mode would save my eyes.', userId: 'owl' },
    });
    const t = await tab();
    await signIn(t, server, project.token, `/projects/${project.projectId}/feedback/${source.id}`);
    await t.page.getByLabel('Find the item to merge into').fill('dark');
    t.page.once('dialog', (dialog) => dialog.accept());
    await t.page.getByRole('button', { name: 'Merge into Dark theme' }).click();

    const notice = t.page.getByTestId('merged-notice');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('This item is read-only');
    await notice.getByRole('link', { name: 'Dark theme' }).waitFor();
    expect(await t.page.locator('.facts .badge').first().textContent()).toBe('Merged');
    // Read-only: no status form, no merge, no reply box; its thread moved.
    expect(await t.page.getByRole('button', { name: 'Save status' }).count()).toBe(0);
    expect(await t.page.getByLabel('Find the item to merge into').count()).toBe(0);
    expect(await t.page.getByLabel('Reply as the team').count()).toBe(0);
    await t.page.getByText('The comments moved to the item this one was merged into.').waitFor();

    // The target carries the comment, as the origin's merge did.
    await notice.getByRole('link', { name: 'Dark theme' }).click();
    await t.page.getByRole('heading', { level: 1, name: 'Dark theme' }).waitFor();
    await t.page.getByText('[Originally on: Night mode] Night mode would save my eyes.').waitFor();

    // The inbox: merged items are listed on request, as merged, and never counted.
    await t.page.goto(`${server.url}/projects/${project.projectId}/feedback?merged=1`);
    const mergedRow = t.page.getByRole('row').filter({ hasText: 'Night mode' });
    await mergedRow.waitFor();
    expect(await mergedRow.locator('.badge').textContent()).toBe('Merged');
    const tabs = t.page.getByRole('navigation', { name: 'Status' });
    await expect.poll(() => tabs.getByRole('link', { name: /All/ }).textContent()).toBe('All 1');
    expect(await tabs.getByRole('link', { name: /Pending/ }).textContent()).toBe('Pending 1');
  });

  it('deletes a comment, then the item, each after a confirmation', async () => {
    const item = await createFeedback(server, team.apiKey, 'Spam item');
    await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: team.apiKey,
      body: { content: 'buy now', userId: 'spammer' },
    });
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/feedback/${item.id}`);
    await t.page.getByText('buy now').waitFor();
    t.page.once('dialog', (dialog) => dialog.accept());
    await t.page.getByRole('button', { name: /^Delete the comment of/ }).click();
    await t.page.getByText('No comments yet.').waitFor();
    const comments = await server.request('GET', `/api/v1/feedbacks/${item.id}/comments`, { apiKey: team.apiKey });
    expect(comments.body).toEqual([]);

    t.page.once('dialog', (dialog) => dialog.accept());
    await t.page.getByRole('button', { name: 'Delete item' }).click();
    await t.page.waitForURL(`**/projects/${team.projectId}/feedback`);
    expect((await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: team.apiKey })).status).toBe(404);
  });
});

describe('data', () => {
  it('exports feedback as CSV and events as JSON lines, showing what has arrived, then saving the file', async () => {
    const project = await accountWithProject(server, 'pro', 'Export app');
    await createFeedback(server, project.apiKey, 'Exported item');
    const events = Array.from({ length: 12 }, (_, i) => ({ eventName: 'feedback_list', userId: `u-${i}` }));
    await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
    await waitForEvents(server, project.token, project.projectId, '', 12);
    const t = await tab();
    await signIn(t, server, project.token, `/projects/${project.projectId}/settings?section=data`);

    const state = t.page.getByTestId('export-state');
    const [csv] = await Promise.all([t.page.waitForEvent('download'), t.page.getByRole('button', { name: 'Export', exact: true }).click()]);
    expect(csv.suggestedFilename()).toMatch(/\.csv$/);
    expect(await readFile((await csv.path()) as string, 'utf8')).toContain('Exported item');
    await expect.poll(() => state.textContent()).toMatch(/^Done: [\d.]+ (B|KB) in [\d.]+ s, saved as .*\.csv\.$/);

    await t.page.getByLabel('Data').selectOption('events');
    await t.page.getByLabel('Format').selectOption('jsonl');
    const [jsonl] = await Promise.all([
      t.page.waitForEvent('download'),
      t.page.getByRole('button', { name: 'Export', exact: true }).click(),
    ]);
    const lines = (await readFile((await jsonl.path()) as string, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(12);
    await expect.poll(() => state.textContent()).toMatch(/^Done: 12 rows \([\d.]+ (B|KB)\)/);
  });

  it("erases an SDK user from the users' table and follows the job until it is done", async () => {
    const project = await accountWithProject(server, 'pro', 'Erasure app');
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'leaving-user', mrr: 20 } });
    const item = await createFeedback(server, project.apiKey, 'Mine', { userId: 'leaving-user' });
    const t = await tab();
    await signIn(t, server, project.token, `/projects/${project.projectId}/users`);
    t.page.once('dialog', (dialog) => dialog.accept());
    await t.page.getByRole('button', { name: 'Erase leaving-user' }).click();
    const state = t.page.getByTestId('erasure-state');
    await state.waitFor();
    // The job's state is shown while it runs, then done.
    await expect.poll(() => state.locator('.badge').textContent(), { timeout: 60_000 }).toBe('done');
    expect(await state.textContent()).toContain('1 feedback item and 0 comments anonymized');
    expect((await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: project.apiKey })).body.user_id).not.toBe('leaving-user');
    await t.page.getByText('No SDK user yet.').waitFor();
  });
});

describe('integrations and deliveries', () => {
  it('chooses what an integration receives, sends a test that arrives, and names deliveries by integration and item', async () => {
    const project = await accountWithProject(server, 'pro', 'Hook app');
    // Refuses the message about one item, accepts every other.
    const receiver = await startHttpReceiver((_, request) => (request.body?.feedback?.title === 'Refused subject' ? 500 : 200));
    const t = await tab();
    await signIn(t, server, project.token, `/projects/${project.projectId}/settings?section=integrations`);
    await t.page.getByLabel('Kind').selectOption('webhook');
    await t.page.getByLabel('URL').fill(receiver.url);
    // Only new feedback: the status changes and changelog boxes unticked.
    await t.page.getByRole('group', { name: 'It receives' }).getByLabel('Status changes (merges included)').uncheck();
    await t.page.getByRole('group', { name: 'It receives' }).getByLabel('Changelog entries published').uncheck();
    expect(await t.page.getByRole('group', { name: 'It receives' }).textContent()).toContain('Only these.');
    await t.page.getByRole('button', { name: 'Add integration' }).click();
    await t.page.getByRole('button', { name: 'I have copied it' }).click();
    const integrations = async () =>
      (await server.request('GET', `/api/v1/projects/${project.projectId}/integrations`, { bearer: project.token })).body;
    await expect.poll(async () => (await integrations())[0]?.events).toEqual(['feedback.created']);
    const host = new URL(receiver.url).host;
    const group = t.page.getByRole('group', { name: `What Signed webhook · ${host} receives` });
    // The last ticked box cannot be unticked: the API refuses an empty selection.
    expect(await group.getByLabel('New feedback').isDisabled()).toBe(true);
    // Saved at once (PATCH), and drawn from the API's answer.
    await group.getByLabel('Status changes (merges included)').click();
    await expect.poll(async () => (await integrations())[0]?.events).toEqual(['feedback.created', 'feedback.status_changed']);
    await expect.poll(() => group.getByLabel('Status changes (merges included)').isChecked()).toBe(true);
    await group.getByLabel('Changelog entries published').click();
    await expect.poll(async () => (await integrations())[0]?.events).toBeNull();
    await expect.poll(() => group.textContent()).toContain('Everything, also types added later.');

    await t.page.getByRole('button', { name: 'Send test' }).click();
    const [integration] = await integrations();
    await expect
      .poll(() => t.page.getByTestId(`send-test-${integration.id}`).textContent(), { timeout: 20_000 })
      .toBe('Test message delivered.');
    expect(receiver.accepted).toHaveLength(1);
    expect(receiver.accepted[0]!.body).toMatchObject({ type: 'integration.test' });

    // A real item's delivery, and a failing one: named by integration and item, with plurals.
    await createFeedback(server, project.apiKey, 'Webhook subject');
    await createFeedback(server, project.apiKey, 'Refused subject');
    const deliveries = t.page.getByRole('region', { name: 'Deliveries' });
    await expect
      .poll(
        async () => {
          await t.page.getByLabel('Show').selectOption('delivered');
          await t.page.getByLabel('Show').selectOption('');
          return (await deliveries.getByRole('row').allTextContents()).length;
        },
        { timeout: 20_000 },
      )
      .toBe(4);
    // The refused one ends failed (one attempt in this server).
    await expect
      .poll(
        async () => {
          await t.page.getByLabel('Show').selectOption('failed');
          return deliveries.getByRole('row').filter({ hasText: 'Refused subject' }).count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await t.page.getByLabel('Show').selectOption('');
    await expect.poll(() => deliveries.getByRole('row').count()).toBe(4);
    // The unfiltered list is drawn from its own answer and redrawn as deliveries change: read it
    // until one drawing holds the refused row's outcome and the test message (read once, a redraw
    // in between failed this under load).
    let rows: string[] = [];
    await expect
      .poll(async () => {
        rows = await deliveries.getByRole('row').allTextContents();
        return (
          rows.some((row) => row.includes('Refused subject') && /Failed after 1 attempt(?!s)/.test(row)) &&
          rows.some((row) => row.includes('Test message'))
        );
      })
      .toBe(true);
    expect(rows.join('\n')).not.toMatch(/webhook: [0-9a-f-]{36}|\(1 attempts\)/);
    const refused = rows.find((row) => row.includes('Refused subject'));
    expect(refused).toMatch(/New feedback: Refused subject/);
    expect(refused).toContain(`Signed webhook · ${host}`);
    expect(refused).toMatch(/Failed after 1 attempt(?!s)/);
    expect(rows.find((row) => row.includes('Test message'))).toContain(`Signed webhook · ${host}`);
    await deliveries.getByRole('link', { name: 'Webhook subject' }).click();
    await t.page.getByRole('heading', { level: 1, name: 'Webhook subject' }).waitFor();
  });
});

describe('metrics', () => {
  it('offers hours only where the API answers them, marks the partial day, and says what the marked tiles are', async () => {
    await server.request('POST', '/api/v1/events/track', { apiKey: team.apiKey, body: { eventName: 'today', userId: 'u-1' } });
    await waitForEvents(server, team.token, team.projectId, '', 1);
    const today = new Date().toISOString().slice(0, 10);
    const yearAgo = new Date(Date.now() - 364 * 86_400_000).toISOString().slice(0, 10);
    const t = await tab();
    // A shared link asking for hours over a year is drawn by the day, instead of a refusal.
    await signIn(t, server, team.token, `/projects/${team.projectId}/metrics?from=${yearAgo}&to=${today}&interval=hour`);
    await t.page.locator('.chart[data-drawn="day:365"]').waitFor();
    expect(await t.page.getByRole('alert').count()).toBe(0);
    expect(await t.page.getByRole('option', { name: /^Hour/ }).isDisabled()).toBe(true);
    expect(await t.page.locator('#interval-help').textContent()).toContain('longer than 83 days');

    // Today is not over: its point is marked as partial, in the chart and in words.
    expect(await t.page.getByTestId('partial-note').textContent()).toContain('The last day is not over yet');
    expect(await t.page.locator('.chart .u-legend').textContent()).toContain('Events (so far)');
    // The marked tiles say what the mark means.
    expect(await t.page.getByTestId('tiles-legend').textContent()).toContain('cannot read them');

    // A quick 7-day range may be drawn by the hour.
    await t.page.getByRole('button', { name: 'Last 7 days' }).click();
    await t.page.locator('.chart[data-drawn="day:7"]').waitFor();
    expect(await t.page.getByRole('option', { name: /^Hour/ }).isDisabled()).toBe(false);
    expect(await seriousViolations(t.page)).toEqual([]);
  });

  it('keeps the previous answer on its own axis while the next interval loads: never daily counts on an hourly axis', async () => {
    const t = await tab();
    await signIn(t, server, team.token, `/projects/${team.projectId}/metrics`);
    await t.page.locator('.chart[data-drawn="day:30"]').waitFor();
    // Hold the hourly answer, as a slow network would.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await t.page.route(/\/metrics\/timeseries\?.*interval=hour/, async (route) => {
      await held;
      await route.continue();
    });
    const today = new Date().toISOString().slice(0, 10);
    await t.page.getByLabel('From', { exact: true }).fill(new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10));
    await t.page.getByLabel('To', { exact: true }).fill(today);
    await t.page.getByLabel('Interval').selectOption('hour');
    await t.page.getByRole('button', { name: 'Apply' }).click();
    await t.page.getByText('Loading the chart by the hour').waitFor();
    // While it is held, the daily answer stays drawn as days: its axis, its legend, its heading.
    expect(await t.page.locator('.chart').getAttribute('data-drawn')).toBe('day:30');
    expect(await t.page.locator('.chart .u-legend .u-series').first().textContent()).toMatch(/^Day/);
    expect(await t.page.getByRole('heading', { name: /^Events per/ }).textContent()).toBe('Events per day');
    release();
    await t.page.locator('.chart[data-drawn="hour:72"]').waitFor();
    expect(await t.page.locator('.chart .u-legend .u-series').first().textContent()).toMatch(/^Hour/);
    expect(await t.page.getByRole('heading', { name: /^Events per/ }).textContent()).toBe('Events per hour');
  });
});

describe('the pages as a new user sees them (issue 28 part 4)', () => {
  it('one header row, whole project ids, a roomy voters table, admin-only tiles named so, dates as the page writes them, a linked guide', async () => {
    const owner = await accountWithProject(server, 'team', 'Northwind Traders International Holdings');
    const item = await createFeedback(server, owner.apiKey, 'Bulk export');
    await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, {
      apiKey: owner.apiKey,
      body: { userId: 'customer-0042', email: 'purchasing@northwind-traders.example.com' },
    });
    const t = await tab();
    await signIn(t, server, owner.token);

    // The project's id is one unbroken line on its card.
    const id = t.page.locator('.project-card').filter({ hasText: 'Northwind' }).locator('code');
    expect(await id.textContent()).toBe(owner.projectId);
    expect(await id.evaluate((code) => (code as unknown as { getClientRects(): ArrayLike<unknown> }).getClientRects().length)).toBe(1);

    // The item page: one header row at 1280 px despite the long name; the voters table in the
    // main column, where the id and the email fit on one line each.
    await t.page.goto(`${server.url}/projects/${owner.projectId}/feedback/${item.id}`);
    const voterCell = t.page.getByRole('region', { name: 'Voters' }).getByRole('cell', { name: 'customer-0042' });
    await voterCell.waitFor();
    const tops = await t.page
      .locator('.topbar a, .topbar button, .topbar .plan-badge')
      .evaluateAll((nodes) =>
        nodes.map((node) =>
          Math.round((node as unknown as { getBoundingClientRect(): { top: number; height: number } }).getBoundingClientRect().top),
        ),
      );
    expect(Math.max(...tops) - Math.min(...tops), 'every piece of the header on one row').toBeLessThan(12);
    expect((await t.page.getByRole('region', { name: 'Voters', exact: true }).boundingBox())?.width).toBeGreaterThan(600);
    for (const cell of [voterCell, t.page.getByRole('cell', { name: 'purchasing@northwind-traders.example.com' })]) {
      // Line boxes of the cell's text: one, so nothing broke mid-string ("user-/1").
      type Box = { top: number };
      type Cell = { ownerDocument: { createRange(): { selectNodeContents(node: unknown): void; getClientRects(): ArrayLike<Box> } } };
      const lines = await cell.evaluate((td) => {
        const range = (td as unknown as Cell).ownerDocument.createRange();
        range.selectNodeContents(td);
        return new Set(Array.from(range.getClientRects(), (box) => Math.round(box.top))).size;
      });
      expect(lines).toBe(1);
    }

    // Metrics: the SDK-user tiles say what the mark means; the date fields write days as the page does.
    await t.page.goto(`${server.url}/projects/${owner.projectId}/metrics`);
    const legend = await t.page.getByTestId('tiles-legend').textContent();
    expect(legend).toContain('Admin token only');
    expect(legend).not.toContain('Team only');
    expect(await t.page.getByLabel('From', { exact: true }).inputValue()).toMatch(/^\d{1,2} [A-Z][a-z]{2,3} \d{4}$/);
    await t.page.getByLabel('From', { exact: true }).fill('2 Nov 2026');
    await t.page.getByLabel('From', { exact: true }).blur();
    expect(await t.page.getByLabel('From', { exact: true }).inputValue()).toBe('2 Nov 2026');

    // Settings: the widget guide is a link that opens it, served rendered (/docs/guides/).
    await t.page.goto(`${server.url}/projects/${owner.projectId}/settings?section=widget`);
    const guide = await t.page.getByRole('link', { name: /the widget guide/ }).getAttribute('href');
    expect(await (await fetch(`${server.url}${guide}`)).text()).toContain('>The widget and the public board</h1>');
  });
});

describe('a new project', () => {
  it('shows the SDK and widget snippets with its keys (no curl); the SDK snippet, run, puts an item in the inbox', async () => {
    const owner = await accountWithProject(server, 'team', 'First app');
    const t = await tab();
    await signIn(t, server, owner.token);
    await t.page.getByLabel('Name').fill('Snippet app');
    await t.page.getByRole('button', { name: 'Create project' }).click();
    const key = (await t.page.getByTestId('one-time-secret').textContent()) ?? '';
    const sdkSnippet = (await t.page.getByTestId('install-sdk').textContent()) ?? '';
    const widgetSnippet = (await t.page.getByTestId('install-widget').textContent()) ?? '';
    expect(sdkSnippet).toContain(`init({ apiKey: '${key}', host: '${server.url}' });`);
    expect(await t.page.locator('.install').textContent()).not.toContain('curl');
    const projects = await server.request('GET', '/api/v1/projects', { bearer: owner.token });
    const created = projects.body.find((project: { name: string }) => project.name === 'Snippet app');
    expect(widgetSnippet).toBe(`<script src="${server.url}/widget.js" data-key="${created.publishable_key}" async></script>`);
    expect((await fetch(`${server.url}/widget?key=${created.publishable_key}`)).status).toBe(200);
    if (SCREENSHOTS) await t.page.screenshot({ path: path.join(SCREENSHOTS, 'new-project.png'), fullPage: true });

    // The SDK snippet, run as printed in Node, but for the package's name: this repository's build
    // of the SDK is imported by its path (an app installs the package).
    const script = path.join(await mkdtemp(path.join(tmpdir(), 'sdk-snippet-')), 'snippet.mjs');
    const sdkEntry = pathToFileURL(path.resolve(import.meta.dirname, '../../sdk/dist/node.js')).href;
    await writeFile(script, sdkSnippet.replace("'@feedback/sdk'", `'${sdkEntry}'`));
    await run(process.execPath, [script]);
    const listed = await server.request('GET', '/api/v1/feedbacks', { apiKey: key });
    expect(listed.body.map((f: { title: string; user_id: string }) => [f.title, f.user_id])).toEqual([['Dark mode', 'user-1']]);

    // The guide the snippet names is a link that opens it, served rendered (/docs/guides/).
    const guide = await t.page.getByRole('link', { name: /the SDK’s guide/ }).getAttribute('href');
    expect(await (await fetch(`${server.url}${guide}`)).text()).toContain('>@feedback/sdk</h1>');
    expect(await seriousViolations(t.page)).toEqual([]);
  });
});
