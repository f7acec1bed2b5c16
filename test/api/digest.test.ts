import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { weekStartOf } from '../../src/core/digest.js';
import { digestRecipients } from '../../src/oltp/digest.repo.js';
import { AlertEvaluator } from '../../src/workers/alerts.evaluator.js';
import { DigestScheduler } from '../../src/workers/digest.scheduler.js';
import { until } from '../helpers/eventually.js';
import { addMember, createFeedback, createProject, type TestMember, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * The weekly digest (docs/notifications.md "The weekly digest"): each section's numbers are the
 * API's own answers for the same days; each recipient's setting; the Monday send once per project
 * and week on a test clock; the one-click unsubscribe.
 */
const server = useTestServer();
const logger = pino({ level: 'silent' });

const DAY = 24 * 3600 * 1000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const monday = weekStartOf(new Date());
const today = isoDay(new Date());

let project: TestProject;
let member: TestMember;
const items: { id: string; title: string }[] = [];

async function admin(method: string, path: string, body?: unknown) {
  const r = await server.request(method, `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
}

beforeAll(async () => {
  await server.workers?.alerts.stop();
  await server.workers?.digest.stop();
  project = await createProject(server, { plan: 'team' });
  member = await addMember(server, project);
  // Voters with MRR, items with votes, a status change, a shipped item.
  for (const [user, mrr] of [
    ['rich', 500],
    ['mid', 50],
  ] as const) {
    const r = await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: user, mrr } });
    expect(r.status).toBe(200);
  }
  for (const title of ['Dark mode', 'Export to CSV', 'SSO', 'Offline mode', 'Widgets', 'Tags', 'API v2']) {
    items.push(await createFeedback(server, project, { title }));
  }
  const vote = (index: number, userId: string) =>
    server.request('POST', `/api/v1/feedbacks/${items[index]?.id}/votes`, { apiKey: project.apiKey, body: { userId } });
  for (const [index, user] of [
    [0, 'rich'],
    [0, 'a'],
    [0, 'b'],
    [1, 'mid'],
    [1, 'c'],
    [2, 'rich'],
    [3, 'mid'],
  ] as const) {
    expect((await vote(index, user)).status).toBe(200);
  }
  await admin('PATCH', `/feedbacks/${items[1]?.id}`, { status: 'in_progress' });
  await admin('PATCH', `/feedbacks/${items[2]?.id}`, { status: 'completed' });
  // Events this week and on the same days of the week before.
  const events = [];
  for (let i = 0; i < 6; i += 1)
    events.push({
      eventName: 'feedback_list',
      userId: `now-${i % 4}`,
      timestamp: new Date(Math.max(monday.getTime(), Date.now() - 3600_000) + i * 1000).toISOString(),
    });
  for (let i = 0; i < 3; i += 1)
    events.push({
      eventName: 'feedback_list',
      userId: `before-${i}`,
      timestamp: new Date(monday.getTime() - 7 * DAY + 3600 * 1000 + i * 1000).toISOString(),
    });
  const r = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(r.status).toBe(200);
  await server.eventsVisible();
  // An alert that fires at its first check, this week.
  const alert = await server.request('POST', `/api/v1/projects/${project.id}/alerts`, {
    bearer: project.account.adminToken,
    body: { name: 'Always', measure: 'event_count', interval: 'hour', condition: { type: 'below', value: 1_000_000 } },
  });
  expect(alert.status).toBe(200);
  await new AlertEvaluator(server.sql, server.clickhouse, logger, { now: () => new Date() }).runOnce();
});

/** The preview, once the facts of the status changes reached ClickHouse (the outbox relay). */
const preview = () =>
  until('the status changes in the digest', 60_000, async () => {
    const r = await server.request('GET', `/api/v1/projects/${project.id}/digest/preview`, { bearer: project.account.adminToken });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.status_changes.count === 2 ? r.body : undefined;
  });

async function summary(from: string, to: string, measures: string) {
  const r = await server.request(
    'GET',
    `/api/v1/projects/${project.id}/metrics/summary?date_from=${from}&date_to=${to}&measures=${measures}`,
    {
      bearer: project.account.adminToken,
    },
  );
  expect(r.status).toBe(200);
  return r.body.measures;
}

describe('the digest of the week so far', () => {
  it('each section’s numbers are the API’s own answers for the same days', async () => {
    const digest = await preview();
    expect(digest.week).toEqual({ date_from: isoDay(monday), date_to: today, complete: false });
    const now = await summary(isoDay(monday), today, 'event_count,unique_event_users,sessions,feedback_count');
    const lastDay = new Date(Date.parse(`${today}T00:00:00Z`) - 7 * DAY);
    const before = await summary(isoDay(new Date(monday.getTime() - 7 * DAY)), isoDay(lastDay), 'event_count,unique_event_users,sessions');
    expect(digest.activity.events).toMatchObject({ value: now.event_count, previous: before.event_count });
    expect(digest.activity.unique_users).toMatchObject({ value: now.unique_event_users, previous: before.unique_event_users });
    expect(digest.activity.sessions).toMatchObject({ value: now.sessions, previous: before.sessions });
    expect(digest.activity.events.value).toBe(6);
    expect(digest.feedback.new_count).toBe(now.feedback_count);
    expect(digest.feedback.new_count).toBe(7);
    // The tops: the project's list sorted as the API sorts it, the week's items only, five.
    const byVotes = await admin('GET', '/feedbacks?sort=votes');
    expect(digest.feedback.top_by_votes.map((i: { id: string }) => i.id)).toEqual(
      byVotes
        .filter((f: { created_at: string }) => f.created_at >= `${isoDay(monday)}T00:00:00Z`)
        .slice(0, 5)
        .map((f: { id: string }) => f.id),
    );
    const byMrr = await admin('GET', '/feedbacks?sort=mrr');
    const withMrr = byMrr.filter((f: { total_mrr: number | null }) => (f.total_mrr ?? 0) > 0);
    expect(digest.feedback.top_by_mrr.map((i: { id: string; total_mrr: number }) => [i.id, i.total_mrr])).toEqual(
      withMrr.slice(0, 5).map((f: { id: string; total_mrr: number }) => [f.id, f.total_mrr]),
    );
    expect(digest.status_changes.items.map((i: { title: string; status: string }) => [i.title, i.status]).sort()).toEqual([
      ['Export to CSV', 'in_progress'],
      ['SSO', 'completed'],
    ]);
    expect(digest.shipped).toMatchObject({ count: 1, items: [{ title: 'SSO', previous_status: 'pending' }] });
    expect(digest.alerts_fired).toMatchObject([{ name: 'Always' }]);
    expect(digest.html).toContain('SSO');
    expect(digest.text).toContain(`Events: 6`);
    expect(digest.subject).toBe(`[${project.name}] Your week: 7 new feedback, 6 events`);
  });
});

describe('who gets it', () => {
  it('on by default for the owner, off for a member until it turns it on; each sets only its own', async () => {
    expect(await admin('GET', '/digest/settings')).toEqual({ enabled: true, email: project.account.email, role: 'owner' });
    const mine = () => server.request('GET', `/api/v1/projects/${project.id}/digest/settings`, { bearer: member.adminToken });
    expect((await mine()).body).toEqual({ enabled: false, email: member.email, role: 'member' });
    const on = await server.request('PUT', `/api/v1/projects/${project.id}/digest/settings`, {
      bearer: member.adminToken,
      body: { enabled: true },
    });
    expect(on.body).toMatchObject({ enabled: true, role: 'member' });
    expect((await admin('GET', '/digest/settings')).enabled).toBe(true);
    const bad = await server.request('PUT', `/api/v1/projects/${project.id}/digest/settings`, {
      bearer: member.adminToken,
      body: { enabled: 'yes' },
    });
    expect(bad.status).toBe(400);
    // A member's token acts for the account, but its digest setting is on its own project.
    const other = await createProject(server, { account: project.account });
    const elsewhere = await server.request('GET', `/api/v1/projects/${other.id}/digest/settings`, { bearer: member.adminToken });
    expect(elsewhere.status).toBe(403);
  });
});

describe('the Monday send', () => {
  it('is made once per project and week, whatever the number of schedulers', async () => {
    const nextMonday = new Date(monday.getTime() + 7 * DAY + 3600 * 1000);
    const scheduler = () => new DigestScheduler(server.sql, server.clickhouse, logger, () => nextMonday);
    const [a, b] = await Promise.all([scheduler().runOnce(), scheduler().runOnce()]);
    expect([...a, ...b].filter((id) => id === project.id)).toHaveLength(1);
    expect(await scheduler().runOnce()).not.toContain(project.id);
    const [run] = await server.sql<{ content: { feedback: { new_count: number }; week: { complete: boolean; date_to: string } } }[]>`
      select content from digest_runs where project_id = ${project.id}`;
    expect(run?.content.feedback.new_count).toBe(7);
    expect(run?.content.week).toMatchObject({ complete: true, date_to: isoDay(new Date(monday.getTime() + 6 * DAY)) });
  });
});

describe('the unsubscribe link', () => {
  it('GET changes nothing; POST stops that recipient’s digest', async () => {
    // The owner's row, with its token, is written on the digest's first use (its dispatch, which the
    // workers may not have reached yet): written here the same way, it is there whatever ran before.
    await digestRecipients(server.sql, project.id, 'team');
    const [row] = await server.sql<{ unsubscribe_token: string }[]>`
      select unsubscribe_token from digest_subscriptions where project_id = ${project.id} and member_id is null`;
    const token = row?.unsubscribe_token;
    const look = await server.request('GET', `/api/v1/unsubscribe/digest/${token}`);
    expect(look.body).toEqual({
      project_id: project.id,
      project_name: project.name,
      email: project.account.email.toLowerCase(),
      subscribed: true,
    });
    const page = await server.request('GET', `/api/v1/unsubscribe/digest/${token}`, { headers: { accept: 'text/html' } });
    expect(await page.body).toContain('<form method="post"');
    const done = await server.request('POST', `/api/v1/unsubscribe/digest/${token}`, {
      rawBody: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(done.body).toEqual({ unsubscribed: true, project_id: project.id });
    expect((await admin('GET', '/digest/settings')).enabled).toBe(false);
    expect((await server.request('POST', `/api/v1/unsubscribe/digest/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });
});
