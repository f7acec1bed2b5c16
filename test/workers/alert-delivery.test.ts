import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { weekStartOf } from '../../src/core/digest.js';
import { AlertEvaluator } from '../../src/workers/alerts.evaluator.js';
import { DigestScheduler } from '../../src/workers/digest.scheduler.js';
import { verifySignature } from '../../src/workers/notify/signature.js';
import { eventually } from '../helpers/eventually.js';
import { addIntegration, addMember, createFeedback, createProject, type TestMember, type TestProject } from '../helpers/factories.js';
import { settledDeliveries } from '../helpers/notifications.js';
import { type HttpReceiver, startHttpReceiver } from '../helpers/receivers.js';
import { useTestServer } from '../helpers/server.js';

/**
 * Alerts and the digest through the delivery log (docs/notifications.md "Alerts", "The weekly
 * digest"): who gets what, each message once, emails read back from the `.eml` files of embedded
 * mode with mailparser, webhooks checked by their signature at a receiver of the test's own.
 */
const server = useTestServer({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_BACKOFF_MS: '50', DELIVERY_TIMEOUT_MS: '3000' } });
const logger = pino({ level: 'silent' });
const DAY = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;
const BASE = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 20 * DAY;
const day = (n: number) => new Date(BASE + n * DAY);
let clock = new Date();
const evaluator = () => new AlertEvaluator(server.sql, server.clickhouse, logger, { now: () => clock });

/** Every email written so far, parsed, by delivery id (the file name). */
async function emails(): Promise<Map<string, ParsedMail>> {
  const dir = path.join(server.dataDir, 'mail');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.eml'));
  const parsed = new Map<string, ParsedMail>();
  for (const file of files) parsed.set(file.slice(0, -4), await simpleParser(await readFile(path.join(dir, file))));
  return parsed;
}
const to = (mail: ParsedMail) =>
  (Array.isArray(mail.to) ? mail.to : mail.to ? [mail.to] : []).flatMap((a) => a.value.map((v) => v.address));

async function track(project: TestProject, events: object[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}
const signups = (n: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    eventName: 'signup',
    userId: `u${n}-${i}`,
    timestamp: new Date(day(n).getTime() + 12 * HOUR + i * 1000).toISOString(),
  }));

let team: TestProject;
let member: TestMember;
let webhook: HttpReceiver;
let slack: HttpReceiver;
let secret: string;
let hookId: string;
let slackId: string;

beforeAll(async () => {
  await server.workers?.alerts.stop();
  await server.workers?.digest.stop();
  webhook = await startHttpReceiver();
  slack = await startHttpReceiver();
  team = await createProject(server, { plan: 'team' });
  member = await addMember(server, team);
  const hook = await addIntegration(server, team, { kind: 'webhook', url: webhook.url });
  secret = hook.secret;
  hookId = hook.id;
  slackId = (await addIntegration(server, team, { kind: 'slack', url: slack.url })).id;
  // An integration the alert does not name hears nothing of it.
  await addIntegration(server, team, { kind: 'discord', url: `${slack.url}/other` });
  await track(team, [...signups(0, 5), ...signups(1, 4), ...signups(2, 1), ...signups(3, 3)]);
});

