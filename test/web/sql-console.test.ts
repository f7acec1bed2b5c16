import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashSecret } from '../../src/core/secrets.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { addMember, createProject, setSuspended, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, seriousViolations, signIn, useBrowser, VIEWPORTS } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/** UPDATE_SCREENSHOTS=1 also writes docs/screenshots/sql-console*.png. */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
/*
 * The SQL console (/projects/:id/sql) in Chromium against the real service: queries typed in the
 * editor run through POST /projects/:id/sql with all of its isolation (embedded ClickHouse), saved
 * queries live in PostgreSQL, and what the engine answers (rows or its refusal) is what the page shows.
 */
// The route's time limit, longer than its embedded default of 5 s: the 429 test holds the account's
// two turns with two slow queries, and on a loaded machine 5 s left too little room to see them held.
const SQL_TIME_LIMIT_MS = 12_000;
const server = useTestServer({ workers: false, env: { PROJECT_SQL_TIMEOUT_MS: String(SQL_TIME_LIMIT_MS) } });
const browser = useBrowser();
let own: TestProject;
let stranger: TestProject;
const tabs: DashboardTab[] = [];

beforeAll(async () => {
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
    // Two queries of the same account that run until the route's time limit (SQL_TIME_LIMIT_MS).
    const slow = 'SELECT sum(number) FROM numbers(100000000000)';
    const sql = (query: string) =>
      server.request('POST', `/api/v1/projects/${own.id}/sql`, { bearer: own.account.adminToken, body: { query } });
    let busy: ReturnType<typeof sql>[] = [];
    let heldSince = 0;
    // They hold the account's turns once a third query is refused at once, not after waiting for
    // a turn: a probe that came before the second slow one took its place in the queue, and its
    // late 429 (or the slow ones' end) left the page nothing to be refused by. So: a probe refused
    // within a second, while the pair has most of its time left; else a new pair.
    await eventually('the account’s two turns held, a third query refused at once', 50_000, async () => {
      if (Date.now() - heldSince > SQL_TIME_LIMIT_MS / 3) {
        await Promise.all(busy);
        heldSince = Date.now();
        busy = [sql(slow), sql(slow)];
        await sleep(500);
      }
      const sent = Date.now();
      const probe = await sql('SELECT 1');
      return probe.status === 429 && Date.now() - sent < 1_000 && Date.now() - heldSince < SQL_TIME_LIMIT_MS / 3;
    });
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

describe('a saved query as an API endpoint, from the console', () => {
  it('opens an example, saves it, publishes it: URL, one-time token, curl and fetch; the endpoint answers', async () => {
    const { page } = await consoleTab();
    await page.getByRole('list', { name: 'Example queries' }).getByRole('button', { name: 'Open Events by a property (country)' }).click();
    await expect.poll(() => editorText(page)).toContain('properties.country::String');
    await page.getByLabel('Name').fill('Countries');
    await page.getByRole('button', { name: 'Save query' }).click();
    const item = page.getByRole('list', { name: 'Saved queries' }).getByRole('listitem').filter({ hasText: 'Countries' });
    await item.getByText('API endpoint').click();
    await item.getByRole('button', { name: 'Publish as endpoint' }).click();
    const token = (await item.getByRole('status').locator('code').textContent()) ?? '';
    expect(token).toMatch(/^fbq_/);
    const url = ((await item.locator('code', { hasText: '/api/v1/q/' }).textContent()) ?? '').replace(/^GET /, '');
    expect(url).toMatch(/\/api\/v1\/q\/[0-9a-f-]{36}$/);
    expect(await item.locator('pre').first().textContent()).toContain(`curl -H "Authorization: Bearer ${token}" '${url}'`);
    expect(await item.locator('pre').nth(1).textContent()).toContain(`await fetch('${url}'`);
    const answer = await fetch(url.replace(/^https?:\/\/[^/]+/, server.url), { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
    await page.screenshot({ path: path.join(process.env.TMPDIR ?? '/tmp', 'sql-console-endpoint.png'), fullPage: true });
  });
});

/*
 * "Connect a tool" (components/connect-tool.tsx): the credentials of the project's read-only
 * ClickHouse interface (issue 29) through the real API, and the snippets filled in with them.
 */
describe('the SQL console’s Connect a tool panel', () => {
  const storedCredentials = async (project: TestProject) =>
    (await server.request('GET', `/api/v1/projects/${project.id}/clickhouse-credentials`, { bearer: project.account.adminToken })).body;

  it('creates a credential, shows its password once, fills the snippets, and revokes it after confirming', async () => {
    const project = await createProject(server, { plan: 'team', name: 'Connect' });
    const tab = await consoleTab(project);
    const { page, context } = tab;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const panel = page.getByRole('region', { name: 'Connect a tool' });
    await panel.getByText('No credential yet: create one to connect a tool.').waitFor();

    await panel.getByRole('button', { name: 'Create a credential' }).click();
    const password = (await panel.getByTestId('new-password').textContent()) ?? '';
    expect(password).toMatch(/^fbch_[A-Za-z0-9_-]{43}$/);
    // The password on the page is the one the service stored (as its hash), and the focus is on it.
    const [stored] = await server.sql<{ password_hash: Buffer }[]>`
      select password_hash from clickhouse_credentials where project_id = ${project.id}`;
    expect(stored?.password_hash.equals(hashSecret(password))).toBe(true);
    expect(await page.evaluate('document.activeElement.getAttribute("aria-labelledby")')).toBe('new-password-heading');
    await panel.getByRole('heading', { name: 'Copy the password now: it will not be shown again' }).waitFor();
    expect(await panel.getByTestId('new-username').textContent()).toBe(project.id);

    // The list shows it: the username (the project id), when it was made, never used.
    const [credential] = await storedCredentials(project);
    const row = panel.getByTestId('credential-table').locator('tbody tr');
    await expect.poll(() => row.count()).toBe(1);
    const cells = await row.locator('td').allTextContents();
    expect(cells.slice(0, 3)).toEqual([project.id, expect.stringMatching(/^\d+ \w+ \d{4}, \d\d:\d\d UTC$/), 'Never']);
    expect(credential).toEqual(expect.objectContaining({ username: project.id, last_used_at: null }));

    // The @clickhouse/client snippet, first: url, pathname, username and password filled in.
    const snippet = panel.getByTestId('connect-snippet');
    const node = (await snippet.textContent()) ?? '';
    for (const line of [`url: '${server.url}'`, "pathname: '/clickhouse'", `username: '${project.id}'`, `password: '${password}'`]) {
      expect(node).toContain(line);
    }
    // The tabs move with the arrow keys, Home and End; the copied curl command holds the real values.
    await panel.getByRole('tab', { name: '@clickhouse/client' }).focus();
    await page.keyboard.press('ArrowRight');
    const curlTab = panel.getByRole('tab', { name: 'curl' });
    expect(await curlTab.getAttribute('aria-selected')).toBe('true');
    expect(await curlTab.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
    await panel.getByRole('tabpanel').getByRole('button', { name: 'Copy' }).click();
    await panel.getByRole('tabpanel').getByText('Copied.').waitFor();
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(copied).toBe(await snippet.textContent());
    expect(copied).toContain(`curl -u ${project.id}:${password} '${server.url}/clickhouse/?query=SELECT+1'`);
    await curlTab.focus();
    await page.keyboard.press('End');
    expect(await panel.getByRole('tab', { name: 'DBeaver' }).getAttribute('aria-selected')).toBe('true');
    const settings = await snippet.locator('.connect-setting').evaluateAll((rows) => rows.map((r) => r.textContent));
    const { hostname, port } = new URL(server.url);
    expect(settings).toEqual([
      `Host${hostname}`,
      `Port${port}`,
      'SSLOff',
      'Path/clickhouse',
      `Username${project.id}`,
      `Password${password}`,
    ]);
    await page.keyboard.press('Home');
    expect(await panel.getByRole('tab', { name: '@clickhouse/client' }).getAttribute('aria-selected')).toBe('true');

    expect(await seriousViolations(page)).toEqual([]);
    if (SCREENSHOTS) await panel.screenshot({ path: path.join(SCREENSHOTS, 'sql-console-connect.png') });

    // Put away: the password leaves the page (the snippets read it from a variable), and the focus returns to the button.
    await panel.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Create a credential');
    expect(await page.locator('body').textContent()).not.toContain(password);
    expect(await snippet.textContent()).toContain('password: process.env.CLICKHOUSE_PASSWORD');
    await page.reload();
    await panel.getByTestId('credential-table').waitFor();
    expect(await page.locator('body').textContent()).not.toContain(password);
    for (const url of tab.requestedUrls) expect(url).not.toContain(password);

    // Last used, once the interface has used it.
    await server.sql`update clickhouse_credentials set last_used_at = '2026-11-20T10:30:00Z' where project_id = ${project.id}`;
    await page.reload();
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('20 Nov 2026, 10:30 UTC');

    // Revoke asks first: dismissed, nothing happens; accepted, it is gone from the page and the API.
    page.once('dialog', (dialog) => dialog.dismiss());
    await panel.getByRole('button', { name: /^Revoke the credential created / }).click();
    expect(await storedCredentials(project)).toHaveLength(1);
    let question = '';
    page.once('dialog', (dialog) => {
      question = dialog.message();
      void dialog.accept();
    });
    await panel.getByRole('button', { name: /^Revoke the credential created / }).click();
    await panel.getByText('No credential yet: create one to connect a tool.').waitFor();
    expect(question).toMatch(/^Revoke the credential created .* Tools that use it are refused from their next request\.$/);
    expect(await storedCredentials(project)).toEqual([]);
  });

  it('lets a Team member’s token create one, and says who may when the API refuses (403), or that the project is suspended', async () => {
    const project = await createProject(server, { plan: 'team', name: 'Team connect' });
    const member = await addMember(server, project);
    const tab = await openTab(browser);
    tabs.push(tab);
    await signIn(tab, server, member.adminToken, `/projects/${project.id}/sql`);
    const panel = tab.page.getByRole('region', { name: 'Connect a tool' });
    await panel.getByRole('button', { name: 'Create a credential' }).click();
    await panel.getByTestId('new-password').waitFor();
    expect(await storedCredentials(project)).toHaveLength(1);

    // Another account's project: the API answers 403, the panel says why in words.
    await tab.page.goto(`${server.url}/projects/${stranger.id}/sql`);
    const refusal = tab.page.getByRole('region', { name: 'Connect a tool' }).getByRole('alert');
    await expect
      .poll(() => refusal.textContent())
      .toMatch(/^Not allowed \(no access to this project\)\. Credentials are created and revoked with the account owner’s token/);

    // A suspended project: no token changes that, and the panel does not say otherwise.
    await setSuspended(server, project, true);
    await tab.page.goto(`${server.url}/projects/${project.id}/sql`);
    await expect
      .poll(() => refusal.textContent())
      .toBe(
        'Not allowed (project is suspended). The operator has suspended this project: its credentials cannot be listed or changed until it is resumed.',
      );
  });
});
