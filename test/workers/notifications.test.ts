import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ParsedMail } from 'mailparser';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/workers/notify/signature.js';
import { addIntegration, addMember, createFeedback, createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { listDeliveries, notificationCount, settledDeliveries } from '../helpers/notifications.js';
import { type HttpReceiver, type SmtpReceiver, startHttpReceiver, startSmtpReceiver } from '../helpers/receivers.js';
import { redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

/*
 * SPEC 1, 4.2, 4.4, 8.2: creating feedback notifies project members and integrations; status
 * changes notify integrations and, on Team, opted-in voters and the submitter. Real SMTP and HTTP
 * receivers; every message arrives exactly once, webhooks carry a valid signature.
 */

const withRedis = await redisAvailable();
const SECRET = 'whsec_test_0123456789abcdef';

const textOf = (mail: ParsedMail) => mail.text ?? '';
const unsubscribeLink = (mail: ParsedMail) => /https?:\/\/\S+\/api\/v1\/unsubscribe\/[0-9a-f-]{36}/.exec(textOf(mail))?.[0];

/** `verifyFeedbackSignature` as docs/notifications.md "Webhooks" prints it, loaded from that page itself. */
async function readmeVerifier(): Promise<(secret: string, raw: string, header: unknown) => boolean> {
  const page = await readFile(new URL('../../docs/notifications.md', import.meta.url), 'utf8');
  const code = /```js\n(import \{ createHmac[\s\S]*?)```/.exec(page)?.[1];
  expect(code, 'docs/notifications.md has the verification snippet').toBeDefined();
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'readme-snippet-')), 'verify.mjs');
  await writeFile(file, code!);
  return (await import(pathToFileURL(file).href)).verifyFeedbackSignature;
}

