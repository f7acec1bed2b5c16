import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { createSql } from '../../src/oltp/db.js';
import { verifySignature } from '../../src/workers/notify/signature.js';
import { eventually } from '../helpers/eventually.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { makeDataDir, PROCESS_TEST_TIMEOUT_MS, PROCESS_WAIT_FLOOR_MS } from '../helpers/process.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { redisAvailable } from '../helpers/redis.js';
import { TEST_REDIS_URL } from '../helpers/server.js';
import { call, type ServiceSetup, serviceSetup, startService } from '../helpers/service.js';

/**
 * Exactly once, with real processes (docs/notifications.md "Exactly once: alerts and the digest"):
 * two services with their workers on one Redis and one PostgreSQL check each interval once and
 * tell each change of state once; a worker SIGKILLed between the check and the delivery tells it
 * once after its restart. The alerts fire at their first check whatever the hour (the value of an
 * event nobody tracks is 0, below 1), so the wall clock the processes run on decides nothing.
 */
const withRedis = await redisAvailable();

const DELIVERY_ENV = {
  ALLOW_PRIVATE_WEBHOOKS: 'true',
  DELIVERY_BACKOFF_MS: '100',
  DELIVERY_TIMEOUT_MS: '1000',
  DELIVERY_MAX_ATTEMPTS: '50',
};

/** A second service on the same database and Redis prefix: its own port and DATA_DIR (its own embedded ClickHouse). */
async function twin(setup: ServiceSetup): Promise<ServiceSetup> {
  const port = await findFreePort();
  const dataDir = await makeDataDir();
  return { ...setup, env: { ...setup.env, PORT: String(port), DATA_DIR: dataDir }, base: `http://127.0.0.1:${port}`, dataDir };
}

function withEnv(setup: ServiceSetup, env: Record<string, string>): ServiceSetup {
  return { ...setup, env: { ...setup.env, ...env } };
}

async function proProject(base: string, operatorToken: string) {
  const account = await call(base, 'POST', '/api/v1/admin/accounts', {
    bearer: operatorToken,
    body: { email: `owner-${randomUUID()}@example.com`, plan: 'pro' },
  });
  expect(account.status).toBe(200);
  const token = account.body.admin_token as string;
  const project = await call(base, 'POST', '/api/v1/projects', { bearer: token, body: { name: 'alerts' } });
  expect(project.status).toBe(200);
  return { id: project.body.id as string, token, email: (account.body.email as string).toLowerCase() };
}

async function webhookTo(base: string, project: { id: string; token: string }, url: string) {
  const r = await call(base, 'POST', `/api/v1/projects/${project.id}/integrations`, {
    bearer: project.token,
    body: { kind: 'webhook', url },
  });
  expect(r.status).toBe(200);
  return { id: r.body.id as string, secret: r.body.secret as string };
}

