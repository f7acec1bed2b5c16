import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { openTab, useBrowser } from './browser.js';
import { type HostPage, startHostPage } from './host-page.js';

/*
 * The changelog's readers in Chromium (issue 40, docs/widget.md "What's new"): the board's
 * Changelog page (its entries, their sanitized HTML, an XSS payload kept inert, the feed link) and
 * the widget's "What's new" tab, whose unread badge counts entries published since the visitor
 * last opened it, across reloads (browser storage).
 */

const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 250 });

const server = useTestServer({ workers: false });
const browser = useBrowser();
let host: HostPage;
let project: Awaited<ReturnType<typeof accountWithProject>> & { slug: string };

async function publish(title: string, body: string, linked: string[] = []) {
  const entry = await server.request('POST', `/api/v1/projects/${project.projectId}/changelog`, {
    bearer: project.token,
    body: { title, body, linkedFeedbackIds: linked },
  });
  expect(entry.status, JSON.stringify(entry.body)).toBe(200);
  await server.request('POST', `/api/v1/projects/${project.projectId}/changelog/${entry.body.id}/publish`, { bearer: project.token });
}

beforeAll(async () => {
  const base = await accountWithProject(server, 'team', 'Acme Notes');
  const secret = await server.request('POST', `/api/v1/projects/${base.projectId}/identity-secret`, { bearer: base.token });
  await server.request('PATCH', `/api/v1/projects/${base.projectId}`, { bearer: base.token, body: { boardPublic: true } });
  project = { ...base, slug: secret.body.slug };
  const item = await createFeedback(server, project.apiKey, 'Dark mode');
  await publish('Dark mode is here', 'Switch it on in **Settings**. <img src=x onerror="window.__xss=1"> [docs](https://docs.example)', [
    item.id,
  ]);
  await publish('Faster sync', 'Sync takes a second now.');
  const token = await new SignJWT({ sub: 'customer-9' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret.body.identity_secret));
  host = await startHostPage(server.url, secret.body.publishable_key, token);
}, 120_000);

describe('the changelog in the board and the widget', () => {
  it('the board’s Changelog page lists the entries, newest first, their HTML inert, with the feed link', async () => {
    const { page, problems } = await openTab(browser);
    await page.goto(`${server.url}/board/${project.slug}/changelog`);
    await eventually(() => page.getByRole('heading', { name: 'Faster sync' }).isVisible()).toBe(true);
    const titles = await page.locator('.changelog-entry h2').allTextContents();
    expect(titles).toEqual(['Faster sync', 'Dark mode is here']);
    await expect.poll(() => page.locator('.changelog-body strong').first().textContent()).toBe('Settings');
    expect(await page.locator('.changelog-body a').first().getAttribute('rel')).toBe('noopener nofollow');
    expect(await page.locator('.changelog img').count()).toBe(0);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.getByRole('link', { name: 'Follow in a feed reader (Atom)' }).getAttribute('href')).toBe(
      `/board/${project.slug}/changelog.atom`,
    );
    // A linked item opens on the board.
    await page.getByRole('link', { name: 'Dark mode', exact: true }).click();
    await eventually(() => page.getByRole('heading', { name: 'Dark mode', exact: true }).isVisible()).toBe(true);
    await page.screenshot({ path: '/tmp/cl/board-changelog.png' });
    expect(problems).toEqual([]);
  }, 180_000);

  it('the widget’s What’s new tab: the badge counts unread entries, clears when opened, and remembers across reloads', async () => {
    const { page, problems } = await openTab(browser);
    await page.goto(host.url);
    await page.getByRole('button', { name: 'Give feedback' }).click();
    const panel = page.frameLocator('iframe[title="Feedback"]');
    await eventually(() => panel.getByRole('button', { name: "What's new, 2 unread" }).isVisible()).toBe(true);
    await page.screenshot({ path: '/tmp/cl/widget-badge.png' });
    await panel.getByRole('button', { name: /What's new/ }).click();
    await eventually(() => panel.getByRole('heading', { name: 'Dark mode is here' }).isVisible()).toBe(true);
    await eventually(() => panel.getByRole('button', { name: "What's new", exact: true }).isVisible()).toBe(true);
    // Another load of the panel, the same browser: nothing is unread.
    await page.reload();
    await page.getByRole('button', { name: 'Give feedback' }).click();
    await eventually(() => panel.getByRole('button', { name: "What's new", exact: true }).isVisible()).toBe(true);
    // A new entry makes it one.
    await publish('Tags for notes', 'Tag notes and filter by tag.');
    await page.reload();
    await page.getByRole('button', { name: 'Give feedback' }).click();
    await eventually(() => panel.getByRole('button', { name: "What's new, 1 unread" }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
  }, 180_000);
});
