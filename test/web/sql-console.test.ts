import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, launchChromium, openTab, seriousViolations, signIn, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/** UPDATE_SCREENSHOTS=1 also writes docs/screenshots/sql-console*.png. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
/*
 * The SQL console (/projects/:id/sql) in Chromium against the real service: queries typed in the
 * editor run through POST /projects/:id/sql with all of its isolation (embedded ClickHouse), saved
 * queries live in PostgreSQL, and what the engine answers (rows or its refusal) is what the page shows.
 */
let server: TestServer;
let browser: Browser;
let own: TestProject;
let stranger: TestProject;
const tabs: DashboardTab[] = [];

beforeAll(async () => {
  [server, browser] = await Promise.all([startTestServer({ workers: false }), launchChromium()]);
  own = await createProject(server, { plan: 'team', name: 'Acme Notes' });
  stranger = await createProject(server, { plan: 'team', name: 'Someone else' });
  // Recent rows: feedback_list, submit_feedback and note_created; one feedback_list 100 days old.
  await seedAnalytics(server, own.id, 'own', { customEvent: 'note_created' });
  await seedAnalytics(server, stranger.id, 'FOREIGN');
}, 120_000);

afterAll(async () => {
  for (const { problems, requestedUrls } of tabs) {
    expect(problems, 'console errors or CSP violations').toEqual([]);
    for (const url of requestedUrls) expect(url).not.toContain(own.account.adminToken);
  }
  await browser?.close();
  await server?.close();
});

async function consoleTab(project: TestProject = own, viewport: { width: number; height: number } = VIEWPORTS.desktop) {
  const tab = await openTab(browser, viewport);
  tabs.push(tab);
  await signIn(tab, server, project.account.adminToken, `/projects/${project.id}/sql`);
  await tab.page.getByRole('heading', { level: 1, name: 'SQL console' }).waitFor();
  // The schema panel, read from the engine, lists the columns the editor completes.
  await tab.page.getByRole('list', { name: 'Columns of events' }).getByText('event_name', { exact: true }).waitFor();
  return tab;
}

/** Replaces the editor's text as a user would: focus it, select all, type. */
async function writeQuery(page: Page, sql: string) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.insertText(sql);
  await page.keyboard.press('Escape'); // closes a completion list, if one opened
}

const editorText = (page: Page) =>
  page
    .locator('.cm-line')
    .allTextContents()
    .then((lines) => lines.join('\n'));
const resultRows = (page: Page) =>
  page
    .getByRole('region', { name: 'Result rows' })
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)));
const meta = (page: Page) => page.getByTestId('result-meta').textContent();

/** The reason the API gives for `query`, without its `query: ` prefix: what the page must show. */
async function apiRefusal(query: string): Promise<string> {
  const response = await server.request('POST', `/api/v1/projects/${own.id}/sql`, { bearer: own.account.adminToken, body: { query } });
  expect(response.status).toBe(400);
  expect(response.body.reason).toMatch(/^query: /);
  return (response.body.reason as string).slice('query: '.length);
}

