import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { createSql } from '../../src/oltp/db.js';
import { verifySignature } from '../../src/workers/notify/signature.js';
import { eventually } from '../helpers/eventually.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { makeDataDir, PROCESS_TEST_TIMEOUT_MS, PROCESS_WAIT_FLOOR_MS, type ServiceProcess } from '../helpers/process.js';
import { type HttpReceiver, startHttpReceiver } from '../helpers/receivers.js';
import { redisAvailable } from '../helpers/redis.js';
import { TEST_REDIS_URL } from '../helpers/server.js';
import { call, type ServiceSetup, serviceSetup, startService } from '../helpers/service.js';

/*
 * A changelog entry is announced exactly once across crashes (issue 40, docs/notifications.md
 * "Exactly once"): two `npm start` processes, each running the workers, on one Redis and one
 * PostgreSQL. (`npm run worker` alone needs a ClickHouse server, which this machine has not; each
 * `npm start` here is a worker process with an API and a chDB of its own.) The entry is published
 * through the first, which is SIGKILLed at once, between the publish and any send, while the
 * second is frozen (SIGSTOP); the second then sends, and is SIGKILLed in the middle of a webhook
 * request. After both restart, each follower has exactly one email (the `.eml` files the
 * processes wrote without SMTP_URL, parsed with mailparser) and each webhook exactly one
 * acknowledged delivery of each message, its signature verified here.
 */

const withRedis = await redisAvailable();
const SECRET = 'whsec_changelog_crash_0123456789';
const DELIVERY_TIMEOUT_MS = 2_000;

/** Each process's own port and DATA_DIR; everything else (database, Redis prefix, tokens) shared. */
async function secondProcess(first: ServiceSetup): Promise<ServiceSetup> {
  const port = await findFreePort();
  const dataDir = await makeDataDir();
  return { ...first, dataDir, base: `http://127.0.0.1:${port}`, env: { ...first.env, PORT: String(port), DATA_DIR: dataDir } };
}

/** The emails a process wrote to its DATA_DIR/mail, parsed. */
async function emlFiles(dataDir: string): Promise<{ file: string; mail: ParsedMail }[]> {
  const dir = path.join(dataDir, 'mail');
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.eml'));
  return Promise.all(names.map(async (file) => ({ file, mail: await simpleParser(await readFile(path.join(dir, file))) })));
}

const recipientOf = (mail: ParsedMail) => {
  const to = Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : [];
  return to.flatMap((entry) => entry.value.map((v) => v.address?.toLowerCase())).join(',');
};

