import { randomUUID } from 'node:crypto';
import type { ParsedMail } from 'mailparser';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/core/plans.js';
import { ChangelogScheduler } from '../../src/workers/changelog.scheduler.js';
import { verifySignature } from '../../src/workers/notify/signature.js';
import { sleep } from '../helpers/eventually.js';
import { addIntegration, createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { type Delivery, settledDeliveries as settledWithin } from '../helpers/notifications.js';
import { type HttpReceiver, type SmtpReceiver, startHttpReceiver, startSmtpReceiver } from '../helpers/receivers.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Publishing a changelog entry tells the people who asked (issue 40, docs/notifications.md
 * "Changelog entries"): on Team one email per address to the linked items' voters who opted in and
 * their submitters, with the entry, the items that address asked for and one unsubscribe link; on
 * Pro and Team a signed `changelog.published` webhook and Slack and Discord messages; on Free
 * nobody. complete_linked completes the items in the same transaction with their status emails
 * folded into the entry's; republishing and corrections tell nobody again. Real SMTP and HTTP
 * receivers, the service's own workers.
 */

const SECRET = 'whsec_changelog_0123456789abcdef';
const PUBLIC_URL = 'https://feedback.example.com';

let smtp: SmtpReceiver;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
});
const server = useTestServer(() => ({
  env: {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Feedback <notify@example.com>',
    PUBLIC_URL,
    ALLOW_PRIVATE_WEBHOOKS: 'true',
    DELIVERY_BACKOFF_MS: '50',
    DELIVERY_TIMEOUT_MS: '2000',
  },
}));

/** Generous: on the shared machine a webhook attempt may time out and be retried. */
const settledDeliveries = (on: typeof server, project: TestProject) => settledWithin(on, project, 60_000);

const textOf = (mail: ParsedMail) => mail.text ?? '';
const unsubscribeLinkOf = (mail: ParsedMail) => /https:\/\/\S+\/api\/v1\/unsubscribe\/[0-9a-f-]{36}/.exec(textOf(mail))?.[0];

