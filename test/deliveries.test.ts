import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBlockedAddress } from '../src/notify/ssrf.js';
import { dispatchNotifications } from '../src/oltp/notifications.repo.js';
import { enqueueDeliveries } from '../src/workers/deliveries.queue.js';
import { runDelivery, type DeliveryDeps } from '../src/workers/deliveries.worker.js';
import { createFeedback, createProject, type TestProject } from './helpers/factories.js';
import { addIntegration, addMember, listDeliveries, settledDeliveries, type Delivery } from './helpers/notifications.js';
import { startHttpReceiver, type HttpReceiver } from './helpers/receivers.js';
import { eventually, redisAvailable } from './helpers/redis.js';
import { startTestServer, type TestServer } from './helpers/server.js';

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
  let server: TestServer;
  const receivers: HttpReceiver[] = [];

  beforeAll(async () => {
    if (skip) return;
    server = await startTestServer({
      redis,
      env: {
        ALLOW_PRIVATE_WEBHOOKS: 'true',
        DELIVERY_MAX_ATTEMPTS: '4',
        DELIVERY_BACKOFF_MS: '50',
        DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    for (const r of receivers) await r.close();
  });

  async function projectWithWebhook(receiver: HttpReceiver) {
    receivers.push(receiver);
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_retry_test_secret' });
    return project;
  }

  it.skipIf(skip)('a receiver answering 500 three times, then 200, gets the message once, after visible retries', async () => {
    const receiver = await startHttpReceiver((index) => (index < 3 ? 500 : 200));
    const project = await projectWithWebhook(receiver);
    await createFeedback(server, project);
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 4, last_error: null, next_attempt_at: null, delivered_at: expect.any(String) });
    expect(receiver.requests).toHaveLength(4);
    expect(receiver.accepted).toHaveLength(1);
    // Every attempt carries the same idempotency key.
    expect(new Set(receiver.requests.map((r) => r.headers['x-feedback-delivery-id']))).toEqual(new Set([delivery!.id]));
    // Exponential backoff: at least 50, 100, 200 ms between attempts (DELIVERY_BACKOFF_MS 50).
    const gaps = receiver.requests.slice(1).map((r, i) => r.at - receiver.requests[i]!.at);
    gaps.forEach((gap, i) => expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(50 * 2 ** i * 0.9));
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
      expect((await server.request('POST', `/api/v1/projects/${other.id}/deliveries/${failed!.id}/retry`, { bearer: other.account.adminToken })).status).toBe(404);
      expect((await server.request('GET', `/api/v1/projects/${project.id}/deliveries`, { bearer: other.account.adminToken })).status).toBe(403);
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
      expect(again.body).toEqual({ error: true, reason: 'only a failed delivery can be retried; this one is delivered' });
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

  it.skipIf(skip || !redis)('a delivery queued again after it was delivered is not sent again', async () => {
    const receiver = await startHttpReceiver();
    const project = await projectWithWebhook(receiver);
    await createFeedback(server, project);
    const [delivery] = await settledDeliveries(server, project);
    await enqueueDeliveries(server.ctx.deliveryQueue!, [delivery!.id, delivery!.id], 4);
    await eventually('the re-queued job to finish', 5_000, async () => {
      const counts = await server.ctx.deliveryQueue!.getJobCounts('waiting', 'active', 'delayed');
      return Object.values(counts).every((n) => n === 0);
    });
    expect(receiver.requests).toHaveLength(1);
    expect((await listDeliveries(server, project))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});

describe('the same delivery run twice at once, without workers', () => {
  let server: TestServer;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    server = await startTestServer({ workers: false, env: { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_TIMEOUT_MS: '2000' } });
    receiver = await startHttpReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
  });

  it('sends once: the second run finds it claimed, and a run after delivery finds it delivered', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await addIntegration(server, project, { kind: 'webhook', url: receiver.url, secret: 'whsec_twice_test_secret' });
    await createFeedback(server, project);
    const { deliveryIds } = await dispatchNotifications(server.sql, 100);
    expect(deliveryIds).toHaveLength(1);
    const deps: DeliveryDeps = {
      sql: server.sql,
      sender: { mailer: server.ctx.mailer, publicUrl: 'http://127.0.0.1', timeoutMs: 2000, allowPrivateWebhooks: true },
      policy: { maxAttempts: 3, timeoutMs: 2000, backoffMs: 50 },
      logger: server.ctx.logger,
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
});

describe('without ALLOW_PRIVATE_WEBHOOKS and without SMTP_URL', () => {
  let server: TestServer;
  let receiver: HttpReceiver;

  beforeAll(async () => {
    server = await startTestServer({ env: { DELIVERY_BACKOFF_MS: '50', DELIVERY_TIMEOUT_MS: '1000' } });
    receiver = await startHttpReceiver();
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
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
    expect(ip.last_error).toMatch(/^refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback, private or link-local address/);
    expect(name).toMatchObject({ status: 'failed', attempts: 1 });
    expect(name.last_error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback/);
    expect(receiver.requests).toHaveLength(0);
  });

  it('classifies addresses: private, loopback, link-local and mapped ones are blocked, public ones are not', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) {
      expect(isBlockedAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111']) expect(isBlockedAddress(address), address).toBe(false);
  });

  it('writes each email as a .eml file under DATA_DIR/mail when SMTP_URL is unset', async () => {
    const project = await createProject(server, { plan: 'team', name: 'Mail-less app' });
    await addMember(server, project, 'owner-eml@example.com');
    await createFeedback(server, project, { title: 'Offline export' });
    const [delivery] = await settledDeliveries(server, project);
    expect(delivery).toMatchObject({ channel: 'email', status: 'delivered', recipient: 'owner-eml@example.com' });
    const dir = path.join(server.ctx.config.dataDir, 'mail');
    expect(await readdir(dir)).toContain(`${delivery!.id}.eml`);
    const eml = await readFile(path.join(dir, `${delivery!.id}.eml`), 'utf8');
    expect(eml).toContain('To: owner-eml@example.com');
    expect(eml).toContain('Subject: [Mail-less app] New feature request: Offline export');
    expect(eml).toContain(`Message-ID: <${delivery!.id}@`);
    expect(eml).toMatch(/Content-Type: text\/plain/);
    expect(eml).toMatch(/Content-Type: text\/html/);
  });
});
