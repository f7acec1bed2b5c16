import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { openTab, signIn, useBrowser } from './browser.js';

/*
 * The dashboard's Changelog page in Chromium (issue 40, docs/dashboard.md): an owner writes an
 * entry, links an item found by its title, saves the draft and sees the service's sanitized
 * preview, publishes it with its item completed and sees who was told (the service's own workers
 * send the emails), and schedules another.
 */

const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 250 });

// The workers run: publishing is followed by its emails, which "Who was told" counts.
const server = useTestServer();
const browser = useBrowser();
let project: Awaited<ReturnType<typeof accountWithProject>>;

beforeAll(async () => {
  project = await accountWithProject(server, 'team', 'Acme Notes');
  const item = await createFeedback(server, project.apiKey, 'Dark mode', { userEmail: 'submitter@example.com' });
  for (const [userId, email] of [
    ['voter-1', 'voter-1@example.com'],
    ['voter-2', 'voter-2@example.com'],
  ]) {
    const voted = await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, {
      apiKey: project.apiKey,
      body: { userId, email, notifyStatusChange: true },
    });
    expect(voted.status).toBe(200);
  }
}, 120_000);

describe('the Changelog page', () => {
  it('writes, links, previews, publishes and schedules entries', async () => {
    const tab = await openTab(browser);
    const { page } = tab;
    // Reached from the inbox (the header's row of pages is full).
    await signIn(tab, server, project.token, `/projects/${project.projectId}/feedback`);
    await page.getByRole('link', { name: /^Changelog: tell users what shipped/ }).click();
    await page.waitForURL((url) => url.pathname === `/projects/${project.projectId}/changelog`);
    await page.getByLabel('Title').fill('Dark mode is here');
    await page.getByLabel('Body (Markdown)').fill('Switch it on in **Settings**. <script>window.__xss=1</script>');
    await page.getByLabel('Category (optional)').fill('New');
    await page.getByLabel('Find an item to link').fill('dark');
    await page.getByRole('button', { name: 'Link Dark mode' }).click();
    await eventually(() => page.getByRole('list', { name: 'Linked items' }).textContent()).toContain('Dark mode');
    await page.getByRole('button', { name: 'Save draft' }).click();
    const preview = page.locator('.changelog-preview');
    await eventually(() => preview.locator('strong').textContent()).toBe('Settings');
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    await page.getByLabel('Mark the linked items completed when it publishes').check();
    await page.getByRole('button', { name: 'Publish now' }).click();
    await eventually(() => page.locator('.changelog-editor').textContent()).toContain('Published: published');
    // The two voters and the submitter, one email each, counted from the delivery log.
    await eventually(() => page.locator('.changelog-told').textContent()).toContain('Emails3 sent');
    expect(await page.locator('.changelog-told').textContent()).toContain('Integrations0 sent');
    expect(await page.getByLabel('Mark the linked items completed when it publishes').isDisabled()).toBe(true);
    await page.screenshot({ path: '/tmp/cl/changelog-editor.png', fullPage: true });
    const readers = await server.request('GET', '/api/v1/changelog', { apiKey: project.apiKey });
    expect(readers.body).toMatchObject([{ title: 'Dark mode is here', category: 'New', linked_items: [{ title: 'Dark mode' }] }]);
    const shipped = await server.request('GET', `/api/v1/feedbacks/${readers.body[0].linked_items[0].id}`, { apiKey: project.apiKey });
    expect(shipped.body.status).toBe('completed');

    await page.getByRole('button', { name: 'Write a new entry instead' }).click();
    await page.getByLabel('Title').fill('Tags, soon');
    await page.getByLabel('Body (Markdown)').fill('Tags are coming.');
    await page.getByLabel('Publish at').fill('2031-03-01T09:00');
    await page.getByRole('button', { name: 'Schedule' }).click();
    await eventually(() => page.locator('.changelog-editor').textContent()).toContain('Scheduled: publishes itself');
    const all = await server.request('GET', `/api/v1/projects/${project.projectId}/changelog`, { bearer: project.token });
    expect(all.body.map((entry: { title: string; state: string }) => [entry.title, entry.state])).toEqual([
      ['Tags, soon', 'scheduled'],
      ['Dark mode is here', 'published'],
    ]);
    expect(tab.problems).toEqual([]);
  }, 180_000);
});