describe('the SQL console', () => {
  it('runs the query typed in the editor with Ctrl+Enter and shows its rows, row count and time', async () => {
    const { page } = await consoleTab();
    await page.getByText('Run a query to see its rows here.').waitFor();
    await writeQuery(page, 'SELECT event_name, count() AS n\nFROM events\nGROUP BY event_name\nORDER BY event_name');
    await page.keyboard.press('Control+Enter');
    await expect
      .poll(() => resultRows(page))
      .toEqual([
        ['feedback_list', '2'],
        ['note_created', '1'],
        ['submit_feedback', '1'],
      ]);
    expect(await meta(page)).toMatch(/^3 rows · \d+ ms in the engine · \d+ ms in all · data from /);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'sql-console.png'), fullPage: true });
    // Column headers carry the engine's types.
    const headers = await page.getByRole('region', { name: 'Result rows' }).locator('th').allTextContents();
    expect(headers).toEqual(['event_nameLowCardinality(String)', 'nUInt64']);
    // Typing over a selection replaces it (the editor does it itself, so the CSP sees no inline style).
    await page.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('SELECT 42 AS answer');
    await page.keyboard.press('Escape');
    expect(await editorText(page)).toBe('SELECT 42 AS answer');
    // Completion offers the schema's columns with their types: bare for events, after `facts.` for facts.
    const options = page.locator('.cm-tooltip-autocomplete li');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('SELECT properties_r');
    await options.filter({ hasText: 'properties_raw' }).waitFor();
    expect(await options.first().textContent()).toBe('properties_rawString');
    // CodeMirror ignores Enter for 75 ms after the list opens (interactionDelay), so a list that
    // pops up just as one presses Enter does not take the keystroke.
    await page.waitForTimeout(150);
    await page.keyboard.press('Enter');
    await page.keyboard.type(', facts.categ');
    await options.filter({ hasText: 'category' }).first().waitFor();
    await page.waitForTimeout(150);
    await page.keyboard.press('Enter');
    expect(await editorText(page)).toBe('SELECT properties_raw, facts.category');
    // Tab leaves the editor: the keyboard is never trapped in it.
    await page.locator('.cm-content').click();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('sql-from');
  });

  it('saves a query, runs it from the saved list after a reload, and downloads the result as CSV', async () => {
    const { page } = await consoleTab();
    const query =
      "SELECT event_name, count() AS n, concat('say \"hi\", ', event_name) AS note, 'line1\\nline2' AS multi, NULL AS nothing\nFROM events\nGROUP BY event_name\nORDER BY event_name";
    await writeQuery(page, query);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => resultRows(page).then((rows) => rows.length)).toBe(3);

    await page.getByLabel('Name').fill('Events by name');
    await page.getByRole('button', { name: 'Save query' }).click();
    const savedList = page.getByRole('list', { name: 'Saved queries' });
    await savedList.getByRole('button', { name: 'Run Events by name' }).waitFor();
    const stored = await server.request('GET', `/api/v1/projects/${own.id}/saved-queries`, { bearer: own.account.adminToken });
    expect(stored.body).toEqual([expect.objectContaining({ name: 'Events by name', sql: query, created_by: own.account.email })]);

    await page.reload();
    await page.getByRole('list', { name: 'Columns of events' }).getByText('event_name', { exact: true }).waitFor();
    await page.getByText('Run a query to see its rows here.').waitFor();
    await writeQuery(page, 'SELECT 1 AS one');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => resultRows(page)).toEqual([['1']]);
    await page.getByRole('button', { name: 'Run Events by name' }).click();
    await expect
      .poll(() => resultRows(page))
      .toEqual([
        ['feedback_list', '2', 'say "hi", feedback_list', 'line1\nline2', 'NULL'],
        ['note_created', '1', 'say "hi", note_created', 'line1\nline2', 'NULL'],
        ['submit_feedback', '1', 'say "hi", submit_feedback', 'line1\nline2', 'NULL'],
      ]);
    expect(await editorText(page)).toBe(query);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^query-result-[\d-]+T[\d-]+\.csv$/);
    expect(await readFile(await download.path(), 'utf8')).toBe(
      [
        'event_name,n,note,multi,nothing',
        'feedback_list,2,"say ""hi"", feedback_list","line1\nline2",',
        'note_created,1,"say ""hi"", note_created","line1\nline2",',
        'submit_feedback,1,"say ""hi"", submit_feedback","line1\nline2",',
        '',
      ].join('\r\n'),
    );

    // Both runs are in this browser's history, the newest first, and open into the editor.
    const history = page.getByRole('list', { name: 'Recent runs' }).getByRole('listitem');
    await expect.poll(() => history.count()).toBe(2);
    expect(await history.first().locator('code').textContent()).toBe(query);
    await history.nth(1).getByRole('button').click();
    await expect.poll(() => editorText(page)).toBe('SELECT 1 AS one');

    // Delete, after confirming.
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Delete Events by name' }).click();
    await page.getByText('No saved query yet.').waitFor();
    const after = await server.request('GET', `/api/v1/projects/${own.id}/saved-queries`, { bearer: own.account.adminToken });
    expect(after.body).toEqual([]);
  });

  it('pages through a long result with a sticky header in a keyboard-scrollable region', async () => {
    const { page } = await consoleTab();
    await writeQuery(page, "SELECT number, repeat('wide ', 40) AS padding FROM numbers(120)");
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => page.getByTestId('page-range').textContent()).toBe('Rows 1–50 of 120');
    expect((await resultRows(page))[0]?.[0]).toBe('0');
    await page.getByRole('button', { name: 'Next rows' }).click();
    expect(await page.getByTestId('page-range').textContent()).toBe('Rows 51–100 of 120');
    expect((await resultRows(page))[0]?.[0]).toBe('50');
    await page.getByRole('button', { name: 'Next rows' }).click();
    expect(await page.getByTestId('page-range').textContent()).toBe('Rows 101–120 of 120');
    expect(await page.getByRole('button', { name: 'Next rows' }).isDisabled()).toBe(true);
    await page.getByLabel('Rows per page').selectOption('100');
    expect(await page.getByTestId('page-range').textContent()).toBe('Rows 1–100 of 120');

    const region = page.getByRole('region', { name: 'Result rows' });
    expect(await region.getAttribute('tabindex')).toBe('0');
    expect(
      await region
        .locator('th')
        .first()
        .evaluate((th) => (globalThis as any).getComputedStyle(th).position),
    ).toBe('sticky');
    // The region scrolls, the page does not: scrolled down, the header row is still at its top.
    await region.evaluate((element) => {
      element.scrollTop = 400;
    });
    const [regionTop, headerTop] = await Promise.all([
      region.evaluate((element) => element.getBoundingClientRect().top),
      region
        .locator('th')
        .first()
        .evaluate((th) => th.getBoundingClientRect().top),
    ]);
    expect(Math.abs(headerTop - regionTop)).toBeLessThanOrEqual(2);
  });

  it('shows the engine’s refusal of a hostile query, and no row of another project', async () => {
    const { page } = await consoleTab();
    const alert = page.getByTestId('query-error');

    // A system table: refused by the isolation, in the API's words.
    const systemQuery = 'SELECT name FROM system.tables';
    const systemRefusal = await apiRefusal(systemQuery);
    await writeQuery(page, systemQuery);
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => alert.locator('pre').textContent()).toBe(systemRefusal);
    expect(systemRefusal).toContain('system.tables');

    // The materialized view that would read every project's rollups: refused.
    const viewQuery = 'SELECT * FROM events_daily_mv';
    const viewRefusal = await apiRefusal(viewQuery);
    await writeQuery(page, viewQuery);
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => alert.locator('pre').textContent()).toBe(viewRefusal);

    // Another project's id: the engine's filter leaves no row.
    await writeQuery(page, `SELECT event_name, user_id FROM events WHERE project_id = '${stranger.id}'`);
    await page.keyboard.press('Control+Enter');
    await page.getByText('The query returned no rows.').waitFor();
    expect(await meta(page)).toMatch(/^0 rows/);
    expect(await page.locator('main').textContent()).not.toContain('FOREIGN');

    // An error of ClickHouse itself: its code and message, as it gave them.
    const badQuery = 'SELECT no_such_column FROM events';
    const engineError = await apiRefusal(badQuery);
    const code = /Code: (\d+)\./.exec(engineError)?.[1];
    expect(code).toBeDefined();
    await writeQuery(page, badQuery);
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => alert.locator('pre').textContent()).toBe(engineError);
    expect(await page.getByTestId('error-code').textContent()).toBe(code);
    expect(await alert.textContent()).toContain('ClickHouse refused the query');
  });

  it('asks to wait when the account already runs two queries (429), then retries', async () => {
    const { page } = await consoleTab();
    // Two queries of the same account that run until the route's time limit (5 s with chDB).
    const slow = 'SELECT sum(number) FROM numbers(100000000000)';
    const busy = [0, 1].map(() =>
      server.request('POST', `/api/v1/projects/${own.id}/sql`, { bearer: own.account.adminToken, body: { query: slow } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await writeQuery(page, 'SELECT 7 AS seven');
    await page.keyboard.press('Control+Enter');
    await page.getByText(/Too many requests: the service asks to wait/).waitFor();
    // They end at the limit: the one in the engine with a 400 (timed out), the one waiting for the
    // engine's single turn with a 429 (its time ran out while it waited).
    for (const response of await Promise.all(busy)) expect([400, 429]).toContain(response.status);
    const retry = page.getByRole('button', { name: /^Retry/ });
    await expect.poll(() => retry.textContent()).toBe('Retry now');
    await retry.click();
    await expect.poll(() => resultRows(page)).toEqual([['7']]);
  });

  it('says what the Free plan leaves out: custom event names are not readable', async () => {
    const free = await createProject(server, { plan: 'free', name: 'Free app' });
    await seedAnalytics(server, free.id, 'free', { customEvent: 'note_created' });
    const { page } = await consoleTab(free);
    await writeQuery(page, 'SELECT DISTINCT event_name FROM events ORDER BY event_name');
    await page.keyboard.press('Control+Enter');
    await expect.poll(() => resultRows(page)).toEqual([['feedback_list'], ['submit_feedback']]);
    expect(await page.getByTestId('scope-notice').textContent()).toContain('The Pro and Team plans read every event name');
  });

  it('works at 390x844: a wide result scrolls inside its region, axe finds nothing serious', async () => {
    const { page } = await consoleTab(own, VIEWPORTS.phone);
    await writeQuery(page, "SELECT number, repeat('wide ', 40) AS padding, toString(number) AS text FROM numbers(30)");
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => page.getByTestId('page-range').textContent()).toBe('Rows 1–30 of 30');
    expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'sql-console-phone.png'), fullPage: true });
  });
});
