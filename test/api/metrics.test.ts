import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createFeedback, createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { eventually } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DAY = 24 * 3600 * 1000;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);
/** Noon UTC, n days ago: safely inside that day. */
const noonDaysAgo = (n: number) => `${daysAgo(n)}T12:00:00.000Z`;

async function track(project: TestProject, events: { eventName: string; userId: string; timestamp?: string; properties?: object }[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}

/** Waits until the outbox relay has moved every fact to ClickHouse. */
async function factsSettled() {
  await eventually('outbox drained', 10_000, async () => {
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
    return row?.n === 0;
  });
}

describe('metrics over events', () => {
  let team: TestProject;
  let free: TestProject;
  beforeAll(async () => {
    team = await createProject(server, { plan: 'team' });
    free = await createProject(server, { plan: 'free' });
    for (const project of [team, free]) {
      await track(project, [
        { eventName: 'feedback_list', userId: 'a', timestamp: noonDaysAgo(1), properties: { plan: 'pro' } },
        { eventName: 'feedback_list', userId: 'b', timestamp: noonDaysAgo(1), properties: { plan: 'free' } },
        { eventName: 'feedback_list', userId: 'a', timestamp: noonDaysAgo(2), properties: { plan: 'pro' } },
        { eventName: 'custom_open', userId: 'c', timestamp: noonDaysAgo(2) },
        { eventName: 'custom_open', userId: 'c', timestamp: noonDaysAgo(40) },
        { eventName: 'submit_feedback', userId: 'd', timestamp: noonDaysAgo(200) },
      ]);
    }
  });

  it('summary counts every event name on Team, exact unique users, and echoes the window', async () => {
    const r = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(10)}&date_to=${today()}`, {
      apiKey: team.apiKey,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      event_scope: 'all',
      retention_clamped: false,
      retention_window_days: 365,
      date_from: daysAgo(10),
      date_to: today(),
      measures: { event_count: 4, unique_event_users: 3, feedback_count: 0, vote_count: 0, comment_count: 0 },
    });
    expect(Object.keys(r.body.measures).sort()).toEqual(
      ['comment_count', 'event_count', 'feedback_count', 'unique_event_users', 'vote_count'].sort(),
    );
  });

  it('Free counts predefined events only and says event_scope predefined_only; an upgrade counts the custom ones', async () => {
    const r = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(10)}`, { apiKey: free.apiKey });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ event_scope: 'predefined_only', measures: { event_count: 3, unique_event_users: 2 } });
    const account = free.account;
    await setPlan(server, account, 'pro');
    const after = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(10)}`, { apiKey: free.apiKey });
    expect(after.body).toMatchObject({ event_scope: 'all', measures: { event_count: 4, unique_event_users: 3 } });
    await setPlan(server, account, 'free');
  });

  it('clamps a window longer than the plan allows to the most recent allowed days, as a 200', async () => {
    const r = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(300)}&date_to=${today()}&measures=event_count`, {
      apiKey: free.apiKey,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      retention_clamped: true,
      retention_window_days: 30,
      date_from: daysAgo(29),
      date_to: today(),
      measures: { event_count: 3 },
    });
    const team365 = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(300)}&measures=event_count`, {
      apiKey: team.apiKey,
    });
    expect(team365.body).toMatchObject({ retention_clamped: false, retention_window_days: 365, measures: { event_count: 6 } });
  });

  it('timeseries: every bucket present, zero-filled, in order', async () => {
    const r = await server.request(
      'GET',
      `/api/v1/metrics/timeseries?date_from=${daysAgo(3)}&date_to=${today()}&measures=event_count,unique_event_users`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.interval).toBe('day');
    expect(r.body.buckets.map((b: any) => b.start)).toEqual([3, 2, 1, 0].map((n) => `${daysAgo(n)}T00:00:00Z`));
    expect(r.body.buckets.map((b: any) => b.measures.event_count)).toEqual([0, 2, 2, 0]);
    expect(r.body.buckets.map((b: any) => b.measures.unique_event_users)).toEqual([0, 2, 2, 0]);
    const hourly = await server.request(
      'GET',
      `/api/v1/metrics/timeseries?interval=hour&date_from=${daysAgo(1)}&date_to=${daysAgo(1)}&measures=event_count`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(hourly.body.buckets).toHaveLength(24);
    expect(hourly.body.buckets[12].measures.event_count).toBe(2);
  });

  it('breakdown by event name (Pro+) and by property', async () => {
    const byName = await server.request('GET', `/api/v1/metrics/breakdown?dimension=event_name&date_from=${daysAgo(10)}`, {
      apiKey: team.apiKey,
    });
    expect(byName.status, JSON.stringify(byName.body)).toBe(200);
    expect(byName.body.rows).toEqual([
      { key: 'feedback_list', measures: { event_count: 3, unique_event_users: 2 } },
      { key: 'custom_open', measures: { event_count: 1, unique_event_users: 1 } },
    ]);
    const byProperty = await server.request(
      'GET',
      `/api/v1/metrics/breakdown?dimension=property.plan&date_from=${daysAgo(10)}&measures=event_count`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(byProperty.body.rows).toEqual([
      { key: 'pro', measures: { event_count: 2 } },
      { key: 'free', measures: { event_count: 1 } },
      { key: null, measures: { event_count: 1 } },
    ]);
  });

  it('402 METRICS_CUSTOM_EVENTS_REQUIRE_PRO for exactly the three cases below Pro', async () => {
    for (const path of [
      '/api/v1/metrics/breakdown?dimension=event_name',
      '/api/v1/metrics/summary?event=custom_open',
      '/api/v1/metrics/events',
    ]) {
      const r = await server.request('GET', path, { apiKey: free.apiKey });
      expect(r.status, path).toBe(402);
      expect(r.body).toEqual({ error: { code: 'METRICS_CUSTOM_EVENTS_REQUIRE_PRO', message: expect.any(String) } });
    }
    const predefined = await server.request('GET', '/api/v1/metrics/summary?event=feedback_list', { apiKey: free.apiKey });
    expect(predefined.status).toBe(200);
  });

  it('400s with stable codes; an admin measure on the key surface is 403', async () => {
    const cases: [string, number, string][] = [
      ['/api/v1/metrics/summary?date_from=2026-13-01', 400, 'METRICS_INVALID_DATE'],
      [`/api/v1/metrics/summary?date_from=${today()}&date_to=${daysAgo(1)}`, 400, 'METRICS_INVALID_RANGE'],
      ['/api/v1/metrics/summary?measures=nope', 400, 'METRICS_UNKNOWN_MEASURE'],
      ['/api/v1/metrics/summary?measures=total_mrr', 403, 'METRICS_MEASURE_REQUIRES_ADMIN_TOKEN'],
      ['/api/v1/metrics/timeseries?interval=minute', 400, 'METRICS_INVALID_INTERVAL'],
      [`/api/v1/metrics/timeseries?interval=hour&date_from=${daysAgo(200)}`, 400, 'METRICS_TOO_MANY_BUCKETS'],
      ['/api/v1/metrics/breakdown?dimension=colour', 400, 'METRICS_INVALID_DIMENSION'],
      ['/api/v1/metrics/breakdown?dimension=category&measures=event_count', 400, 'METRICS_MEASURE_NOT_SPLITTABLE'],
      ['/api/v1/metrics/breakdown?dimension=status&limit=0', 400, 'METRICS_INVALID_LIMIT'],
      ['/api/v1/metrics/events?cursor=garbage', 400, 'METRICS_INVALID_CURSOR'],
    ];
    for (const [path, status, code] of cases) {
      const r = await server.request('GET', path, { apiKey: team.apiKey });
      expect(r.status, path).toBe(status);
      expect(r.body, path).toEqual({ error: { code, message: expect.any(String) } });
    }
    const unauthenticated = await server.request('GET', '/api/v1/metrics/summary');
    expect(unauthenticated.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  });

  it('events feed: newest first, cursor paging without repeats or gaps, filters', async () => {
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=2&date_from=${daysAgo(300)}${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await server.request('GET', `/api/v1/metrics/events?${query}`, { apiKey: team.apiKey });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      all.push(...r.body.events.map((e: any) => e.created_at));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(all).toHaveLength(6);
    expect([...all].sort().reverse()).toEqual(all);
    const filtered = await server.request('GET', `/api/v1/metrics/events?user_id=a&event=feedback_list&date_from=${daysAgo(30)}`, {
      apiKey: team.apiKey,
    });
    expect(filtered.body.events).toHaveLength(2);
    expect(filtered.body.events[0]).toMatchObject({ event_name: 'feedback_list', user_id: 'a', properties: { plan: 'pro' } });
  });

  it('events feed: created_at in whole seconds, while the opaque cursor keeps the millisecond order within one second', async () => {
    const project = await createProject(server, { plan: 'team' });
    const second = `${daysAgo(1)}T12:00:00`;
    await track(project, [
      { eventName: 'tick', userId: 'first', timestamp: `${second}.100Z` },
      { eventName: 'tick', userId: 'third', timestamp: `${second}.300Z` },
      { eventName: 'tick', userId: 'second', timestamp: `${second}.200Z` },
    ]);
    const seen: { user_id: string; created_at: string }[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=1&date_from=${daysAgo(2)}${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await server.request('GET', `/api/v1/metrics/events?${query}`, { apiKey: project.apiKey });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      seen.push(...r.body.events);
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen.map((e) => e.user_id)).toEqual(['third', 'second', 'first']);
    expect(new Set(seen.map((e) => e.created_at))).toEqual(new Set([`${second}Z`]));
  });
});

describe('admin surface: feedback, SDK users and revenue', () => {
  it('answers the admin measures for the account project, 403 for another account, 401 without a token', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const item = await createFeedback(server, project, { userId: 'u1', category: 'bug_report' });
    for (const userId of ['u2', 'u3']) {
      await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId } });
    }
    await server.request('DELETE', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId: 'u3' } });
    await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      body: { userId: 'u2', content: 'hi' },
    });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'u1', mrr: 10 } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'u2', mrr: 5 } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'u2', mrr: 7.5 } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'u4' } });
    await factsSettled();

    const r = await server.request('GET', `/api/v1/projects/${project.id}/metrics/summary`, { bearer: account.adminToken });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.measures).toEqual({
      event_count: 0,
      unique_event_users: 0,
      feedback_count: 1,
      vote_count: 2, // creator + u2 + u3 - u3
      comment_count: 1,
      sdk_users: 3,
      new_sdk_users: 3,
      active_sdk_users: 3,
      paying_users: 2,
      total_mrr: 17.5,
      voter_mrr: 17.5, // u1 (creator vote) 10 + u2 7.5; u3 has none
    });
    const byCategory = await server.request('GET', `/api/v1/projects/${project.id}/metrics/breakdown?dimension=category`, {
      bearer: account.adminToken,
    });
    expect(byCategory.body.rows).toEqual([{ key: 'bug_report', measures: { feedback_count: 1, vote_count: 2, comment_count: 1 } }]);

    const other = await createAccount(server, 'team');
    const forbidden = await server.request('GET', `/api/v1/projects/${project.id}/metrics/summary`, { bearer: other.adminToken });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
    const missing = await server.request('GET', `/api/v1/projects/${project.id}/metrics/summary`);
    expect(missing.status).toBe(401);
  });
});

describe('events feed paging under concurrent inserts', () => {
  it('returns every event present at the start exactly once, and no row twice, while events keep arriving', async () => {
    const project = await createProject(server, { plan: 'pro' });
    // 300 events spread over the last 5 days, several sharing a timestamp (the id breaks ties).
    const initial = Array.from({ length: 300 }, (_, i) => ({
      eventName: `e${i % 4}`,
      userId: `u${i % 17}`,
      timestamp: new Date(Date.now() - (i % 100) * 3600 * 1000 - 60_000).toISOString(),
    }));
    for (let i = 0; i < initial.length; i += 100) await track(project, initial.slice(i, i + 100));
    const before = new Set<string>();
    {
      let cursor: string | null = null;
      do {
        const page: any = await server.request(
          'GET',
          `/api/v1/metrics/events?limit=1000&date_from=${daysAgo(10)}${cursor ? `&cursor=${cursor}` : ''}`,
          {
            apiKey: project.apiKey,
          },
        );
        for (const event of page.body.events) before.add(event.id);
        cursor = page.body.next_cursor;
      } while (cursor);
    }
    expect(before.size).toBe(300);

    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const page: any = await server.request(
        'GET',
        `/api/v1/metrics/events?limit=25&date_from=${daysAgo(10)}${cursor ? `&cursor=${cursor}` : ''}`,
        {
          apiKey: project.apiKey,
        },
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.events.map((e: any) => e.id));
      cursor = page.body.next_cursor;
      // Between pages, new events arrive: some newer than everything, some in the middle of the range.
      round += 1;
      await track(project, [
        { eventName: 'late', userId: 'x', timestamp: new Date(Date.now() - 1000).toISOString() },
        { eventName: 'late', userId: 'y', timestamp: new Date(Date.now() - (round % 90) * 3600 * 1000 - 30_000).toISOString() },
      ]);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });
});
