import { afterAll, describe, expect, it, vi } from 'vitest';
import { until } from '../helpers/eventually.js';
import { useTestServer } from '../helpers/server.js';
import { startGithubStandin, startLinearStandin } from '../helpers/trackers.js';
import { accountWithProject, createFeedback } from './api.js';
import { BROWSER_TEST_TIMEOUTS, type DashboardTab, openTab, signIn, useBrowser } from './browser.js';

vi.setConfig(BROWSER_TEST_TIMEOUTS);
/*
 * The issue trackers in the dashboard (issue 42), in Chromium against the real service and the
 * stand-ins of GitHub and Linear (test/helpers/trackers.ts): connecting each with its token and
 * the picker of what it reaches, the webhook URL and secret to paste, the status map editor with
 * the tracker's own states, and on an item: Create issue, Link issue, the issue's key and state.
 */
const server = useTestServer({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true' } });
const browser = useBrowser();
const tabs: DashboardTab[] = [];

afterAll(() => {
  for (const { problems } of tabs) expect(problems, 'console errors or CSP violations').toEqual([]);
});

async function tab(): Promise<DashboardTab> {
  const opened = await openTab(browser);
  tabs.push(opened);
  return opened;
}

describe('issue trackers', () => {
  it('connects GitHub and Linear from Settings, edits a status map, and creates and links an item’s issues', async () => {
    const github = await startGithubStandin({ extraRepositories: 2 });
    const linear = await startLinearStandin();
    const owner = await accountWithProject(server, 'pro', 'Tracked app');
    const t = await tab();
    await signIn(t, server, owner.token, `/projects/${owner.projectId}/settings?section=integrations`);
    const section = t.page.getByRole('region', { name: 'Issue trackers' });
    await section.getByText('No tracker connected yet.').waitFor();

    // GitHub: the token, the repositories it reaches, the webhook URL and the secret shown once.
    await section.getByLabel('Tracker', { exact: true }).selectOption('github');
    await section.getByLabel('Fine-grained token (Issues: read and write)').fill(github.token);
    await section.getByLabel('API address (optional)').fill(github.url);
    await section.getByRole('button', { name: 'Find repositories' }).click();
    const picker = section.getByLabel('Repository for new issues');
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['acme/app', 'acme/other-1 (private)', 'acme/other-2']);
    await section.getByRole('button', { name: 'Connect GitHub' }).click();
    const setup = t.page.getByTestId('webhook-setup');
    await expect
      .poll(() => setup.getByTestId('webhook-url').textContent())
      .toMatch(/\/api\/v1\/integrations\/github\/webhook\?integration=/);
    const secret = (await setup.getByTestId('one-time-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    const [saved] = (await server.request('GET', `/api/v1/projects/${owner.projectId}/integrations`, { bearer: owner.token })).body;
    expect(saved).toMatchObject({ kind: 'github', repository: 'acme/app', api_url: github.url });
    github.webhook = { url: `${server.url}/api/v1/integrations/github/webhook?integration=${saved.id}`, secret };
    await setup.getByRole('button', { name: 'I have copied it' }).click();

    // Its status map: GitHub's states, and a label changed.
    const row = section.getByTestId('tracker-github');
    await row.getByText('Status map', { exact: true }).click();
    const map = row.getByTestId('status-map-github');
    expect(await map.getByLabel('Rejected: state of the issue').locator('option').allTextContents()).toEqual([
      'Open',
      'Closed (completed)',
      'Closed as not planned',
    ]);
    await map.getByLabel('Completed: label').fill('shipped');
    await map.getByRole('button', { name: 'Save status map' }).click();
    await until('the label saved', 15_000, async () => {
      const read = await server.request('GET', `/api/v1/projects/${owner.projectId}/integrations/${saved.id}`, { bearer: owner.token });
      return read.body.status_map.labels.completed === 'shipped';
    });
    // "Every new item creates an issue": on, saved; off again (the item below gets its issue by hand).
    const autoCreate = row.getByLabel('Create an issue for every new item');
    const autoCreateSaved = (on: boolean) =>
      until(`auto_create ${on}`, 15_000, async () => {
        const read = await server.request('GET', `/api/v1/projects/${owner.projectId}/integrations/${saved.id}`, { bearer: owner.token });
        return read.body.auto_create === on;
      });
    expect(await autoCreate.isChecked()).toBe(false);
    // click, not check(): the box shows the saved setting, so it turns on once the change is saved.
    await autoCreate.click();
    await autoCreateSaved(true);
    await expect.poll(() => autoCreate.isChecked()).toBe(true);
    await autoCreate.click();
    await autoCreateSaved(false);
    await expect.poll(() => autoCreate.isChecked()).toBe(false);

    // Linear: the teams the key reaches; the editor offers the team's own workflow states.
    await section.getByLabel('Tracker', { exact: true }).selectOption('linear');
    await section.getByLabel('Linear API key').fill(linear.apiKey);
    await section.getByLabel('API address (optional)').fill(linear.url);
    await section.getByRole('button', { name: 'Find teams' }).click();
    await expect.poll(() => section.getByLabel('Team for new issues').locator('option').allTextContents()).toEqual(['Engineering (ENG)']);
    await section.getByRole('button', { name: 'Connect Linear' }).click();
    await t.page.getByTestId('webhook-setup').getByRole('button', { name: 'I have copied it' }).click();
    const linearRow = section.getByTestId('tracker-linear');
    await linearRow.getByText('Status map', { exact: true }).click();
    const linearMap = linearRow.getByTestId('status-map-linear');
    await expect.poll(() => linearMap.getByLabel('Completed: state of the issue').locator('option').allTextContents()).toContain('Done');
    await expect.poll(() => linearMap.getByText('In Review (started)').count()).toBe(1);

    // On an item: Create issue in GitHub, Link an existing Linear issue.
    const item = await createFeedback(server, owner.apiKey, 'Keyboard shortcuts');
    const existing = linear.addIssue('Shortcuts, reported in Linear');
    await t.page.goto(`${server.url}/projects/${owner.projectId}/feedback/${item.id}`);
    const issues = t.page.getByRole('region', { name: 'Issues' });
    await issues.getByLabel('Tracker', { exact: true }).selectOption({ label: 'GitHub · acme/app' });
    await issues.getByRole('button', { name: 'Create issue' }).click();
    const linked = issues.getByTestId('linked-issue');
    await expect.poll(() => linked.first().textContent()).toContain('GitHub #1');
    expect(await linked.first().getByRole('link').getAttribute('href')).toBe('https://github.example/acme/app/issues/1');
    expect(github.issues.get(1)?.title).toBe('Keyboard shortcuts');
    // One tracker left to link with: no choice to make.
    await issues.getByLabel('Existing issue (#123, ENG-42 or its URL)').fill(existing.identifier);
    await issues.getByRole('button', { name: 'Link issue' }).click();
    await expect.poll(() => linked.count()).toBe(2);
    expect(await linked.nth(1).textContent()).toContain('Linear ENG-1');
    expect(await linked.nth(1).getByTestId('linked-issue-state').textContent()).toBe('Backlog');

    // The issue is closed in GitHub: the item is completed, the link shows the state.
    await github.closeIssue(1);
    await until('the item completed', 15_000, async () => {
      const read = await server.request('GET', `/api/v1/projects/${owner.projectId}/feedbacks/${item.id}`, { bearer: owner.token });
      return read.body.status === 'completed';
    });
    await t.page.reload();
    await expect
      .poll(() => t.page.getByRole('region', { name: 'Issues' }).getByTestId('linked-issue-state').first().textContent())
      .toBe('Closed');
    // What the webhook did, in the tracker's row.
    await t.page.goto(`${server.url}/projects/${owner.projectId}/settings?section=integrations`);
    const githubRow = t.page.getByTestId('tracker-github');
    await githubRow.getByText('Last webhooks', { exact: true }).click();
    await expect.poll(() => githubRow.getByTestId('webhooks-github').textContent()).toContain('status_changed');
  });
});