describe.skipIf(!withRedis)('changelog announcements across SIGKILLs of two worker processes', () => {
  it(
    'each follower gets one email and each webhook one acknowledged delivery of each message',
    async () => {
      const first = await serviceSetup(TEST_REDIS_URL);
      Object.assign(first.env, {
        SMTP_URL: '',
        PUBLIC_URL: 'https://feedback.example.com',
        ALLOW_PRIVATE_WEBHOOKS: 'true',
        DELIVERY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
        // Retries of the hanging receiver's messages come about every timeout: their backoff stays
        // short, so none is due long after the restart.
        DELIVERY_BACKOFF_MS: '10',
        DELIVERY_MAX_ATTEMPTS: '50',
        RATE_LIMIT_API: '1000000/s',
      });
      const second = await secondProcess(first);
      const both = () => Promise.all([startService(first), startService(second)]) as Promise<[ServiceProcess, ServiceProcess]>;
      let [a, b] = await both();
      const sql = createSql(first.env.DATABASE_URL as string, { max: 2 });
      stopWhenDone(() => sql.end());

      const ok = async (method: string, urlPath: string, options: Parameters<typeof call>[3] = {}) => {
        const reply = await call(first.base, method, urlPath, options);
        expect(reply.status, `${method} ${urlPath}: ${JSON.stringify(reply.body)}`).toBe(200);
        return reply.body;
      };
      const account = await ok('POST', '/api/v1/admin/accounts', {
        bearer: first.operatorToken,
        body: { email: 'owner@example.com', plan: 'team' },
      });
      const admin = account.admin_token as string;
      const project = await ok('POST', '/api/v1/projects', { bearer: admin, body: { name: 'Acme app' } });
      const projectPath = `/api/v1/projects/${project.id}`;
      // `hanging` answers nothing until told to: the webhook request a worker is killed in.
      const hanging = await startHttpReceiver(() => 'hang');
      const steady = await startHttpReceiver();
      const hooks = new Map<string, HttpReceiver>();
      for (const receiver of [hanging, steady]) {
        const integration = await ok('POST', `${projectPath}/integrations`, {
          bearer: admin,
          body: { kind: 'webhook', url: receiver.url, secret: SECRET, events: ['changelog.published', 'feedback.status_changed'] },
        });
        hooks.set(integration.id, receiver);
      }
      const item = (title: string, extra: Record<string, unknown> = {}) =>
        ok('POST', '/api/v1/feedbacks', {
          apiKey: project.api_key,
          body: { title, description: 'Please.', category: 'feature_request', userId: `u-${title}`, ...extra },
        });
      const items = [await item('Dark mode', { userEmail: 'submitter@example.com' }), await item('CSV export'), await item('Offline mode')];
      const vote = (id: string, userId: string, email: string) =>
        ok('POST', `/api/v1/feedbacks/${id}/votes`, { apiKey: project.api_key, body: { userId, email, notifyStatusChange: true } });
      for (const it of items) await vote(it.id, 'many', 'many@example.com');
      await vote(items[1].id, 'one', 'one@example.com');
      const followers = ['many@example.com', 'one@example.com', 'submitter@example.com'];
      const entry = await ok('POST', `${projectPath}/changelog`, {
        bearer: admin,
        body: {
          title: 'Shipped',
          body: 'Three things **you** asked for.',
          linkedFeedbackIds: items.map((it) => it.id),
          completeLinked: true,
        },
      });

      // 1. The second process frozen, the first publishes and is killed before anything is sent.
      b.signal('SIGSTOP');
      await ok('POST', `${projectPath}/changelog/${entry.id}/publish`, { bearer: admin });
      a.signal('SIGKILL');
      await a.waitForExit();

      // 2. The second alone sends; it is killed while a webhook request waits for its answer,
      //    every other message sent and recorded.
      b.signal('SIGCONT');
      const hangingId = [...hooks].find(([, r]) => r === hanging)![0];
      let seen: unknown;
      /** A wait that, timed out, says what it saw last, the deliveries and the second process's log. */
      const explained = (what: Promise<unknown>) =>
        what.catch(async (error: Error) => {
          const rows = await sql`select recipient, status, attempts, last_error from deliveries where project_id = ${project.id}`;
          throw new Error(
            `${error.message}\nlast probe: ${JSON.stringify(seen)}\ndeliveries: ${JSON.stringify(rows)}\n` +
              `hanging: ${hanging.requests.length} requests, steady: ${steady.requests.length}\n${b.describe().slice(-6_000)}`,
          );
        });
      await explained(
        eventually('the emails and the steady webhook sent, a request to the hanging one in flight', PROCESS_WAIT_FLOOR_MS, async () => {
          const [row] = await sql<{ undispatched: number; others_pending: number; others: number }[]>`
          select
            (select count(*)::int from notifications where project_id = ${project.id} and dispatched_at is null) as undispatched,
            (select count(*)::int from deliveries where project_id = ${project.id}
               and recipient <> ${hangingId} and status <> 'delivered') as others_pending,
            (select count(*)::int from deliveries where project_id = ${project.id} and recipient <> ${hangingId}) as others`;
          const last = hanging.requests.at(-1);
          const inFlight = last !== undefined && performance.now() - last.at < DELIVERY_TIMEOUT_MS / 2;
          seen = { ...row, inFlight };
          // 3 emails, and the steady webhook's 4 messages (the entry, 3 completions).
          return row!.undispatched === 0 && row!.others === 7 && row!.others_pending === 0 && inFlight;
        }),
      );
      b.signal('SIGKILL');
      await b.waitForExit();
      const cutShort = hanging.requests.at(-1)!.headers['x-feedback-delivery-id'];

      // 3. Both restart; the hanging receiver answers from now on.
      hanging.behave(() => 200);
      [a, b] = await both();
      await explained(
        eventually('every delivery delivered after the restart', PROCESS_WAIT_FLOOR_MS, async () => {
          const [row] = await sql<{ n: number; delivered: number }[]>`
            select count(*)::int as n, count(*) filter (where status = 'delivered')::int as delivered
            from deliveries where project_id = ${project.id}`;
          seen = row;
          return row!.n === 11 && row!.delivered === 11;
        }),
      );

      const deliveries = await ok('GET', `${projectPath}/deliveries?limit=500`, { bearer: admin });
      // Each follower: one email, from whichever process sent it, the delivery's id as Message-ID.
      const mails = [...(await emlFiles(first.dataDir)), ...(await emlFiles(second.dataDir))];
      expect(mails.map(({ mail }) => recipientOf(mail)).sort()).toEqual(followers);
      for (const { file, mail } of mails) {
        const delivery = deliveries.find((d: { id: string }) => `${d.id}.eml` === file);
        expect(delivery, file).toMatchObject({ type: 'changelog.published', channel: 'email', recipient: recipientOf(mail) });
        expect(mail.messageId).toBe(`<${delivery.id}@feedback.example.com>`);
        expect(mail.subject).toBe('[Acme app] What’s new: Shipped');
        expect(mail.html).toContain('Three things <strong>you</strong> asked for.');
      }
      expect(mails.find(({ mail }) => recipientOf(mail) === 'many@example.com')?.mail.text).toContain(
        'You asked for:\n- Dark mode (Completed)\n- CSV export (Completed)\n- Offline mode (Completed)',
      );

      // Each webhook: the entry and the three completions, each acknowledged once, each signed.
      for (const [integrationId, receiver] of hooks) {
        const byDelivery = new Map<string, unknown>();
        for (const request of receiver.accepted) {
          expect(verifySignature(SECRET, request.raw, request.headers['x-feedback-signature'] as string)).toBe(true);
          const id = request.headers['x-feedback-delivery-id'] as string;
          expect(byDelivery.has(id), `delivery ${id} acknowledged twice`).toBe(false);
          byDelivery.set(id, request.body);
        }
        const own = deliveries.filter((d: { recipient: string }) => d.recipient === integrationId);
        expect([...byDelivery.keys()].sort()).toEqual(own.map((d: { id: string }) => d.id).sort());
        const kinds = [...byDelivery.values()].map((body) => {
          const b = body as { type: string; feedback?: { title: string }; entry?: { title: string } };
          return b.type === 'changelog.published' ? `entry ${b.entry?.title}` : `completed ${b.feedback?.title}`;
        });
        expect(kinds.sort()).toEqual(['completed CSV export', 'completed Dark mode', 'completed Offline mode', 'entry Shipped']);
      }
      // The steady receiver never saw a repeat; the request cut short was sent again, same id.
      expect(steady.requests).toHaveLength(4);
      expect(hanging.requests.filter((r) => r.headers['x-feedback-delivery-id'] === cutShort).length).toBeGreaterThan(1);
      expect(await ok('GET', `${projectPath}/changelog/${entry.id}/deliveries`, { bearer: admin })).toMatchObject({
        notification: 'dispatched',
        emails: { sent: 3, pending: 0, failed: 0 },
        integrations: { sent: 2, pending: 0, failed: 0 },
      });
      expect([a.exit, b.exit]).toEqual([undefined, undefined]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