describe('an alert’s changes of state', () => {
  it('firing, staying, resolved, firing again: 3 messages to each channel, signed, emailed to the owner and the members', async () => {
    clock = day(0);
    const created = await server.request('POST', `/api/v1/projects/${team.id}/alerts`, {
      bearer: team.account.adminToken,
      body: {
        name: 'Sign-ups above 2',
        measure: 'event_count',
        event: 'signup',
        interval: 'day',
        condition: { type: 'above', value: 2 },
        channels: { integrations: [hookId, slackId], email: true },
      },
    });
    expect(created.status).toBe(200);
    const before = new Set((await emails()).keys());
    for (const n of [0, 1, 2, 3]) {
      clock = new Date(BASE + (n + 1) * DAY + 61_000);
      await evaluator().runOnce();
    }
    const deliveries = (await settledDeliveries(server, team, 30_000)).filter((d) => d.type.startsWith('alert.'));
    expect(deliveries.map((d) => d.type).sort()).toEqual(
      [...Array(4).fill('alert.firing'), ...Array(4).fill('alert.firing'), ...Array(4).fill('alert.resolved')].sort(),
    );
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);

    // The webhook: 3 requests, each verified by its signature, as a receiver would.
    // Deliveries of different notifications run in no guaranteed order (docs/notifications.md), so
    // the three messages are compared as a set.
    expect(webhook.accepted.map((r) => r.headers['x-feedback-event']).sort()).toEqual(['alert.firing', 'alert.firing', 'alert.resolved']);
    for (const request of webhook.accepted) {
      expect(verifySignature(secret, request.raw, request.headers['x-feedback-signature'] as string)).toBe(true);
      expect(verifySignature('whsec_not-the-secret-000000000000', request.raw, request.headers['x-feedback-signature'] as string)).toBe(
        false,
      );
    }
    // The first firing: the one about day 0 (the second fired on day 2).
    const firing = webhook.accepted.find(
      (r) => r.body?.type === 'alert.firing' && r.body?.interval_start === `${day(0).toISOString().slice(0, 10)}T00:00:00Z`,
    );
    expect(firing?.body).toMatchObject({
      type: 'alert.firing',
      project_id: team.id,
      alert: {
        id: created.body.id,
        name: 'Sign-ups above 2',
        measure: 'event_count',
        event: 'signup',
        condition: { type: 'above', value: 2 },
      },
      value: 5,
      interval_start: `${day(0).toISOString().slice(0, 10)}T00:00:00Z`,
      dashboard_url: expect.stringMatching(new RegExp(`/projects/${team.id}/alerts$`)),
      test: false,
    });
    // Slack: a readable message; the Discord integration the alert does not name got nothing.
    expect(slack.accepted.filter((r) => r.path === '/hook')).toHaveLength(3);
    expect(slack.accepted.filter((r) => r.path !== '/hook')).toHaveLength(0);
    const texts = slack.accepted.map((r) => String(r.body.text));
    expect(texts.filter((text) => text.includes('Alert “Sign-ups above 2” is firing'))).toHaveLength(2);
    expect(texts.filter((text) => text.includes('resolved'))).toHaveLength(1);

    // Emails: one per change to the owner and to the member, read from the .eml files.
    const mails = [...(await emails()).entries()].filter(([id]) => !before.has(id)).map(([, mail]) => mail);
    expect(mails).toHaveLength(6);
    const owner = mails.filter((mail) => to(mail).includes(team.account.email.toLowerCase()));
    expect(owner.map((mail) => mail.subject)).toHaveLength(3);
    expect(mails.filter((mail) => to(mail).includes(member.email.toLowerCase()))).toHaveLength(3);
    const firstMail = owner.find((mail) => mail.subject?.includes('is firing') && mail.text?.includes('Value: 5'));
    expect(firstMail?.subject).toBe(
      `[${team.name}] Alert “Sign-ups above 2” is firing: event_count of signup was 5 in the day from ${day(0).toISOString().slice(0, 10)} 00:00 UTC`,
    );
    expect(firstMail?.text).toContain('Fires when the value is above 2: it does.');
    expect(firstMail?.text).toContain(`/projects/${team.id}/alerts`);
    expect(firstMail?.html).toContain('Sign-ups above 2');
  });

  it('Send test: one message marked as a test to each channel, the state unchanged', async () => {
    const [alert] = (await server.request('GET', `/api/v1/projects/${team.id}/alerts`, { bearer: team.account.adminToken })).body;
    const hooks = webhook.accepted.length;
    const r = await server.request('POST', `/api/v1/projects/${team.id}/alerts/${alert.id}/test`, { bearer: team.account.adminToken });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.deliveries.map((d: { channel: string }) => d.channel).sort()).toEqual(['email', 'email', 'slack', 'webhook']);
    expect(r.body.deliveries.every((d: { type: string; status: string }) => d.type === 'alert.test' && d.status === 'pending')).toBe(true);
    await settledDeliveries(server, team, 30_000);
    expect(webhook.accepted).toHaveLength(hooks + 1);
    const test = webhook.accepted.at(-1);
    expect(test?.headers['x-feedback-event']).toBe('alert.test');
    expect(test?.body).toMatchObject({ type: 'alert.test', test: true, alert: { id: alert.id } });
    expect(verifySignature(secret, test?.raw ?? '', test?.headers['x-feedback-signature'] as string)).toBe(true);
    const after = (await server.request('GET', `/api/v1/projects/${team.id}/alerts/${alert.id}`, { bearer: team.account.adminToken })).body;
    expect(after.state).toBe(alert.state);
  });

  it('on Pro: the owner’s email and the integrations, no members (there are none below Team)', async () => {
    const pro = await createProject(server, { plan: 'pro' });
    await track(pro, signups(0, 3));
    const receiver = await startHttpReceiver();
    const hook = await addIntegration(server, pro, { kind: 'webhook', url: receiver.url });
    clock = day(0);
    const created = await server.request('POST', `/api/v1/projects/${pro.id}/alerts`, {
      bearer: pro.account.adminToken,
      body: {
        name: 'Pro',
        measure: 'event_count',
        interval: 'day',
        condition: { type: 'above', value: 1 },
        channels: { integrations: [hook.id], email: true },
      },
    });
    expect(created.status).toBe(200);
    clock = new Date(BASE + DAY + 61_000);
    await evaluator().runOnce();
    const deliveries = (await settledDeliveries(server, pro, 30_000)).filter((d) => d.type === 'alert.firing');
    expect(deliveries.map((d) => [d.channel, d.recipient, d.status]).sort()).toEqual(
      [
        ['email', pro.account.email.toLowerCase(), 'delivered'],
        ['webhook', hook.id, 'delivered'],
      ].sort(),
    );
    expect(receiver.accepted).toHaveLength(1);
  });
});