describe.each([
  { mode: 'in-process (poller over deliveries)', redis: false },
  { mode: 'BullMQ deliveries queue', redis: true },
])('notifications, $mode', ({ redis }) => {
  const skip = redis && !withRedis;
  let smtp: SmtpReceiver;
  // Each receiver closes by itself when the test that started it finishes (receivers.ts).
  const receiver = () => startHttpReceiver();

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  const server = useTestServer(() => ({
    redis,
    env: {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Feedback <notify@example.com>',
      PUBLIC_URL: 'https://feedback.example.com',
      ALLOW_PRIVATE_WEBHOOKS: 'true',
      DELIVERY_BACKOFF_MS: '50',
      DELIVERY_TIMEOUT_MS: '2000',
    },
  }));
  const admin = async (project: TestProject, method: string, path: string, body?: unknown) => {
    const response = await server.request(method, `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(200);
    return response.body;
  };
  const vote = async (project: TestProject, feedbackId: string, body: Record<string, unknown>) => {
    const response = await server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey: project.apiKey, body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  };

  /** The webhook bodies a receiver accepted, each checked as a receiver would check it. */
  const verifiedBodies = (r: HttpReceiver, secret = SECRET) =>
    r.accepted.map((request) => {
      expect(verifySignature(secret, request.raw, request.headers['x-feedback-signature'] as string), 'signature').toBe(true);
      expect(verifySignature('another secret', request.raw, request.headers['x-feedback-signature'] as string)).toBe(false);
      expect(request.headers['x-feedback-event']).toBe(request.body.type);
      return request.body;
    });

  it.skipIf(skip)(
    'Team: members, integrations, opted-in voters and the submitter each get every message once; unsubscribing stops the emails',
    async () => {
      const project = await createProject(server, { plan: 'team', name: 'Acme app' });
      const tag = project.id.slice(0, 8);
      const addr = (who: string) => `${who}-${tag}@example.com`;
      const slack = await receiver();
      const discord = await receiver();
      const webhook = await receiver();
      const disabled = await receiver();
      const statusOnly = await receiver();
      await addMember(server, project, addr('member1'));
      await addMember(server, project, addr('Member2').toUpperCase());
      const slackIntegration = await addIntegration(server, project, { kind: 'slack', url: slack.url });
      await addIntegration(server, project, { kind: 'discord', url: discord.url });
      const hook = await addIntegration(server, project, { kind: 'webhook', url: webhook.url, secret: SECRET });
      await addIntegration(server, project, { kind: 'webhook', url: disabled.url, secret: SECRET, enabled: false });
      await addIntegration(server, project, { kind: 'webhook', url: statusOnly.url, secret: SECRET, events: ['feedback.status_changed'] });

      // feedback.created
      const feedback = await createFeedback(server, project, {
        title: 'Dark <b>mode</b> & more',
        description: 'Please add a dark theme.',
        userId: 'submitter',
        userEmail: addr('submitter'),
      });
      let deliveries = await settledDeliveries(server, project);
      expect(deliveries.map((d) => d.status)).toEqual(Array(5).fill('delivered'));
      expect(deliveries.map((d) => `${d.channel}:${d.recipient}`).sort()).toEqual(
        [
          `email:${addr('member1')}`,
          `email:${addr('member2')}`,
          `slack:${slackIntegration.id}`,
          `webhook:${hook.id}`,
          expect.stringMatching(/^discord:/),
        ].sort(),
      );
      expect(slack.accepted).toHaveLength(1);
      expect(slack.accepted[0]!.body.text).toContain('*Acme app*: New feature request: Dark &lt;b&gt;mode&lt;/b&gt; &amp; more');
      expect(discord.accepted).toHaveLength(1);
      expect(discord.accepted[0]!.body).toMatchObject({ embeds: [{ title: 'Dark <b>mode</b> & more' }], allowed_mentions: { parse: [] } });
      expect(disabled.requests).toHaveLength(0);
      expect(statusOnly.requests).toHaveLength(0);
      const [created] = verifiedBodies(webhook);
      expect(created).toEqual({
        type: 'feedback.created',
        project_id: project.id,
        feedback: { ...feedback, has_voted: false },
        sent_at: expect.any(String),
      });
      const hookDelivery = deliveries.find((d) => d.recipient === hook.id)!;
      expect(webhook.accepted[0]!.headers['x-feedback-delivery-id']).toBe(hookDelivery.id);
      // The receiver's check printed in docs/notifications.md accepts it too, and refuses a changed body.
      const readmeCheck = await readmeVerifier();
      const signature = webhook.accepted[0]!.headers['x-feedback-signature'];
      expect(readmeCheck(SECRET, webhook.accepted[0]!.raw, signature)).toBe(true);
      expect(readmeCheck(SECRET, webhook.accepted[0]!.raw.replace('Dark', 'Lite'), signature)).toBe(false);
      for (const who of ['member1', 'member2']) {
        const mails = smtp.to(addr(who));
        expect(mails, who).toHaveLength(1);
        expect(mails[0]!.subject).toBe('[Acme app] New feature request: Dark <b>mode</b> & more');
        expect(mails[0]!.from?.text).toContain('notify@example.com');
        expect(textOf(mails[0]!)).toContain('Please add a dark theme.');
        expect(mails[0]!.html).toContain('Dark &lt;b&gt;mode&lt;/b&gt; &amp; more');
        const delivery = deliveries.find((d) => d.recipient === addr(who))!;
        expect(mails[0]!.messageId).toBe(`<${delivery.id}@feedback.example.com>`);
      }
      expect(smtp.to(addr('submitter'))).toHaveLength(0);

      // Voters: opted in with an email, email without opt-in, opt-in without email.
      await vote(project, feedback.id, { userId: 'v1', email: addr('voter1'), notifyStatusChange: true });
      await vote(project, feedback.id, { userId: 'v2', email: addr('voter2') });
      await vote(project, feedback.id, { userId: 'v3', notifyStatusChange: true });

      // feedback.status_changed
      await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'in_progress' });
      deliveries = await settledDeliveries(server, project);
      expect(deliveries).toHaveLength(5 + 6);
      expect(deliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
      const changed = verifiedBodies(webhook)[1];
      expect(changed).toMatchObject({
        type: 'feedback.status_changed',
        project_id: project.id,
        previous_status: 'pending',
        feedback: { id: feedback.id, status: 'in_progress', vote_count: 4 },
      });
      expect(changed).not.toHaveProperty('merged_into_id');
      expect(verifiedBodies(statusOnly)).toMatchObject([{ type: 'feedback.status_changed', previous_status: 'pending' }]);
      expect(slack.accepted[1]!.body.text).toContain('is now In progress (was Pending)');
      expect(smtp.to(addr('member1'))).toHaveLength(1);
      expect(smtp.to(addr('voter2'))).toHaveLength(0);
      for (const who of ['voter1', 'submitter']) {
        const mails = smtp.to(addr(who));
        expect(mails, who).toHaveLength(1);
        expect(mails[0]!.subject).toBe('[Acme app] “Dark <b>mode</b> & more” is now In progress (was Pending)');
        expect(unsubscribeLink(mails[0]!), who).toMatch(/^https:\/\/feedback\.example\.com\/api\/v1\/unsubscribe\//);
        // List-Unsubscribe (mailparser gathers List-* headers under `list`).
        expect(mails[0]!.headers.get('list')).toMatchObject({ unsubscribe: { url: unsubscribeLink(mails[0]!) } });
        expect(mails[0]!.html).toContain('Unsubscribe</a>');
      }

      // Rejected with a reason.
      await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'rejected', rejectionReason: 'Out of scope' });
      await settledDeliveries(server, project);
      expect(verifiedBodies(webhook)[2]).toMatchObject({
        previous_status: 'in_progress',
        feedback: { status: 'rejected', rejection_reason: 'Out of scope' },
      });
      expect(textOf(smtp.to(addr('voter1'))[1]!)).toContain('Reason: Out of scope');

      // Merge: the source's opted-in voters hear of it, the target's do not.
      const source = await createFeedback(server, project, { title: 'Night theme', userId: 'other' });
      await vote(project, source.id, { userId: 'v4', email: addr('voter4'), notifyStatusChange: true });
      await admin(project, 'POST', `/feedbacks/${source.id}/merge`, { intoId: feedback.id });
      await settledDeliveries(server, project);
      // Notifications dispatched together are sent in parallel, in no set order.
      const merged = verifiedBodies(webhook).find((b) => b.merged_into_id);
      expect(merged).toMatchObject({
        type: 'feedback.status_changed',
        previous_status: 'pending',
        merged_into_id: feedback.id,
        feedback: { id: source.id, merged_into_id: feedback.id },
      });
      expect(smtp.to(addr('voter4')).map((m) => m.subject)).toEqual(['[Acme app] “Night theme” was merged into “Dark <b>mode</b> & more”']);
      expect(smtp.to(addr('voter1'))).toHaveLength(2);

      // Opening the link changes nothing (mail scanners open every link): a page naming the item
      // and the address, with a form that POSTs to the same URL; the next change still reaches voter1.
      const href = unsubscribeLink(smtp.to(addr('voter1'))[0]!)!;
      const link = new URL(href);
      const page = await server.request('GET', link.pathname, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.body).toContain('Dark &lt;b&gt;mode&lt;/b&gt; &amp; more');
      expect(page.body).toContain(addr('voter1'));
      expect(page.body).toContain(`<form method="post" action="${href}">`);
      expect(page.body).toContain('>Unsubscribe</button>');
      expect((await server.request('GET', link.pathname)).body).toMatchObject({ feedback_id: feedback.id, subscribed: true });
      await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'approved' });
      await settledDeliveries(server, project);
      expect(smtp.to(addr('voter1'))).toHaveLength(3);
      expect(smtp.to(addr('submitter'))).toHaveLength(3);

      // Unsubscribe: voter1 presses the page's button (a browser's form POST); the next change
      // reaches the submitter only.
      const unsubscribed = await server.request('POST', link.pathname, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        rawBody: 'List-Unsubscribe=One-Click',
      });
      expect(unsubscribed.status).toBe(200);
      expect(unsubscribed.body).toEqual({ unsubscribed: true, feedback_id: feedback.id, feedback_ids: [feedback.id] });
      expect((await server.request('GET', `/api/v1/unsubscribe/${crypto.randomUUID()}`)).status).toBe(404);
      expect((await server.request('POST', `/api/v1/unsubscribe/${crypto.randomUUID()}`)).status).toBe(404);
      await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'completed' });
      await settledDeliveries(server, project);
      expect(smtp.to(addr('voter1'))).toHaveLength(3);
      expect(smtp.to(addr('submitter'))).toHaveLength(4);

      // Exactly once, overall: one message per delivery row.
      deliveries = await listDeliveries(server, project);
      const emails = deliveries.filter((d) => d.channel === 'email');
      expect(smtp.messages.filter((m) => m.subject?.startsWith('[Acme app]'))).toHaveLength(emails.length);
      expect(webhook.requests).toHaveLength(deliveries.filter((d) => d.recipient === hook.id).length);
      expect(new Set(webhook.requests.map((r) => r.headers['x-feedback-delivery-id'])).size).toBe(webhook.requests.length);
    },
  );

  it.skipIf(skip)('Pro: integrations only, no member, voter or submitter emails; Free: nothing, the rows are kept', async () => {
    const project = await createProject(server, { plan: 'team' });
    const tag = project.id.slice(0, 8);
    const webhook = await receiver();
    await addMember(server, project, `member-${tag}@example.com`);
    // No secret given: the server generates one, shown once, and signs with it.
    const { secret } = await addIntegration(server, project, { kind: 'webhook', url: webhook.url });
    expect(secret).toEqual(expect.any(String));
    await setPlan(server, project.account, 'pro');

    const feedback = await createFeedback(server, project, { userEmail: `submitter-${tag}@example.com` });
    await vote(project, feedback.id, { userId: 'v1', email: `voter-${tag}@example.com`, notifyStatusChange: true });
    await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'approved' });
    const deliveries = await settledDeliveries(server, project);
    expect(deliveries.map((d) => `${d.channel} ${d.type} ${d.status}`).sort()).toEqual([
      'webhook feedback.created delivered',
      'webhook feedback.status_changed delivered',
    ]);
    expect(
      verifiedBodies(webhook, secret)
        .map((b) => b.type)
        .sort(),
    ).toEqual(['feedback.created', 'feedback.status_changed']);
    expect(smtp.messages.filter((m) => JSON.stringify(m.to).includes(tag))).toHaveLength(0);

    await setPlan(server, project.account, 'free');
    const before = await notificationCount(server, project);
    const second = await createFeedback(server, project, { userEmail: `submitter-${tag}@example.com` });
    await admin(project, 'PATCH', `/feedbacks/${second.id}`, { status: 'approved' });
    expect(await settledDeliveries(server, project)).toHaveLength(2);
    // Both were recorded and dispatched to nobody on Free: deleted then, not kept (retention rule).
    expect(await notificationCount(server, project)).toBe(before);
    expect(webhook.requests).toHaveLength(2);
    const [kept] = await server.sql<{ n: number }[]>`select count(*)::int as n from integrations where project_id = ${project.id}`;
    expect(kept!.n).toBe(1);
  });
});
