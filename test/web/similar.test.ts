import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { openTab, signIn, useBrowser } from './browser.js';
import { type HostPage, startHostPage } from './host-page.js';

/*
 * Similar requests in Chromium (issue 40, docs/widget.md "Similar requests"): a signed user types a
 * near-duplicate title into the widget's form, sees the existing item under the field, and votes
 * for it instead of filing a copy; the owner's inbox marks a likely duplicate and merges the newer
 * item into the older one with one click.
 */

/** The machine is shared: a page may take seconds to answer. */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 250 });

const server = useTestServer();
const browser = useBrowser();
let host: HostPage;
let project: Awaited<ReturnType<typeof accountWithProject>> & { publishableKey: string; secret: string };
let darkMode: { id: string };

beforeAll(async () => {
  const base = await accountWithProject(server, 'team', 'Acme Notes');
  const secret = await server.request('POST', `/api/v1/projects/${base.projectId}/identity-secret`, { bearer: base.token });
  expect(secret.status).toBe(200);
  project = { ...base, publishableKey: secret.body.publishable_key, secret: secret.body.identity_secret };
  darkMode = await createFeedback(server, project.apiKey, 'Dark mode', { description: 'The white background hurts my eyes at night.' });
  await createFeedback(server, project.apiKey, 'Export notes as Markdown');
  const token = await new SignJWT({ sub: 'customer-7' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(project.secret));
  host = await startHostPage(server.url, project.publishableKey, token);
}, 120_000);

describe('similar requests in the widget and the inbox', () => {
  it('shows the existing item under the title as the user types a near-duplicate, and votes for it instead', async () => {
    const { page, problems, requestedUrls } = await openTab(browser);
    await page.goto(host.url);
    await page.getByRole('button', { name: 'Give feedback' }).click();
    const panel = page.frameLocator('iframe[title="Feedback"]');
    await panel.getByRole('button', { name: 'New feedback' }).click();
    // Typed key by key, as a person types: one request per pause, at most one in flight.
    await panel.getByLabel('Title').pressSequentially('darkmode for nigth use', { delay: 40 });
    const instead = panel.getByRole('button', { name: 'Vote for “Dark mode” instead' });
    await eventually(() => instead.isVisible()).toBe(true);
    const asked = requestedUrls.filter((url) => url.includes('/feedbacks/similar'));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.length).toBeLessThan('darkmode for nigth use'.length - 2);
    await page.screenshot({ path: '/tmp/cl/widget-similar.png' });
    await instead.click();
    // The form closed on the existing item, with the vote counted and no copy filed.
    await eventually(() => panel.getByRole('heading', { name: 'Dark mode' }).isVisible()).toBe(true);
    await eventually(() => panel.getByText('Your vote went to “Dark mode”').isVisible()).toBe(true);
    const item = await server.request('GET', `/api/v1/feedbacks/${darkMode.id}`, {
      apiKey: project.apiKey,
      headers: { 'X-User-Id': 'customer-7' },
    });
    expect(item.body).toMatchObject({ vote_count: 2, has_voted: true });
    const all = await server.request('GET', `/api/v1/projects/${project.projectId}/feedbacks`, { bearer: project.token });
    expect(all.body.map((feedback: { title: string }) => feedback.title).sort()).toEqual(['Dark mode', 'Export notes as Markdown']);
    expect(problems).toEqual([]);
  }, 180_000);

  it('marks a likely duplicate in the inbox and merges the newer item into the older one with one click', async () => {
    const copy = await createFeedback(server, project.apiKey, 'Dark mode please', { description: 'A dark theme for the evening.' });
    const tab = await openTab(browser);
    await signIn(tab, server, project.token, `/projects/${project.projectId}/feedback`);
    // The row whose own title is the copy (the original's row names the copy in its mark too).
    const rowOf = (title: string) =>
      tab.page.locator('tbody tr', { has: tab.page.locator('td:first-child > a', { hasText: new RegExp(`^${title}$`) }) });
    const row = rowOf('Dark mode please');
    await eventually(() => row.getByTestId('likely-duplicate').isVisible()).toBe(true);
    await tab.page.screenshot({ path: '/tmp/cl/inbox-duplicate.png' });
    await row.getByRole('button', { name: 'Merge into older' }).click();
    await eventually(async () => {
      const merged = await server.request('GET', `/api/v1/projects/${project.projectId}/feedbacks/${copy.id}`, { bearer: project.token });
      return merged.body.merged_into_id;
    }).toBe(darkMode.id);
    await eventually(() => rowOf('Dark mode please').count()).toBe(0);
    await eventually(() => rowOf('Dark mode').count()).toBe(1);
    await tab.page.screenshot({ path: '/tmp/cl/inbox-after-merge.png' });
    expect(tab.problems).toEqual([]);
  }, 180_000);
});