/** An alert that fires at its first check: the hourly count of an event nobody tracks is 0, below 1. */
async function alwaysFiring(base: string, project: { id: string; token: string }, integrationId: string, name: string) {
  const r = await call(base, 'POST', `/api/v1/projects/${project.id}/alerts`, {
    bearer: project.token,
    body: {
      name,
      measure: 'event_count',
      event: 'never_tracked',
      interval: 'hour',
      condition: { type: 'below', value: 1 },
      channels: { integrations: [integrationId], email: true },
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id as string;
}

const database = (setup: ServiceSetup) => {
  const sql = createSql(setup.env.DATABASE_URL as string, { max: 2 });
  stopWhenDone(() => sql.end());
  return sql;
};

describe.skipIf(!withRedis)('exactly once with real processes', () => {
  it(
    'two services on one Redis and one PostgreSQL: each interval checked once, each change told once',
    async () => {
      const receiver = await startHttpReceiver();
      const a = withEnv(await serviceSetup(TEST_REDIS_URL), DELIVERY_ENV);
      const b = await twin(a);
      await Promise.all([startService(a), startService(b)]);
      const project = await proProject(a.base, a.operatorToken);
      const hook = await webhookTo(a.base, project, receiver.url);
      const alerts: string[] = [];
      for (let i = 0; i < 5; i += 1) alerts.push(await alwaysFiring(i % 2 ? b.base : a.base, project, hook.id, `always ${i}`));
      const sql = database(a);
      await eventually('every alert checked and told', PROCESS_WAIT_FLOOR_MS, async () => {
        const [row] = await sql<{ checked: number; pending: number }[]>`
          select (select count(distinct alert_id)::int from alert_checks where alert_id in ${sql(alerts)}) as checked,
                 (select count(*)::int from deliveries where project_id = ${project.id} and status <> 'delivered') as pending`;
        return row?.checked === alerts.length && row.pending === 0 && receiver.accepted.length >= alerts.length;
      });
      const checks = await sql<{ alert_id: string; interval_start: Date; notified: string | null }[]>`
        select alert_id, interval_start, notified from alert_checks where alert_id in ${sql(alerts)}`;
      // Each (alert, interval) once; only the first check of each alert told a change (firing).
      expect(new Set(checks.map((c) => `${c.alert_id}|${c.interval_start.toISOString()}`)).size).toBe(checks.length);
      expect(
        checks
          .filter((c) => c.notified === 'firing')
          .map((c) => c.alert_id)
          .sort(),
      ).toEqual([...alerts].sort());
      const deliveries = await sql<{ type: string; channel: string; recipient: string; status: string }[]>`
        select n.type, d.channel, d.recipient, d.status from deliveries d join notifications n on n.id = d.notification_id
        where d.project_id = ${project.id}`;
      expect(deliveries.filter((d) => d.channel === 'webhook')).toHaveLength(alerts.length);
      expect(deliveries.filter((d) => d.channel === 'email' && d.recipient === project.email)).toHaveLength(alerts.length);
      expect(deliveries.every((d) => d.type === 'alert.firing' && d.status === 'delivered')).toBe(true);
      // The receiver's own check: each request signed, each delivery id once, one per alert.
      expect(receiver.accepted).toHaveLength(alerts.length);
      expect(new Set(receiver.accepted.map((r) => r.headers['x-feedback-delivery-id'])).size).toBe(alerts.length);
      expect(new Set(receiver.accepted.map((r) => r.body.alert.id))).toEqual(new Set(alerts));
      for (const request of receiver.accepted)
        expect(verifySignature(hook.secret, request.raw, request.headers['x-feedback-signature'] as string)).toBe(true);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a service SIGKILLed between the check and the delivery tells the change once after its restart',
    async () => {
      // Refuses (503) until the service is back: nothing is accepted before the kill.
      let up = false;
      const receiver = await startHttpReceiver(() => (up ? 200 : 503));
      const setup = withEnv(await serviceSetup(TEST_REDIS_URL), DELIVERY_ENV);
      const first = await startService(setup);
      const project = await proProject(setup.base, setup.operatorToken);
      const hook = await webhookTo(setup.base, project, receiver.url);
      const alert = await alwaysFiring(setup.base, project, hook.id, 'killed');
      const sql = database(setup);
      // The check committed (with its notification): kill at once.
      await eventually('the alert checked', PROCESS_WAIT_FLOOR_MS, async () => {
        const [row] = await sql<{ n: number }[]>`select count(*)::int as n from alert_checks where alert_id = ${alert}`;
        return row?.n === 1;
      });
      first.signal('SIGKILL');
      await first.waitForExit(PROCESS_WAIT_FLOOR_MS);
      expect(receiver.accepted).toHaveLength(0);
      up = true;
      await startService(setup);
      await eventually('the change told after the restart', PROCESS_WAIT_FLOOR_MS, async () => {
        const [row] = await sql<{ n: number }[]>`
          select count(*)::int as n from deliveries where project_id = ${project.id} and status <> 'delivered'`;
        return row?.n === 0 && receiver.accepted.length >= 1;
      });
      const notifications = await sql<{ type: string }[]>`select type from notifications where project_id = ${project.id}`;
      expect(notifications.map((n) => n.type)).toEqual(['alert.firing']);
      const deliveries = await sql<{ id: string; channel: string }[]>`select id, channel from deliveries where project_id = ${project.id}`;
      expect(deliveries.map((d) => d.channel).sort()).toEqual(['email', 'webhook']);
      expect(receiver.accepted).toHaveLength(1);
      expect(receiver.accepted[0]?.headers['x-feedback-event']).toBe('alert.firing');
      expect(
        verifySignature(hook.secret, receiver.accepted[0]?.raw ?? '', receiver.accepted[0]?.headers['x-feedback-signature'] as string),
      ).toBe(true);
      // One email, one .eml, named by its delivery id.
      const email = deliveries.find((d) => d.channel === 'email');
      const files = (await readdir(path.join(setup.dataDir, 'mail'))).filter((f) => f.endsWith('.eml'));
      expect(files).toEqual([`${email?.id}.eml`]);
      // The alert was checked once for its interval, not again after the restart.
      const [checks] = await sql<{ n: number; intervals: number }[]>`
        select count(*)::int as n, count(distinct interval_start)::int as intervals from alert_checks where alert_id = ${alert}`;
      expect(checks?.n).toBe(checks?.intervals);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