async function admin(project: TestProject, method: string, path: string, body?: unknown) {
  const response = await server.request(method, `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });
  return response;
}

async function ok(project: TestProject, method: string, path: string, body?: unknown) {
  const response = await admin(project, method, path, body);
  expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(200);
  return response.body;
}

async function vote(project: TestProject, feedbackId: string, body: Record<string, unknown>) {
  const response = await server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey: project.apiKey, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

/** The bodies a receiver accepted, each signature checked as a receiver would. */
const verified = (receiver: HttpReceiver) =>
  receiver.accepted.map((request) => {
    expect(verifySignature(SECRET, request.raw, request.headers['x-feedback-signature'] as string), 'signature').toBe(true);
    expect(request.headers['x-feedback-event']).toBe(request.body.type);
    return request.body;
  });

/**
 * A project with three items to ship and one that is not: `many` voted for all three (with
 * another casing on one), `one` for the second, `quiet` gave an address without opting in,
 * `elsewhere` follows the unlinked item only; the first item's submitter gave an address.
 */
async function scene(plan: Plan) {
  const project = await createProject(server, { plan, name: 'Acme app' });
  const tag = project.id.slice(0, 8);
  const addr = (who: string) => `${who}-${tag}@example.com`;
  const items = [
    await createFeedback(server, project, { title: 'Dark mode', userId: 'submitter', userEmail: addr('submitter') }),
    await createFeedback(server, project, { title: 'CSV export' }),
    await createFeedback(server, project, { title: 'Offline mode' }),
  ];
  const unlinked = await createFeedback(server, project, { title: 'Tags' });
  for (const [i, item] of items.entries()) {
    await vote(project, item.id, { userId: 'many', email: i === 1 ? addr('MANY').toUpperCase() : addr('many'), notifyStatusChange: true });
  }
  await vote(project, items[1].id, { userId: 'one', email: addr('one'), notifyStatusChange: true });
  await vote(project, items[0].id, { userId: 'quiet', email: addr('quiet') });
  await vote(project, unlinked.id, { userId: 'elsewhere', email: addr('elsewhere'), notifyStatusChange: true });
  return { project, tag, addr, items, ids: items.map((item) => item.id as string) };
}

/** Changelog deliveries only (the items' creation notified integrations too). */
const announced = (deliveries: Delivery[]) => deliveries.filter((d) => d.type === 'changelog.published');

async function write(project: TestProject, body: Record<string, unknown>) {
  return ok(project, 'POST', '/changelog', { title: 'Dark mode & more', body: 'Switch it on in **Settings**.', ...body });
}

const told = (project: TestProject, entryId: string) => ok(project, 'GET', `/changelog/${entryId}/deliveries`);

// Each test waits for the service's workers several times; a loaded machine makes them slow.
describe('publishing a changelog entry', { timeout: 120_000 }, () => {
  it('Team: one email per address (voters who opted in, submitters) with the entry and their items; signed webhook, Slack and Discord; counted', async () => {
    const { project, addr, items, ids } = await scene('team');
    await ok(project, 'PATCH', '', { boardPublic: true });
    const [{ slug } = { slug: '' }] = await server.sql<{ slug: string }[]>`select slug from projects where id = ${project.id}`;
    const webhook = await startHttpReceiver();
    const slack = await startHttpReceiver();
    const discord = await startHttpReceiver();
    const createdOnly = await startHttpReceiver();
    const hook = await addIntegration(server, project, {
      kind: 'webhook',
      url: webhook.url,
      secret: SECRET,
      events: ['changelog.published'],
    });
    await addIntegration(server, project, { kind: 'slack', url: slack.url, events: ['changelog.published'] });
    await addIntegration(server, project, { kind: 'discord', url: discord.url, events: ['changelog.published'] });
    await addIntegration(server, project, { kind: 'webhook', url: createdOnly.url, secret: SECRET, events: ['feedback.created'] });
    await settledDeliveries(server, project);

    const entry = await write(project, {
      body: 'Switch it on in **Settings**. [Docs](https://docs.example) <script>alert(1)</script> @everyone',
      category: 'New',
      linkedFeedbackIds: ids,
    });
    expect((await told(project, entry.id)).notification).toBe('none');
    const published = await ok(project, 'POST', `/changelog/${entry.id}/publish`);
    expect(published).toMatchObject({ state: 'published', complete_linked: false });

    const deliveries = announced(await settledDeliveries(server, project));
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    // One per address: `many` voted three times, with two casings; `quiet` and `elsewhere` not at all.
    expect(
      deliveries
        .filter((d) => d.channel === 'email')
        .map((d) => d.recipient)
        .sort(),
    ).toEqual([addr('many'), addr('one'), addr('submitter')].sort());
    for (const who of ['quiet', 'elsewhere']) expect(smtp.to(addr(who)), who).toHaveLength(0);

    const [many] = smtp.to(addr('many'));
    expect(smtp.to(addr('many'))).toHaveLength(1);
    expect(many!.subject).toBe('[Acme app] What’s new: Dark mode & more');
    expect(many!.messageId).toBe(`<${deliveries.find((d) => d.recipient === addr('many'))!.id}@feedback.example.com>`);
    // The entry's sanitized HTML, and a text part made of it.
    expect(many!.html).toContain('Switch it on in <strong>Settings</strong>.');
    expect(many!.html).toContain('<a href="https://docs.example" rel="noopener nofollow">Docs</a>');
    expect(many!.html).not.toContain('<script');
    const text = textOf(many!);
    expect(text).toContain('Switch it on in Settings. Docs [https://docs.example]');
    expect(text).toContain('You asked for:\n- Dark mode (Pending)\n- CSV export (Pending)\n- Offline mode (Pending)');
    expect(text).toContain(`Read it on the board: ${PUBLIC_URL}/board/${slug}/changelog#${entry.id}`);
    const link = unsubscribeLinkOf(many!);
    expect(link).toMatch(/^https:\/\/feedback\.example\.com\/api\/v1\/unsubscribe\//);
    expect(many!.headers.get('list')).toMatchObject({ unsubscribe: { url: link } });
    expect(many!.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe(
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    );
    // Each address is told of the items it asked for.
    expect(textOf(smtp.to(addr('one'))[0]!)).toContain('You asked for:\n- CSV export (Pending)\n\n');
    expect(textOf(smtp.to(addr('submitter'))[0]!)).toContain('You asked for:\n- Dark mode (Pending)\n\n');

    const [body] = verified(webhook);
    expect(webhook.accepted).toHaveLength(1);
    const current = await Promise.all(
      ids.map(async (id) => (await server.request('GET', `/api/v1/feedbacks/${id}`, { apiKey: project.apiKey })).body),
    );
    expect(body).toEqual({
      type: 'changelog.published',
      project_id: project.id,
      entry: {
        id: entry.id,
        title: 'Dark mode & more',
        html: published.html,
        text: 'Switch it on in Settings. Docs [https://docs.example] @everyone',
        category: 'New',
        published_at: published.published_at,
        url: `${PUBLIC_URL}/board/${slug}/changelog#${entry.id}`,
      },
      items: current.map((item) => ({ ...item, has_voted: false })),
      completed_feedback_ids: [],
      sent_at: expect.any(String),
    });
    expect(webhook.accepted[0]!.headers['x-feedback-delivery-id']).toBe(deliveries.find((d) => d.recipient === hook.id)!.id);
    expect(slack.accepted).toHaveLength(1);
    expect(slack.accepted[0]!.body.text).toContain('*Acme app*: What’s new: Dark mode &amp; more');
    expect(slack.accepted[0]!.body.text).toContain('Ships: Dark mode (Pending), CSV export (Pending), Offline mode (Pending)');
    expect(discord.accepted).toHaveLength(1);
    expect(discord.accepted[0]!.body).toMatchObject({
      embeds: [{ title: 'Dark mode & more', url: `${PUBLIC_URL}/board/${slug}/changelog#${entry.id}` }],
      allowed_mentions: { parse: [] },
    });
    expect(createdOnly.requests.map((r) => r.body.type)).not.toContain('changelog.published');

    expect(await told(project, entry.id)).toEqual({
      entry_id: entry.id,
      notification: 'dispatched',
      dispatched_at: expect.any(String),
      emails: { sent: 3, pending: 0, failed: 0 },
      integrations: { sent: 3, pending: 0, failed: 0 },
    });
    const listed = await ok(project, 'GET', '/deliveries?limit=500');
    expect(listed.filter((d: { changelog_entry_id: string | null }) => d.changelog_entry_id === entry.id)).toHaveLength(6);
    expect(items).toHaveLength(3);
  });

  it('republishing, correcting a published entry and a second announcement of it tell nobody again', async () => {
    const { project, addr, ids } = await scene('team');
    const webhook = await startHttpReceiver();
    await addIntegration(server, project, { kind: 'webhook', url: webhook.url, secret: SECRET, events: ['changelog.published'] });
    const entry = await write(project, { linkedFeedbackIds: ids });
    const first = await ok(project, 'POST', `/changelog/${entry.id}/publish`);
    await settledDeliveries(server, project);
    const again = await ok(project, 'POST', `/changelog/${entry.id}/publish`, { completeLinked: true });
    expect(again).toMatchObject({ published_at: first.published_at, complete_linked: false });
    expect(await ok(project, 'PATCH', `/changelog/${entry.id}`, { body: 'Corrected: **Settings** → Appearance.' })).toMatchObject({
      state: 'published',
    });
    expect((await admin(project, 'PATCH', `/changelog/${entry.id}`, { completeLinked: true })).status).toBe(409);
    // The database itself refuses a second announcement of one entry (migration 022).
    await expect(
      server.sql`insert into notifications (project_id, type, payload, changelog_entry_id)
                 values (${project.id}, 'changelog.published', '{}'::jsonb, ${entry.id})`,
    ).rejects.toThrow(/notifications_changelog_entry_idx/);
    // Fixed on purpose: time for anything (wrongly) announced again to be dispatched and sent.
    await sleep(1_500);
    await settledDeliveries(server, project);
    expect(smtp.to(addr('many'))).toHaveLength(1);
    expect(webhook.requests).toHaveLength(1);
    const [row] = await server.sql<{ n: number }[]>`
      select count(*)::int as n from notifications where project_id = ${project.id} and type = 'changelog.published'`;
    expect(row!.n).toBe(1);
    expect((await told(project, entry.id)).emails).toEqual({ sent: 3, pending: 0, failed: 0 });
  });

  it('the email’s one-click unsubscribe stops every item it named for that address; the next entry skips it', async () => {
    const { project, addr, ids } = await scene('team');
    const entry = await write(project, { linkedFeedbackIds: ids });
    await ok(project, 'POST', `/changelog/${entry.id}/publish`);
    await settledDeliveries(server, project);
    const link = new URL(unsubscribeLinkOf(smtp.to(addr('many'))[0]!)!);
    // Opening it changes nothing.
    const page = await server.request('GET', link.pathname);
    expect(page.body).toEqual({
      feedback_id: ids[0],
      title: 'Dark mode',
      email: addr('many'),
      subscribed: true,
      items: [
        { id: ids[0], title: 'Dark mode', subscribed: true },
        { id: ids[1], title: 'CSV export', subscribed: true },
        { id: ids[2], title: 'Offline mode', subscribed: true },
      ],
    });
    const html = await server.request('GET', link.pathname, { headers: { accept: 'text/html' } });
    expect(html.body).toContain('Status updates about “Dark mode”, “CSV export” and “Offline mode” are sent to');
    // The mail client's one-click POST (RFC 8058).
    const done = await server.request('POST', link.pathname, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'List-Unsubscribe=One-Click',
    });
    expect(done.body).toEqual({ unsubscribed: true, feedback_id: ids[0], feedback_ids: ids });
    const flags = await server.sql<{ user_id: string; notify_status_change: boolean }[]>`
      select user_id, notify_status_change from votes where feedback_id = any(${ids}::uuid[]) and user_id in ('many', 'one') order by user_id`;
    expect(flags.map((f) => `${f.user_id}:${f.notify_status_change}`)).toEqual(['many:false', 'many:false', 'many:false', 'one:true']);

    const next = await write(project, { title: 'CSV, faster', linkedFeedbackIds: [ids[0], ids[1]] });
    await ok(project, 'POST', `/changelog/${next.id}/publish`);
    const deliveries = announced(await settledDeliveries(server, project));
    expect(
      deliveries
        .filter((d) => d.recipient !== addr('many'))
        .map((d) => d.recipient)
        .sort(),
    ).toEqual([addr('one'), addr('submitter'), addr('one'), addr('submitter')].sort());
    expect(smtp.to(addr('many'))).toHaveLength(1);
    expect(smtp.to(addr('one')).map((m) => m.subject)).toEqual([
      '[Acme app] What’s new: Dark mode & more',
      '[Acme app] What’s new: CSV, faster',
    ]);
  });

  it('complete_linked: the items are completed in the publish transaction; integrations get their status changes, voters only the entry’s email', async () => {
    const { project, addr, ids } = await scene('team');
    await ok(project, 'PATCH', `/feedbacks/${ids[0]}`, { status: 'in_progress' });
    await ok(project, 'PATCH', `/feedbacks/${ids[2]}`, { status: 'completed' });
    const statusEmails = (deliveries: Delivery[]) =>
      deliveries.filter((d) => d.type === 'feedback.status_changed' && d.channel === 'email');
    // The changes by hand tell `many` and the submitter (the first item) and `many` (the third).
    const emailedBefore = statusEmails(await settledDeliveries(server, project));
    expect(emailedBefore).toHaveLength(3);
    const sentBefore = smtp.to(addr('many')).length;
    const webhook = await startHttpReceiver();
    await addIntegration(server, project, {
      kind: 'webhook',
      url: webhook.url,
      secret: SECRET,
      events: ['changelog.published', 'feedback.status_changed'],
    });
    const entry = await write(project, { linkedFeedbackIds: ids });
    const published = await ok(project, 'POST', `/changelog/${entry.id}/publish`, { complete_linked: true });
    expect(published.complete_linked).toBe(true);
    // Completed by the time the publish answered: the same transaction.
    for (const id of ids) expect((await ok(project, 'GET', `/feedbacks/${id}`)).status).toBe('completed');

    const deliveries = await settledDeliveries(server, project);
    const bodies = verified(webhook);
    const changes = bodies.filter((b) => b.type === 'feedback.status_changed');
    expect(changes.map((b) => `${b.feedback.id} ${b.previous_status}→${b.feedback.status}`).sort()).toEqual(
      [`${ids[0]} in_progress→completed`, `${ids[1]} pending→completed`].sort(),
    );
    const announcement = bodies.find((b) => b.type === 'changelog.published');
    expect(announcement.completed_feedback_ids.sort()).toEqual([ids[0], ids[1]].sort());
    expect(announcement.items.map((item: { status: string }) => item.status)).toEqual(['completed', 'completed', 'completed']);
    // The folded status changes emailed nobody: each follower got the entry's email alone.
    expect(statusEmails(deliveries)).toHaveLength(emailedBefore.length);
    const mails = smtp.to(addr('many')).slice(sentBefore);
    expect(mails.map((m) => m.subject)).toEqual(['[Acme app] What’s new: Dark mode & more']);
    expect(textOf(mails[0]!)).toContain('- Dark mode (Completed)\n- CSV export (Completed)\n- Offline mode (Completed)');
    expect(smtp.to(addr('one')).map((m) => m.subject)).toEqual(['[Acme app] What’s new: Dark mode & more']);
  });

  it('a scheduled entry publishes itself on a test clock, once among two schedulers, completing its items and telling its followers once', async () => {
    const { project, addr, ids } = await scene('team');
    const at = new Date('2033-03-01T09:00:00Z');
    const entry = await write(project, {
      title: 'Offline, at last',
      linkedFeedbackIds: [ids[2]],
      publishAt: at.toISOString(),
      completeLinked: true,
    });
    expect(entry).toMatchObject({ state: 'scheduled', complete_linked: true });
    let clock = new Date(at.getTime() - 1_000);
    const logger = pino({ level: 'silent' });
    const schedulers = [new ChangelogScheduler(server.sql, logger, () => clock), new ChangelogScheduler(server.sql, logger, () => clock)];
    expect((await Promise.all(schedulers.map((s) => s.runOnce()))).flat()).not.toContain(entry.id);
    expect((await told(project, entry.id)).notification).toBe('none');
    clock = new Date(at.getTime() + 1_000);
    const runs = (await Promise.all(schedulers.map((s) => s.runOnce()))).flat();
    expect(runs.filter((id) => id === entry.id)).toHaveLength(1);
    expect(await ok(project, 'GET', `/changelog/${entry.id}`)).toMatchObject({ state: 'published', published_at: '2033-03-01T09:00:00Z' });
    expect((await ok(project, 'GET', `/feedbacks/${ids[2]}`)).status).toBe('completed');
    await settledDeliveries(server, project);
    expect(smtp.to(addr('many')).map((m) => m.subject)).toEqual(['[Acme app] What’s new: Offline, at last']);
    expect(textOf(smtp.to(addr('many'))[0]!)).toContain('You asked for:\n- Offline mode (Completed)\n\n');
    expect(smtp.to(addr('one'))).toHaveLength(0);
    expect(await told(project, entry.id)).toMatchObject({ notification: 'dispatched', emails: { sent: 1, pending: 0, failed: 0 } });
  });

  it('Pro: the entry is published and the integrations told, nobody emailed; Free: published, nobody told, and said so', async () => {
    const pro = await scene('pro');
    const webhook = await startHttpReceiver();
    await addIntegration(server, pro.project, { kind: 'webhook', url: webhook.url, secret: SECRET, events: ['changelog.published'] });
    const entry = await write(pro.project, { linkedFeedbackIds: pro.ids });
    await ok(pro.project, 'POST', `/changelog/${entry.id}/publish`);
    const deliveries = announced(await settledDeliveries(server, pro.project));
    expect(deliveries.map((d) => `${d.channel} ${d.status}`)).toEqual(['webhook delivered']);
    expect(verified(webhook).map((b) => b.type)).toEqual(['changelog.published']);
    for (const who of ['many', 'one', 'submitter']) expect(smtp.to(pro.addr(who)), who).toHaveLength(0);
    expect(await told(pro.project, entry.id)).toMatchObject({
      notification: 'dispatched',
      emails: { sent: 0, pending: 0, failed: 0 },
      integrations: { sent: 1, pending: 0, failed: 0 },
    });

    const free = await scene('free');
    const freeEntry = await write(free.project, { linkedFeedbackIds: free.ids });
    expect(await ok(free.project, 'POST', `/changelog/${freeEntry.id}/publish`)).toMatchObject({ state: 'published' });
    expect(await settledDeliveries(server, free.project)).toEqual([]);
    for (const who of ['many', 'one', 'submitter']) expect(smtp.to(free.addr(who)), who).toHaveLength(0);
    // Kept although nobody heard of it: the entry's record says "nobody", not "not yet".
    expect(await told(free.project, freeEntry.id)).toMatchObject({
      notification: 'dispatched',
      emails: { sent: 0, pending: 0, failed: 0 },
      integrations: { sent: 0, pending: 0, failed: 0 },
    });
    expect((await admin(free.project, 'GET', `/changelog/${randomUUID()}/deliveries`)).status).toBe(404);
  });
});