describe('the weekly digest email', () => {
  it('goes once to each opted-in recipient; its numbers are the API’s; its one-click link unsubscribes', async () => {
    const project = await createProject(server, { plan: 'team' });
    const optedIn = await addMember(server, project);
    await addMember(server, project); // stays off
    const on = await server.request('PUT', `/api/v1/projects/${project.id}/digest/settings`, {
      bearer: optedIn.adminToken,
      body: { enabled: true },
    });
    expect(on.status).toBe(200);
    const item = await createFeedback(server, project, { title: 'Digest me' });
    await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId: 'voter-1' } });
    const monday = weekStartOf(new Date());
    await track(project, [
      { eventName: 'feedback_list', userId: 'digest-u', timestamp: new Date(Math.max(monday.getTime(), Date.now() - HOUR)).toISOString() },
    ]);
    // The facts reach ClickHouse through the outbox relay.
    await eventually('the feedback facts in ClickHouse', 30_000, async () => {
      const r = await server.request('GET', `/api/v1/projects/${project.id}/metrics/summary?measures=feedback_count`, {
        bearer: project.account.adminToken,
      });
      return r.body.measures.feedback_count === 1;
    });
    const before = new Set((await emails()).keys());
    const nextMonday = new Date(monday.getTime() + 7 * DAY + HOUR);
    await Promise.all([
      new DigestScheduler(server.sql, server.clickhouse, logger, () => nextMonday).runOnce(),
      new DigestScheduler(server.sql, server.clickhouse, logger, () => nextMonday).runOnce(),
    ]);
    await settledDeliveries(server, project, 30_000);
    // Every project's digest went out on that Monday: this project's are those with its name.
    const ours = (mail: ParsedMail) => mail.subject?.startsWith(`[${project.name}] Your week`) === true;
    const mails = [...(await emails()).entries()]
      .filter(([id]) => !before.has(id))
      .map(([, mail]) => mail)
      .filter(ours);
    expect(mails.flatMap(to).sort()).toEqual([project.account.email.toLowerCase(), optedIn.email.toLowerCase()].sort());
    const mail = mails.find((m) => to(m).includes(project.account.email.toLowerCase())) as ParsedMail;
    // The numbers, as the API answers them for the same week.
    const sunday = new Date(monday.getTime() + 6 * DAY).toISOString().slice(0, 10);
    const summary = await server.request(
      'GET',
      `/api/v1/projects/${project.id}/metrics/summary?date_from=${monday.toISOString().slice(0, 10)}&date_to=${sunday}&measures=event_count,unique_event_users,sessions,feedback_count`,
      { bearer: project.account.adminToken },
    );
    const m = summary.body.measures;
    expect(mail.subject).toBe(`[${project.name}] Your week: ${m.feedback_count} new feedback, ${m.event_count} events`);
    expect(mail.text).toContain(`Events: ${m.event_count} (week before: 0, no earlier figure)`);
    expect(mail.text).toContain(`Unique users: ${m.unique_event_users} `);
    expect(mail.text).toContain(`Sessions: ${m.sessions} `);
    expect(mail.text).toContain(`New feedback: ${m.feedback_count}`);
    expect(mail.text).toContain('Digest me: 2 votes');
    expect(mail.html).toContain('Digest me');
    // The one-click unsubscribe, as mail clients send it (RFC 8058).
    const link = String((mail.headers.get('list') as { unsubscribe?: { url?: string } })?.unsubscribe?.url ?? '');
    expect(link).toMatch(/\/api\/v1\/unsubscribe\/digest\/[0-9a-f-]{36}$/);
    expect(mail.headerLines.find((h) => h.key === 'list-unsubscribe-post')?.line).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    const done = await fetch(link.replace(/^https?:\/\/[^/]+/, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(done.status).toBe(200);
    const setting = await server.request('GET', `/api/v1/projects/${project.id}/digest/settings`, { bearer: project.account.adminToken });
    expect(setting.body.enabled).toBe(false);
    // The week after: the member only.
    const later = new Set((await emails()).keys());
    await new DigestScheduler(server.sql, server.clickhouse, logger, () => new Date(nextMonday.getTime() + 7 * DAY)).runOnce();
    await settledDeliveries(server, project, 30_000);
    const next = [...(await emails()).entries()]
      .filter(([id]) => !later.has(id))
      .map(([, mail]) => mail)
      .filter(ours);
    expect(next.flatMap(to)).toEqual([optedIn.email.toLowerCase()]);
  });
});
