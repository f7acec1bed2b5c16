import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';
import { accountWithProject, createFeedback } from './api.js';
import { openTab, seriousViolations, signIn, useBrowser } from './browser.js';

/*
 * The dashboard's half of issue 23 (docs/widget.md): the widget settings (publishable key,
 * identity secret shown once, switches, snippet and token examples) and the moderation queue in
 * the inbox; payloads in the queue and the inbox stay text.
 */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
const PAYLOAD = '<img src=x onerror="window.__xss=1">Anonymous idea';
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 250 });

const server = useTestServer();
const browser = useBrowser();

describe('widget settings and moderation in the dashboard', () => {
  it('shows the publishable key, creates the identity secret once, switches the board and anonymous feedback on', async () => {
    const project = await accountWithProject(server, 'pro', 'Acme Notes');
    const t = await openTab(browser);
    await signIn(t, server, project.token, `/projects/${project.projectId}/settings?section=widget`);
    const { page } = t;
    const before = await server.request('GET', `/api/v1/projects/${project.projectId}`, { bearer: project.token });
    await eventually(() => page.getByText(before.body.publishable_key).first().isVisible()).toBe(true);
    await eventually(() => page.getByText(`data-key="${before.body.publishable_key}"`).isVisible()).toBe(true);

    await page.getByRole('button', { name: 'Create secret' }).click();
    await eventually(() => page.getByTestId('one-time-secret').textContent()).toMatch(/^fbid_/);
    await eventually(() => page.getByRole('button', { name: 'Rotate secret' }).isVisible()).toBe(true);

    await page.getByRole('checkbox', { name: 'Public board' }).click();
    await eventually(() => page.getByRole('checkbox', { name: 'Public board' }).isChecked()).toBe(true);
    await eventually(() => page.getByRole('link', { name: `${server.url}/board/${before.body.slug}` }).isVisible()).toBe(true);
    await page.getByRole('checkbox', { name: 'Anonymous feedback' }).click();
    await eventually(() => page.getByRole('checkbox', { name: 'Anonymous feedback' }).isChecked()).toBe(true);
    await eventually(
      async () => (await server.request('GET', `/api/v1/projects/${project.projectId}`, { bearer: project.token })).body,
    ).toMatchObject({
      board_public: true,
      anonymous_feedback: true,
      has_identity_secret: true,
      require_signed_identity: false,
    });
    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await seriousViolations(page)).toEqual([]);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-settings.png'), fullPage: true });

    page.on('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await eventually(
      async () => (await server.request('GET', `/api/v1/projects/${project.projectId}`, { bearer: project.token })).body.publishable_key,
    ).not.toBe(before.body.publishable_key);
    expect(t.problems).toEqual([]);
  }, 180_000);

  it('lists anonymous submissions awaiting approval in the inbox and approves them; payloads stay text', async () => {
    const project = await accountWithProject(server, 'pro', 'Moderated');
    const settings = await server.request('PATCH', `/api/v1/projects/${project.projectId}`, {
      bearer: project.token,
      body: { board_public: true, anonymous_feedback: true },
    });
    const anonymous = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: settings.body.publishable_key,
      body: { title: PAYLOAD, description: '<script>window.__xss=1</script>', category: 'other', userId: `anon-${randomUUID()}` },
    });
    expect(anonymous.status).toBe(200);
    await createFeedback(server, project.apiKey, 'Visible already');

    const t = await openTab(browser);
    await signIn(t, server, project.token, `/projects/${project.projectId}/feedback`);
    const { page } = t;
    await eventually(() => page.getByRole('heading', { name: 'Awaiting approval (1)' }).isVisible()).toBe(true);
    await eventually(() => page.getByText(PAYLOAD).isVisible()).toBe(true);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    await page.getByRole('button', { name: `Approve “${PAYLOAD}”` }).click();
    await eventually(() => page.getByRole('heading', { name: /Awaiting approval/ }).count()).toBe(0);
    const board = await server.request('GET', '/api/v1/feedbacks', { apiKey: settings.body.publishable_key });
    expect(board.body.map((item: { id: string }) => item.id)).toContain(anonymous.body.id);
    expect(await page.evaluate('window.__xss')).toBeUndefined();
    expect(t.problems).toEqual([]);
  }, 180_000);
});
