import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { claimDelivery, markAttemptFailed, markDelivered } from '../../src/oltp/deliveries.repo.js';
import { dispatchNotifications, pruneSettledNotifications } from '../../src/oltp/notifications.repo.js';
import { enqueueDeliveries } from '../../src/workers/notify/deliveries.queue.js';
import { type DeliveryDeps, runDelivery } from '../../src/workers/notify/deliveries.worker.js';
import { isBlockedAddress } from '../../src/workers/notify/ssrf.js';
import { sleep, until } from '../helpers/eventually.js';
import { addIntegration, addMember, createFeedback, createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { type Delivery, listDeliveries, notificationCount, settledDeliveries } from '../helpers/notifications.js';
import { type HttpReceiver, type SmtpReceiver, startHttpReceiver, startSmtpReceiver } from '../helpers/receivers.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/*
 * Reliable delivery: bounded retries with backoff, a per-attempt timeout, the failed list and
 * the operator's retry, once per recipient however often a job runs, the SSRF guard, and the
 * .eml fallback without SMTP.
 */

const withRedis = await redisAvailable();
const TIMEOUT_MS = 300;

const deliveryOf = async (server: TestServer, project: TestProject, status?: string): Promise<Delivery[]> =>
  listDeliveries(server, project, status ? { status } : {});

describe.each([
  { mode: 'in-process (poller over deliveries)', redis: false },
  { mode: 'BullMQ deliveries queue', redis: true },
])('delivery retries, $mode', ({ redis }) => {
  const skip = redis && !withRedis;
  const server = useTestServer({
    redis,
    env: {
      ALLOW_PRIVATE_WEBHOOKS: 'true',
      DELIVERY_MAX_ATTEMPTS: '4',
      DELIVERY_BACKOFF_MS: '50',
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });

  async function projectWithWebhook(receiver: HttpReceiver) {
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_retry_test_secret' });
    return project;
  }

  it.skipIf(skip)('a receiver answering 500 three times, then 200, gets the message once, after visible retries', async () => {
    const receiver = await startHttpReceiver((index) => (index < 3 ? 500 : 200));
    const project = await projectWithWebhook(receiver);
    const item = await createFeedback(server, project);
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({
      // The item the message is about, so the owner's list can name it.
      feedback_id: item.id,
      feedback_title: item.title,
      status: 'delivered',
      attempts: 4,
      last_error: null,
      next_attempt_at: null,
      delivered_at: expect.any(String),
    });
    expect(receiver.requests).toHaveLength(4);
    expect(receiver.accepted).toHaveLength(1);
    // Every attempt carries the same idempotency key.
    expect(new Set(receiver.requests.map((r) => r.headers['x-feedback-delivery-id']))).toEqual(new Set([delivery!.id]));
    // Exponential backoff: at least 50, 100, 200 ms between attempts (DELIVERY_BACKOFF_MS 50).
    const gaps = receiver.requests.slice(1).map((r, i) => r.at - receiver.requests[i]!.at);
    for (const [i, gap] of gaps.entries()) expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(50 * 2 ** i * 0.9);
    expect(await deliveryOf(server, project, 'failed')).toEqual([]);
  });

  it.skipIf(skip)(
    'a receiver that never answers ends in the failed list; the operator retries it and it is delivered once it answers',
    async () => {
      const receiver = await startHttpReceiver(() => 'hang');
      const project = await projectWithWebhook(receiver);
      await createFeedback(server, project);
      await eventually('the delivery to fail', 15_000, async () => (await deliveryOf(server, project, 'failed')).length === 1);
      const [failed] = await deliveryOf(server, project, 'failed');
      expect(failed).toMatchObject({
        status: 'failed',
        attempts: 4,
        channel: 'webhook',
        type: 'feedback.created',
        last_error: `no answer within ${TIMEOUT_MS} ms`,
        delivered_at: null,
        next_attempt_at: null,
      });
      expect(receiver.requests).toHaveLength(4);
      expect(await deliveryOf(server, project, 'delivered')).toEqual([]);
      expect(await deliveryOf(server, project, 'pending')).toEqual([]);

      const retryPath = (id: string) => `/api/v1/projects/${project.id}/deliveries/${id}/retry`;
      const bearer = project.account.adminToken;
      expect((await server.request('POST', retryPath(randomUUID()), { bearer })).status).toBe(404);
      expect((await server.request('POST', retryPath('not-a-uuid'), { bearer })).status).toBe(404);
      const other = await createProject(server, { plan: 'pro' });
      expect(
        (await server.request('POST', `/api/v1/projects/${other.id}/deliveries/${failed!.id}/retry`, { bearer: other.account.adminToken }))
          .status,
      ).toBe(404);
      expect((await server.request('GET', `/api/v1/projects/${project.id}/deliveries`, { bearer: other.account.adminToken })).status).toBe(
        403,
      );
      expect((await server.request('GET', `/api/v1/projects/${project.id}/deliveries?status=lost`, { bearer })).status).toBe(400);

      receiver.behave(() => 200);
      const retried = await server.request('POST', retryPath(failed!.id), { bearer });
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body).toMatchObject({ id: failed!.id, status: 'pending', attempts: 0 });
      const [delivered] = await settledDeliveries(server, project);
      expect(delivered).toMatchObject({ id: failed!.id, status: 'delivered', attempts: 1, last_error: null });
      expect(receiver.accepted).toHaveLength(1);
      const again = await server.request('POST', retryPath(failed!.id), { bearer });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        error: true,
        reason: 'only a failed delivery can be retried; this one is delivered',
        message: 'only a failed delivery can be retried; this one is delivered',
      });
    },
  );

  it.skipIf(skip)('the list is paginated with limit and offset, newest first', async () => {
    const receiver = await startHttpReceiver();
    const project = await projectWithWebhook(receiver);
    for (let i = 0; i < 3; i++) await createFeedback(server, project, { title: `item ${i}` });
    const all = await settledDeliveries(server, project);
    expect(all).toHaveLength(3);
    const first = await listDeliveries(server, project, { limit: '2' });
    const rest = await listDeliveries(server, project, { limit: '2', offset: '2' });
    expect([...first, ...rest].map((d) => d.id)).toEqual(all.map((d) => d.id));
    expect(first).toHaveLength(2);
  });

  it.skipIf(skip)('"send test" posts one signed integration.test message to that integration only, logged as a delivery', async () => {
    const receiver = await startHttpReceiver();
    const other = await startHttpReceiver();
    const project = await projectWithWebhook(receiver);
    const [integration] = (
      await server.request('GET', `/api/v1/projects/${project.id}/integrations`, { bearer: project.account.adminToken })
    ).body;
    const second = await addIntegration(server, project, { kind: 'webhook', url: other.url });
    const testPath = (id: string) => `/api/v1/projects/${project.id}/integrations/${id}/test`;
    const bearer = project.account.adminToken;

    const sent = await server.request('POST', testPath(integration.id), { bearer });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ type: 'integration.test', channel: 'webhook', integration_id: integration.id, status: 'pending' });
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({
      id: sent.body.id,
      status: 'delivered',
      attempts: 1,
      feedback_title: 'Test message: this integration works',
    });
    expect(receiver.accepted).toHaveLength(1);
    expect(receiver.accepted[0]!.headers['x-feedback-event']).toBe('integration.test');
    expect(receiver.accepted[0]!.headers['x-feedback-signature']).toEqual(expect.any(String));
    expect(receiver.accepted[0]!.body).toMatchObject({
      type: 'integration.test',
      project_id: project.id,
      feedback: { id: '00000000-0000-0000-0000-000000000000', title: 'Test message: this integration works' },
    });
    // Only the integration tested: the other one got nothing, and no item was created.
    expect(other.requests).toHaveLength(0);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).body).toEqual([]);

    // A disabled integration is refused; an unknown one, or another project's, is a 404.
    await server.request('PATCH', `/api/v1/projects/${project.id}/integrations/${second.id}`, { bearer, body: { enabled: false } });
    expect(await server.request('POST', testPath(second.id), { bearer })).toMatchObject({
      status: 409,
      body: {
        error: true,
        reason: 'the integration is disabled: enable it to send a test',
        message: 'the integration is disabled: enable it to send a test',
      },
    });
    expect((await server.request('POST', testPath(randomUUID()), { bearer })).status).toBe(404);
    const stranger = await createProject(server, { plan: 'pro' });
    expect(
      (
        await server.request('POST', `/api/v1/projects/${stranger.id}/integrations/${integration.id}/test`, {
          bearer: stranger.account.adminToken,
        })
      ).status,
    ).toBe(404);
    // On Free (integrations are Pro and Team) it is a 402, like every change of an integration.
    await setPlan(server, project.account, 'free');
    expect((await server.request('POST', testPath(integration.id), { bearer })).status).toBe(402);
  });

  it.skipIf(skip || !redis)('a retry the queue cannot take (Redis down) is still committed: 200, pending, sent once queued', async () => {
    const receiver = await startHttpReceiver((index) => (index === 0 ? 400 : 200));
    const project = await projectWithWebhook(receiver);
    await createFeedback(server, project);
    const [failed] = await settledDeliveries(server, project);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    const queue = server.services.deliveryQueue!;
    const down = vi.spyOn(queue, 'addBulk').mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    try {
      const retried = await server.request('POST', `/api/v1/projects/${project.id}/deliveries/${failed!.id}/retry`, {
        bearer: project.account.adminToken,
      });
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body).toMatchObject({ id: failed!.id, status: 'pending', attempts: 0 });
      expect(down).toHaveBeenCalledTimes(1);
    } finally {
      down.mockRestore();
    }
    expect((await deliveryOf(server, project, 'pending')).map((d) => d.id)).toEqual([failed!.id]);
    // What the overdue sweep does once Redis is back.
    await enqueueDeliveries(queue, [failed!.id], 4);
    expect((await settledDeliveries(server, project))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(receiver.accepted).toHaveLength(1);
  });

  it.skipIf(skip || !redis)('a delivery queued again after it was delivered is not sent again', async () => {
    const receiver = await startHttpReceiver();
    const project = await projectWithWebhook(receiver);
    await createFeedback(server, project);
    const [delivery] = await settledDeliveries(server, project);
    await enqueueDeliveries(server.services.deliveryQueue!, [delivery!.id, delivery!.id], 4);
    await eventually('the re-queued job to finish', 5_000, async () => {
      const counts = await server.services.deliveryQueue!.getJobCounts('waiting', 'active', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    });
    expect(receiver.requests).toHaveLength(1);
    expect((await listDeliveries(server, project))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});

describe('the same delivery run twice at once, without workers', () => {
  const server = useTestServer({ workers: false, env: { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_TIMEOUT_MS: '2000' } });
  let receiver: HttpReceiver;

  beforeAll(async () => {
    // Closed by itself after the file (receivers.ts).
    receiver = await startHttpReceiver();
  });

  it('sends once: the second run finds it claimed, and a run after delivery finds it delivered', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_twice_test_secret' });
    await createFeedback(server, project);
    const { deliveryIds } = await dispatchNotifications(server.sql, 100);
    expect(deliveryIds).toHaveLength(1);
    const deps: DeliveryDeps = {
      sql: server.sql,
      sender: { mailer: server.services.mailer, publicUrl: 'http://127.0.0.1', timeoutMs: 2000, allowPrivateWebhooks: true },
      policy: { maxAttempts: 3, timeoutMs: 2000, backoffMs: 50 },
      logger: server.services.logger,
    };
    const id = deliveryIds[0]!;
    const results = await Promise.all([runDelivery(deps, id), runDelivery(deps, id), runDelivery(deps, id)]);
    expect(results.filter((r) => r?.kind === 'delivered')).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(2);
    expect(await runDelivery(deps, id)).toBeNull();
    expect(receiver.requests).toHaveLength(1);
    // Dispatching again expands nothing: each notification becomes deliveries once.
    expect((await dispatchNotifications(server.sql, 100)).notifications).toBe(0);
  });

  it('retention: a notification with no recipient is deleted at dispatch; a settled one 30 days after, with its deliveries; a pending one is kept', async () => {
    const quiet = await createProject(server, { plan: 'free' });
    await createFeedback(server, quiet);
    expect(await notificationCount(server, quiet)).toBe(1);
    await dispatchNotifications(server.sql, 100);
    expect(await notificationCount(server, quiet)).toBe(0);

    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_retention_secret' });
    for (let i = 0; i < 3; i++) await createFeedback(server, project);
    const { deliveryIds } = await dispatchNotifications(server.sql, 100);
    expect(deliveryIds).toHaveLength(3);
    const [settledOld, settledRecent, pendingOld] = deliveryIds as [string, string, string];
    await server.sql`update deliveries set status = 'delivered', delivered_at = now() where id in ${server.sql([settledOld, settledRecent])}`;
    await server.sql`
      update notifications set dispatched_at = now() - interval '31 days'
      where id in (select notification_id from deliveries where id in ${server.sql([settledOld, pendingOld])})`;

    expect(await pruneSettledNotifications(server.sql, 30, 1_000)).toBe(1);
    const left = await server.sql<{ id: string }[]>`select id from deliveries where project_id = ${project.id} order by id`;
    expect(left.map((d) => d.id).sort()).toEqual([settledRecent, pendingOld].sort());
    expect(await notificationCount(server, project)).toBe(2);
    expect(await pruneSettledNotifications(server.sql, 30, 1_000)).toBe(0);
  });
});

describe('without ALLOW_PRIVATE_WEBHOOKS and without SMTP_URL', () => {
  const server = useTestServer({ env: { DELIVERY_BACKOFF_MS: '50', DELIVERY_TIMEOUT_MS: '1000' } });
  let receiver: HttpReceiver;

  beforeAll(async () => {
    receiver = await startHttpReceiver();
  });
  it('refuses webhooks to loopback addresses, by IP and by a name resolving to one: failed at once, with the reason', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const byIp = await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_ssrf_test_secret' });
    const byName = await addIntegration(server, project, { kind: 'slack', url: receiver.url.replace('127.0.0.1', 'localhost') });
    await createFeedback(server, project);
    const deliveries = await settledDeliveries(server, project);
    expect(deliveries).toHaveLength(2);
    const ip = deliveries.find((d) => d.recipient === byIp.id)!;
    const name = deliveries.find((d) => d.recipient === byName.id)!;
    expect(ip).toMatchObject({ status: 'failed', attempts: 1 });
    expect(ip.last_error).toMatch(/^refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, which is not a global unicast address of another host/);
    expect(name).toMatchObject({ status: 'failed', attempts: 1 });
    expect(name.last_error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), which is not/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses, at delivery time, a webhook to this host’s own non-loopback address (it reached a listener there)', async () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
    expect(own, 'the machine has a non-loopback IPv4 interface').toBeDefined();
    const listener = createServer((request, response) => {
      heard.push(request.url ?? '');
      response.end('ok');
    });
    const heard: string[] = [];
    await new Promise<void>((resolve) => listener.listen(0, own!.address, resolve));
    try {
      const port = (listener.address() as AddressInfo).port;
      const project = await createProject(server, { plan: 'pro' });
      const hook = await addIntegration(server, project, {
        kind: 'webhook',
        url: `http://${own!.address}:${port}/hook`,
        secret: 'whsec_own_address',
      });
      await createFeedback(server, project);
      const [delivery] = await settledDeliveries(server, project);
      expect(delivery).toMatchObject({ recipient: hook.id, status: 'failed', attempts: 1 });
      expect(delivery!.last_error).toMatch(new RegExp(`^refused: ${own!.address.replaceAll('.', '\\.')} resolves to`));
      expect(heard).toEqual([]);
    } finally {
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it('classifies addresses: private, loopback, link-local and mapped ones are blocked, public ones are not', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      // IPv6 ranges that embed an IPv4 address: NAT64, local-use NAT64, 6to4, IPv4-compatible.
      '64:ff9b::7f00:1',
      '64:ff9b::169.254.169.254',
      '64:ff9b:1::a00:1',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      '::127.0.0.1',
      '::a9fe:a9fe',
      // IANA special-purpose ranges the docs call reserved: documentation (TEST-NET-1/2/3,
      // 2001:db8::/32), the 6to4 relay anycast, discard-only, Teredo, benchmarking, broadcast.
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '192.88.99.1',
      '2001:db8::1',
      '100::1',
      '2001::1',
      '198.18.0.1',
      '255.255.255.255',
      // Not an address at all.
      'example.com',
      // This host's own addresses, whatever their range.
      ...Object.values(networkInterfaces())
        .flat()
        .flatMap((entry) => (entry ? [entry.address.replace(/%.*$/, '')] : [])),
    ]) {
      expect(isBlockedAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001::200e'])
      expect(isBlockedAddress(address), address).toBe(false);
  });

  it('writes each email as a .eml file under DATA_DIR/mail when SMTP_URL is unset', async () => {
    const project = await createProject(server, { plan: 'team', name: 'Mail-less app' });
    await addMember(server, project, 'owner-eml@example.com');
    await createFeedback(server, project, { title: 'Offline export' });
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({ channel: 'email', status: 'delivered', recipient: 'owner-eml@example.com' });
    const dir = path.join(server.services.config.dataDir, 'mail');
    expect(await readdir(dir)).toContain(`${delivery!.id}.eml`);
    const eml = await readFile(path.join(dir, `${delivery!.id}.eml`), 'utf8');
    expect(eml).toContain('To: owner-eml@example.com');
    expect(eml).toContain('Subject: [Mail-less app] New feature request: Offline export');
    expect(eml).toContain(`Message-ID: <${delivery!.id}@`);
    expect(eml).toMatch(/Content-Type: text\/plain/);
    expect(eml).toMatch(/Content-Type: text\/html/);
  });
});

describe('at send time the plan, the membership and the opt-in still hold (SPEC 8.2), without workers', () => {
  let smtp: SmtpReceiver;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    receiver = await startHttpReceiver();
  });
  const server = useTestServer(() => ({
    workers: false,
    env: { SMTP_URL: smtp.url, ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_TIMEOUT_MS: '2000' },
  }));
  const deps = (): DeliveryDeps => ({
    sql: server.sql,
    sender: { mailer: server.services.mailer, publicUrl: 'http://127.0.0.1', timeoutMs: 2000, allowPrivateWebhooks: true },
    policy: { maxAttempts: 3, timeoutMs: 2000, backoffMs: 50 },
    logger: server.services.logger,
  });
  /** Expands the notifications (the deliveries are pending), then lets `change` happen, then sends. */
  const dispatchChangeAndSend = async (project: TestProject, change: () => Promise<void>) => {
    await dispatchNotifications(server.sql, 100);
    const pending = await deliveryOf(server, project, 'pending');
    await change();
    await Promise.all(pending.map((d) => runDelivery(deps(), d.id)));
    return listDeliveries(server, project);
  };
  const request = (project: TestProject, method: string, path: string, body?: unknown) =>
    server.request(method, `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });

  it("a pending webhook delivery is not sent after a downgrade to Free: failed for good; the operator's retry is a 402", async () => {
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_downgrade_test_secret' });
    await createFeedback(server, project);
    const [delivery] = await dispatchChangeAndSend(project, () => setPlan(server, project.account, 'free'));
    expect(delivery).toMatchObject({
      channel: 'webhook',
      status: 'failed',
      attempts: 1,
      last_error: 'the plan no longer includes integrations',
    });
    expect(receiver.requests).toHaveLength(0);

    const retry = await request(project, 'POST', `/deliveries/${delivery!.id}/retry`);
    expect(retry.status).toBe(402);
    expect(retry.body).toEqual({
      error: true,
      reason: 'the free plan does not include integrations (Pro and Team)',
      message: 'the free plan does not include integrations (Pro and Team)',
    });
    expect((await listDeliveries(server, project))[0]).toMatchObject({ status: 'failed', attempts: 1 });

    await setPlan(server, project.account, 'pro');
    expect((await request(project, 'POST', `/deliveries/${delivery!.id}/retry`)).status).toBe(200);
    await runDelivery(deps(), delivery!.id);
    expect((await listDeliveries(server, project))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(receiver.accepted).toHaveLength(1);
  });

  it('a removed member and an unsubscribed voter get no pending email; the submitter still does', async () => {
    const project = await createProject(server, { plan: 'team' });
    const tag = project.id.slice(0, 8);
    const addr = (who: string) => `${who}-${tag}@example.com`;
    const member = await addMember(server, project, addr('member'));
    const feedback = await createFeedback(server, project, { userEmail: addr('submitter') });
    const vote = await server.request('POST', `/api/v1/feedbacks/${feedback.id}/votes`, {
      apiKey: project.apiKey,
      body: { userId: 'v1', email: addr('voter'), notifyStatusChange: true },
    });
    expect(vote.status).toBe(200);
    expect((await request(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'approved' })).status).toBe(200);
    const deliveries = await dispatchChangeAndSend(project, async () => {
      expect((await request(project, 'DELETE', `/members/${member.id}`)).status).toBe(200);
      const [token] = await server.sql<{ unsubscribe_token: string }[]>`
        select unsubscribe_token from votes where feedback_id = ${feedback.id} and user_id = 'v1'`;
      expect((await server.request('POST', `/api/v1/unsubscribe/${token!.unsubscribe_token}`)).status).toBe(200);
    });
    const by = (who: string) => deliveries.find((d) => d.recipient === addr(who));
    expect(deliveries).toHaveLength(3);
    expect(by('member')).toMatchObject({
      type: 'feedback.created',
      status: 'failed',
      attempts: 1,
      last_error: 'no longer a member of the project',
    });
    expect(by('voter')).toMatchObject({ type: 'feedback.status_changed', status: 'failed', attempts: 1, last_error: 'unsubscribed' });
    expect(by('submitter')).toMatchObject({ type: 'feedback.status_changed', status: 'delivered', attempts: 1 });
    expect(smtp.to(addr('member'))).toHaveLength(0);
    expect(smtp.to(addr('voter'))).toHaveLength(0);
    expect(smtp.to(addr('submitter'))).toHaveLength(1);
  });

  it('pending emails are not sent after a downgrade to Pro; retrying one is a 402', async () => {
    const project = await createProject(server, { plan: 'team' });
    const tag = project.id.slice(0, 8);
    await addMember(server, project, `member-${tag}@example.com`);
    const feedback = await createFeedback(server, project, { userEmail: `submitter-${tag}@example.com` });
    expect((await request(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'approved' })).status).toBe(200);
    const deliveries = await dispatchChangeAndSend(project, () => setPlan(server, project.account, 'pro'));
    expect(deliveries.map((d) => `${d.type} ${d.status} ${d.last_error}`).sort()).toEqual([
      'feedback.created failed the plan no longer includes team member emails',
      'feedback.status_changed failed the plan no longer includes voter and submitter emails',
    ]);
    expect(smtp.messages.filter((m) => JSON.stringify(m.to).includes(tag))).toHaveLength(0);
    const retry = await request(project, 'POST', `/deliveries/${deliveries[0]!.id}/retry`);
    expect(retry.status).toBe(402);
    expect(retry.body).toEqual({
      error: true,
      reason: 'the pro plan does not include emails (Team only)',
      message: 'the pro plan does not include emails (Team only)',
    });
  });

  it('a worker whose claim expired cannot overwrite the outcome recorded by the worker that claimed it next', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_claim_test_secret' });
    await createFeedback(server, project);
    await dispatchNotifications(server.sql, 100);
    const [pending] = await deliveryOf(server, project, 'pending');
    const stale = await claimDelivery(server.sql, pending!.id, 1);
    // Claimed again once the 1 ms lease has run out.
    const current = await until('the first claim expired', 10_000, () => claimDelivery(server.sql, pending!.id, 60_000));
    expect(stale && current).toBeTruthy();
    expect(await markDelivered(server.sql, current!)).toBe(true);
    expect(await markAttemptFailed(server.sql, stale!, 'no answer within 2000 ms', null)).toBe(false);
    expect(await markDelivered(server.sql, stale!)).toBe(false);
    expect((await listDeliveries(server, project))[0]).toMatchObject({ status: 'delivered', attempts: 2, last_error: null });
  });
});

describe('an SMTP server slower, over the whole send, than DELIVERY_TIMEOUT_MS (each step within it)', () => {
  let smtp: SmtpReceiver;

  beforeAll(async () => {
    // 250 ms before MAIL FROM is answered and 250 ms before the message is accepted: every step
    // within the 400 ms timeout, the whole send beyond it.
    smtp = await startSmtpReceiver({ answerDelayMs: 250 });
  });
  const server = useTestServer(() => ({
    env: { SMTP_URL: smtp.url, DELIVERY_TIMEOUT_MS: '400', DELIVERY_BACKOFF_MS: '50', DELIVERY_MAX_ATTEMPTS: '3' },
  }));
  it('sends the email once and records it delivered: an attempt is not given up on while its send goes on', async () => {
    const project = await createProject(server, { plan: 'team' });
    const address = `slow-${project.id.slice(0, 8)}@example.com`;
    await addMember(server, project, address);
    await createFeedback(server, project);
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({ channel: 'email', status: 'delivered', attempts: 1, last_error: null });
    // Fixed on purpose: anything (wrongly) still on its way would arrive within another attempt's time.
    await sleep(1_000);
    expect(smtp.to(address)).toHaveLength(1);
  });
});
