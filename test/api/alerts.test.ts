import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { addIntegration, addMember, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/** The alerts routes (docs/notifications.md "Alerts"): CRUD, plan limits, bad input, the preview and Send test. */
const server = useTestServer();

const ALERT = {
  name: 'Sign-ups halved',
  measure: 'event_count',
  event: 'signup',
  interval: 'day',
  condition: { type: 'decrease', percent: 50 },
};

let pro: TestProject;
let team: TestProject;
let integration: { id: string };
let otherIntegration: { id: string };

beforeAll(async () => {
  await server.workers?.alerts.stop();
  pro = await createProject(server, { plan: 'pro' });
  team = await createProject(server, { plan: 'team' });
  integration = await addIntegration(server, pro);
  otherIntegration = await addIntegration(server, team);
});

const post = (project: TestProject, body: unknown, token = project.account.adminToken) =>
  server.request('POST', `/api/v1/projects/${project.id}/alerts`, { bearer: token, body });

describe('creating, reading, changing and deleting', () => {
  it('creates an alert that starts unknown, with its channels; lists, reads, changes and deletes it', async () => {
    const created = await post(pro, { ...ALERT, channels: { integrations: [integration.id], email: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      name: 'Sign-ups halved',
      measure: 'event_count',
      event: 'signup',
      filters: [],
      interval: 'day',
      condition: { type: 'decrease', percent: 50 },
      channels: { integrations: [integration.id], email: true },
      enabled: true,
      state: 'unknown',
      last_value: null,
      last_checked_at: null,
    });
    const id = created.body.id;
    const list = await server.request('GET', `/api/v1/projects/${pro.id}/alerts`, { bearer: pro.account.adminToken });
    expect(list.body.map((a: { id: string }) => a.id)).toContain(id);
    const one = await server.request('GET', `/api/v1/projects/${pro.id}/alerts/${id}`, { bearer: pro.account.adminToken });
    expect(one.body).toEqual(created.body);
    const changed = await server.request('PATCH', `/api/v1/projects/${pro.id}/alerts/${id}`, {
      bearer: pro.account.adminToken,
      body: { name: 'Renamed', condition: { type: 'below', value: 3 }, channels: { integrations: [], email: false } },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Renamed',
      condition: { type: 'below', value: 3 },
      channels: { integrations: [], email: false },
      measure: 'event_count',
    });
    const checks = await server.request('GET', `/api/v1/projects/${pro.id}/alerts/${id}/checks`, { bearer: pro.account.adminToken });
    expect(checks.body).toEqual([]);
    const gone = await server.request('DELETE', `/api/v1/projects/${pro.id}/alerts/${id}`, { bearer: pro.account.adminToken });
    expect(gone.status).toBe(200);
    const again = await server.request('GET', `/api/v1/projects/${pro.id}/alerts/${id}`, { bearer: pro.account.adminToken });
    expect(again.status).toBe(404);
  });

  it('accepts snake_case fields and every measure family of the metrics API', async () => {
    for (const measure of ['mau', 'sum:properties.amount', 'p95:amount', 'sessions', 'bounce_rate', 'total_mrr', 'feedback_count']) {
      const r = await post(team, { ...ALERT, measure, filters: [{ property: 'properties.plan', op: 'eq', value: 'pro' }] });
      expect(r.status, `${measure}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });

  it('lets a team member manage the project’s alerts on Team', async () => {
    const member = await addMember(server, team);
    const r = await post(team, ALERT, member.adminToken);
    expect(r.status).toBe(200);
  });
});

describe('plan limits', () => {
  it('Free has no alerts: a 402 in the server-wide body', async () => {
    const free = await createProject(server, { plan: 'free' });
    const r = await post(free, ALERT);
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ error: true, reason: 'alerts require the Pro or Team plan' });
  });

  it('Pro allows 5 per project: the sixth is a 402, concurrent creations included', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const results = await Promise.all(Array.from({ length: 7 }, () => post(project, ALERT)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 402);
    expect(refused).toHaveLength(2);
    expect(refused[0]?.body.reason).toBe('the pro plan allows 5 alerts per project');
  });
});

describe('bad input: a clear 400, nothing saved', () => {
  it.each([
    ['an unknown measure', { measure: 'revenue' }, /^measure: unknown measure "revenue"/],
    ['a bad filter', { filters: [{ property: 'properties.plan', op: 'eqq', value: 1 }] }, /^filters\.0\.op: unknown op "eqq"/],
    ['a pattern the engine cannot compile', { filters: [{ property: 'properties.plan', op: 'regex', value: '(' }] }, /^filters\.0/],
    ['an unknown interval', { interval: 'month' }, /^interval: must be one of hour, day, week/],
    ['a condition of no known type', { condition: { type: 'equals', value: 3 } }, /^condition\.type: must be/],
    ['a percentage for above', { condition: { type: 'above', percent: 3 } }, /^condition/],
    ['a zero percentage', { condition: { type: 'increase', percent: 0 } }, /^condition\.percent: must be more than 0/],
    [
      'an unknown integration id',
      { channels: { integrations: [randomUUID()], email: false } },
      /^channels\.integrations: unknown integration/,
    ],
    ['a missing name', { name: undefined }, /^name: is required/],
  ])('%s', async (_, change, reason) => {
    const before = await server.request('GET', `/api/v1/projects/${team.id}/alerts`, { bearer: team.account.adminToken });
    const r = await post(team, { ...ALERT, ...change });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toBe(true);
    expect(r.body.reason).toMatch(reason);
    const after = await server.request('GET', `/api/v1/projects/${team.id}/alerts`, { bearer: team.account.adminToken });
    expect(after.body).toHaveLength(before.body.length);
  });

  it('another project’s integration is a 404, as elsewhere', async () => {
    const r = await post(pro, { ...ALERT, channels: { integrations: [otherIntegration.id], email: false } });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: true, reason: 'integration not found' });
  });

  it('a PATCH refused leaves the alert as it was', async () => {
    const created = await post(team, ALERT);
    const r = await server.request('PATCH', `/api/v1/projects/${team.id}/alerts/${created.body.id}`, {
      bearer: team.account.adminToken,
      body: { name: 'New name', measure: 'nope' },
    });
    expect(r.status).toBe(400);
    const one = await server.request('GET', `/api/v1/projects/${team.id}/alerts/${created.body.id}`, { bearer: team.account.adminToken });
    expect(one.body.name).toBe(ALERT.name);
  });

  it('another account’s project is a 403, an unknown alert a 404', async () => {
    const r = await post(team, ALERT, pro.account.adminToken);
    expect(r.status).toBe(403);
    const missing = await server.request('GET', `/api/v1/projects/${team.id}/alerts/${randomUUID()}`, { bearer: team.account.adminToken });
    expect(missing.status).toBe(404);
  });
});

describe('the preview and Send test', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'team' });
    const today = new Date();
    const events = [];
    // 3 sign-ups on each of the last 10 days but one, 9 on that one: a spike.
    for (let n = 1; n <= 10; n += 1) {
      const at = new Date(
        Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - n * 24 * 3600 * 1000 + 12 * 3600 * 1000,
      );
      for (let i = 0; i < (n === 4 ? 9 : 3); i += 1)
        events.push({ eventName: 'signup', userId: `u${n}-${i}`, timestamp: new Date(at.getTime() + i * 1000).toISOString() });
    }
    events.push({ eventName: 'signup', userId: 'now', timestamp: new Date(Date.now() - 1000).toISOString() });
    const r = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
    expect(r.status).toBe(200);
    await server.eventsVisible();
  });

  it('judges the last 30 intervals from unknown: the spike would have fired once and resolved', async () => {
    const r = await server.request('POST', `/api/v1/projects/${project.id}/alerts/preview`, {
      bearer: project.account.adminToken,
      body: { measure: 'event_count', event: 'signup', interval: 'day', condition: { type: 'above', value: 5 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.intervals).toHaveLength(30);
    expect(r.body.fired).toBe(1);
    const fired = r.body.intervals.filter((i: { notified: string | null }) => i.notified !== null);
    expect(fired.map((i: { notified: string; value: number }) => [i.notified, i.value])).toEqual([
      ['firing', 9],
      ['resolved', 3],
    ]);
    expect(r.body.intervals.at(-1)).toMatchObject({ value: 3, covered: true, state: 'ok' });
  });

  it('Send test answers the value of the interval so far and changes no state', async () => {
    const created = await post(project, { ...ALERT, condition: { type: 'above', value: 0 } });
    const r = await server.request('POST', `/api/v1/projects/${project.id}/alerts/${created.body.id}/test`, {
      bearer: project.account.adminToken,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ value: 1, previous_value: 3, condition_met: true, state: 'unknown' });
    const after = await server.request('GET', `/api/v1/projects/${project.id}/alerts/${created.body.id}`, {
      bearer: project.account.adminToken,
    });
    expect(after.body).toMatchObject({ state: 'unknown', last_value: null });
    const checks = await server.request('GET', `/api/v1/projects/${project.id}/alerts/${created.body.id}/checks`, {
      bearer: project.account.adminToken,
    });
    expect(checks.body).toEqual([]);
  });
});
