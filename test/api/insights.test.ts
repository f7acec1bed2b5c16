/**
 * The insights routes over HTTP (issues 24 and 30, docs/insights.md): funnel, retention, paths, event names,
 * feature impact (a fixed scenario), saved queries; plan rules (window clamp, 402 for custom
 * events below Pro), credentials (owner, member on Team), either casing in, snake_case out.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { addMember, createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DAY_MS = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);
const daysAgo = (n: number, hour = 12) => {
  const d = new Date(Date.now() - n * DAY_MS);
  d.setUTCHours(hour, 0, 0, 0);
  return d.toISOString();
};

type Tracked = { eventName: string; userId: string; timestamp?: string; properties?: Record<string, unknown> };

async function track(project: TestProject, events: Tracked[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}

const post = (project: TestProject, path: string, body: unknown, bearer = project.account.adminToken) =>
  server.request('POST', `/api/v1/projects/${project.id}${path}`, { bearer, body });
const get = (project: TestProject, path: string, bearer = project.account.adminToken) =>
  server.request('GET', `/api/v1/projects/${project.id}${path}`, { bearer });

describe('POST /projects/:id/insights/funnel', () => {
  it('counts users per step in order within the conversion window, with conversions, median time and a breakdown', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      // u1: all three steps, 1 h then 2 h apart
      { eventName: 'open_app', userId: 'u1', timestamp: daysAgo(3, 8), properties: { platform: 'ios' } },
      { eventName: 'search', userId: 'u1', timestamp: daysAgo(3, 9), properties: { platform: 'ios' } },
      { eventName: 'purchase', userId: 'u1', timestamp: daysAgo(3, 11), properties: { platform: 'ios' } },
      // u2: steps 1 and 2, 3 h apart; step 3 too late (2 days after step 1, window is 1 day)
      { eventName: 'open_app', userId: 'u2', timestamp: daysAgo(4, 8), properties: { platform: 'android' } },
      { eventName: 'search', userId: 'u2', timestamp: daysAgo(4, 11), properties: { platform: 'android' } },
      { eventName: 'purchase', userId: 'u2', timestamp: daysAgo(2, 9), properties: { platform: 'android' } },
      // u3: step 2 before step 1: only step 1
      { eventName: 'search', userId: 'u3', timestamp: daysAgo(5, 8) },
      { eventName: 'open_app', userId: 'u3', timestamp: daysAgo(5, 9) },
    ]);
    const response = await post(project, '/insights/funnel', {
      steps: [{ event_name: 'open_app' }, { eventName: 'search' }, { eventName: 'purchase' }],
      conversion_window_seconds: 86_400,
      breakdown: 'platform',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const body = response.body;
    expect(body).toMatchObject({ event_scope: 'all', retention_clamped: false, retention_window_days: 30, date_to: today() });
    expect(body.steps).toEqual([
      { event_name: 'open_app', users: 3, conversion_from_first: 1, conversion_from_previous: null, median_seconds_to_convert: null },
      { event_name: 'search', users: 2, conversion_from_first: 2 / 3, conversion_from_previous: 2 / 3, median_seconds_to_convert: 7200 },
      { event_name: 'purchase', users: 1, conversion_from_first: 1 / 3, conversion_from_previous: 0.5, median_seconds_to_convert: 10_800 },
    ]);
    expect(body.breakdown).toBe('platform');
    expect(
      body.breakdown_values.map((v: { value: string | null; steps: { users: number }[] }) => [v.value, v.steps.map((s) => s.users)]),
    ).toEqual([
      ['android', [1, 1, 0]],
      ['ios', [1, 1, 1]],
      [null, [1, 0, 0]],
    ]);
  });

  it('filters steps by property equality', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'view', userId: 'a', timestamp: daysAgo(1, 8), properties: { plan: 'pro' } },
      { eventName: 'buy', userId: 'a', timestamp: daysAgo(1, 9) },
      { eventName: 'view', userId: 'b', timestamp: daysAgo(1, 8), properties: { plan: 'free' } },
      { eventName: 'buy', userId: 'b', timestamp: daysAgo(1, 9) },
    ]);
    const response = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'view', where: { plan: 'pro' } }, { eventName: 'buy' }],
    });
    expect(response.status).toBe(200);
    expect(response.body.conversion_window_seconds).toBe(7 * 86_400);
    expect(response.body.steps.map((s: { users: number }) => s.users)).toEqual([1, 1]);
  });

  it('below Pro: a custom step is a 402 METRICS_CUSTOM_EVENTS_REQUIRE_PRO; predefined steps answer with event_scope predefined_only', async () => {
    const project = await createProject(server, { plan: 'free' });
    const refused = await post(project, '/insights/funnel', { steps: [{ eventName: 'feedback_list' }, { eventName: 'checkout' }] });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    const ok = await post(project, '/insights/funnel', { steps: [{ eventName: 'feedback_list' }, { eventName: 'feedback_detail' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.event_scope).toBe('predefined_only');
  });

  it('the plan clamps the window: a narrowed 200 that says so', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const response = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'a' }, { eventName: 'b' }],
      dateFrom: '2020-01-01',
      dateTo: '2026-01-31',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      retention_clamped: true,
      retention_window_days: 30,
      date_from: '2026-01-02',
      date_to: '2026-01-31',
    });
  });

  it('refuses bad bodies in the metrics error body, naming the field', async () => {
    const project = await createProject(server, { plan: 'pro' });
    for (const [body, field] of [
      [{ steps: [{ eventName: 'a' }] }, 'steps'],
      [{ steps: [{ eventName: 'a' }, { eventName: '' }] }, 'steps.1.eventName'],
      [{ steps: [{ eventName: 'a' }, { eventName: 'b' }], conversionWindowSeconds: 0 }, 'conversionWindowSeconds'],
      [{ steps: [{ eventName: 'a' }, { eventName: 'b' }], dateFrom: 'yesterday' }, 'dateFrom'],
      [{ steps: [{ eventName: 'a' }, { eventName: 'b', where: { plan: { nested: 1 } } }] }, 'steps.1.where.plan'],
    ] as const) {
      const response = await post(project, '/insights/funnel', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('METRICS_INVALID_PARAMETER');
      expect(response.body.error.message).toContain(field);
    }
    const range = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'a' }, { eventName: 'b' }],
      dateFrom: '2026-02-02',
      dateTo: '2026-02-01',
    });
    expect(range.body.error.code).toBe('METRICS_INVALID_RANGE');
  });

  it('takes a member token on Team, refuses another account (403), no token (401), unknown project (404)', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const body = { steps: [{ eventName: 'a' }, { eventName: 'b' }] };
    expect((await post(project, '/insights/funnel', body, member.adminToken)).status).toBe(200);
    const other = await createProject(server, { plan: 'team' });
    expect((await post(project, '/insights/funnel', body, other.account.adminToken)).status).toBe(403);
    expect((await server.request('POST', `/api/v1/projects/${project.id}/insights/funnel`, { body })).status).toBe(401);
    expect(
      (await server.request('POST', `/api/v1/projects/${randomUUID()}/insights/funnel`, { body, bearer: project.account.adminToken }))
        .status,
    ).toBe(404);
  });
});

describe('POST /projects/:id/insights/retention', () => {
  it('cohorts by first occurrence, returns per period, one cohort per day of the window', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'signup', userId: 'r1', timestamp: daysAgo(3) },
      { eventName: 'open_app', userId: 'r1', timestamp: daysAgo(2) },
      { eventName: 'open_app', userId: 'r1', timestamp: daysAgo(0, 0) },
      { eventName: 'signup', userId: 'r2', timestamp: daysAgo(3) },
      { eventName: 'signup', userId: 'r3', timestamp: daysAgo(2) },
      { eventName: 'open_app', userId: 'r3', timestamp: daysAgo(1) },
    ]);
    const from = daysAgo(3).slice(0, 10);
    const response = await post(project, '/insights/retention', {
      cohort_event: 'signup',
      return_event: 'open_app',
      interval: 'day',
      periods: 3,
      dateFrom: from,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      date_from: from,
      date_to: today(),
      interval: 'day',
      periods: 3,
      cohort_event: 'signup',
      return_event: 'open_app',
    });
    expect(response.body.cohorts).toEqual([
      { cohort_start: daysAgo(3).slice(0, 10), users: 2, retained: [2, 1, 0, 1] },
      { cohort_start: daysAgo(2).slice(0, 10), users: 1, retained: [1, 1, 0] },
      { cohort_start: daysAgo(1).slice(0, 10), users: 0, retained: [0, 0] },
      { cohort_start: today(), users: 0, retained: [0] },
    ]);
  });

  it('below Pro a custom cohort event is a 402; periods outside 1..52 a 400', async () => {
    const project = await createProject(server, { plan: 'free' });
    const refused = await post(project, '/insights/retention', { cohortEvent: 'signup', interval: 'week', periods: 4 });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    const bad = await post(project, '/insights/retention', { interval: 'week', periods: 53 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('periods');
  });
});

describe('POST /projects/:id/insights/paths', () => {
  /**
   * Five users (times are hours of one day; see docs/insights.md, "Paths"):
   * p1 home 8, search 9, search 9:30, product 10, checkout 11 (a repeat);
   * p2 home 8, product 9, home 10 (a name again later: not a repeat);
   * p3 search 8, product 9, checkout 10;
   * p4 settings 8, home 8 (the same millisecond: name order), product 9;
   * p5 home 8, search 9.
   */
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    const at = (user: string, day: number, ...steps: [string, number, number?][]) =>
      steps.map(([eventName, hour, minute = 0]) => {
        const t = new Date(daysAgo(day, hour));
        t.setUTCMinutes(minute);
        return { eventName, userId: user, timestamp: t.toISOString() };
      });
    await track(project, [
      ...at('p1', 3, ['home', 8], ['search', 9], ['search', 9, 30], ['product', 10], ['checkout', 11]),
      ...at('p2', 2, ['home', 8], ['product', 9], ['home', 10]),
      ...at('p3', 1, ['search', 8], ['product', 9], ['checkout', 10]),
      ...at('p4', 1, ['settings', 8], ['home', 8], ['product', 9]),
      ...at('p5', 2, ['home', 8], ['search', 9]),
    ]);
  });
  const edge = (step: number, from: string, to: string, users: number) => ({ step, from, to, users });

  it('from each user’s first event: every move with its users, most first, and the whole paths', async () => {
    const response = await post(project, '/insights/paths', {});
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      event_scope: 'all',
      retention_clamped: false,
      date_to: today(),
      start_event: null,
      end_event: null,
      depth: 4,
      limit: 50,
      exclude_events: [],
      users: 5,
    });
    expect(response.body.edges).toEqual([
      edge(2, 'home', 'search', 2),
      edge(2, 'home', 'product', 1),
      edge(2, 'home', 'settings', 1),
      edge(2, 'search', 'product', 1),
      edge(3, 'product', 'checkout', 1),
      edge(3, 'product', 'home', 1),
      edge(3, 'search', 'product', 1),
      edge(3, 'settings', 'product', 1),
      edge(4, 'product', 'checkout', 1),
    ]);
    expect(response.body.paths).toEqual([
      { events: ['home', 'product', 'home'], users: 1 },
      { events: ['home', 'search'], users: 1 },
      { events: ['home', 'search', 'product', 'checkout'], users: 1 },
      { events: ['home', 'settings', 'product'], users: 1 },
      { events: ['search', 'product', 'checkout'], users: 1 },
    ]);
  });

  it('from the first startEvent, cut at depth; users without it have no path', async () => {
    const response = await post(project, '/insights/paths', { start_event: 'product', depth: 2 });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ start_event: 'product', end_event: null, depth: 2, users: 4 });
    expect(response.body.edges).toEqual([edge(2, 'product', 'checkout', 2), edge(2, 'product', 'home', 1)]);
    expect(response.body.paths).toEqual([
      { events: ['product', 'checkout'], users: 2 },
      { events: ['product'], users: 1 },
      { events: ['product', 'home'], users: 1 },
    ]);
  });

  it('up to the last endEvent, keeping the last depth names', async () => {
    const response = await post(project, '/insights/paths', { endEvent: 'product', depth: 3 });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ start_event: null, end_event: 'product', users: 4 });
    expect(response.body.paths).toEqual([
      { events: ['home', 'product'], users: 1 },
      { events: ['home', 'search', 'product'], users: 1 },
      { events: ['home', 'settings', 'product'], users: 1 },
      { events: ['search', 'product'], users: 1 },
    ]);
    expect(response.body.edges).toEqual([
      edge(2, 'home', 'product', 1),
      edge(2, 'home', 'search', 1),
      edge(2, 'home', 'settings', 1),
      edge(2, 'search', 'product', 1),
      edge(3, 'search', 'product', 1),
      edge(3, 'settings', 'product', 1),
    ]);
  });

  it('leaves excludeEvents out before repeats are collapsed, and lists at most limit edges', async () => {
    const response = await post(project, '/insights/paths', { excludeEvents: ['search'], limit: 2 });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ exclude_events: ['search'], limit: 2, users: 5 });
    expect(response.body.edges).toEqual([edge(2, 'home', 'product', 2), edge(2, 'home', 'settings', 1)]);
    expect(response.body.paths[0]).toEqual({ events: ['home'], users: 1 });
  });

  it('refuses bad bodies in the metrics error body, naming the field', async () => {
    for (const [body, text] of [
      [{ depth: 1 }, 'depth'],
      [{ depth: 7 }, 'depth'],
      [{ limit: 201 }, 'limit'],
      [{ startEvent: 'a', endEvent: 'b' }, 'not both'],
      [{ startEvent: 'a', excludeEvents: ['a'] }, 'excludeEvents'],
      [{ excludeEvents: [''] }, 'excludeEvents.0'],
      [{ dateFrom: 'yesterday' }, 'dateFrom'],
    ] as const) {
      const response = await post(project, '/insights/paths', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('METRICS_INVALID_PARAMETER');
      expect(response.body.error.message).toContain(text);
    }
  });

  it('below Pro: a custom start, end or excluded event is a 402; predefined ones answer with event_scope predefined_only', async () => {
    const free = await createProject(server, { plan: 'free' });
    await track(free, [
      { eventName: 'feedback_list', userId: 'f', timestamp: daysAgo(1, 8) },
      { eventName: 'checkout', userId: 'f', timestamp: daysAgo(1, 9) },
      { eventName: 'feedback_detail', userId: 'f', timestamp: daysAgo(1, 10) },
    ]);
    for (const body of [{ startEvent: 'checkout' }, { endEvent: 'checkout' }, { excludeEvents: ['feedback_list', 'checkout'] }]) {
      const refused = await post(free, '/insights/paths', body);
      expect(refused.status, JSON.stringify(body)).toBe(402);
      expect(refused.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    }
    const ok = await post(free, '/insights/paths', { startEvent: 'feedback_list' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ event_scope: 'predefined_only', users: 1 });
    // The custom event between them is not read.
    expect(ok.body.paths).toEqual([{ events: ['feedback_list', 'feedback_detail'], users: 1 }]);
  });

  it('takes a member token on Team, refuses another account (403) and no token (401); the plan clamps the window', async () => {
    const team = await createProject(server, { plan: 'team' });
    const member = await addMember(server, team);
    expect((await post(team, '/insights/paths', {}, member.adminToken)).status).toBe(200);
    expect((await post(team, '/insights/paths', {}, project.account.adminToken)).status).toBe(403);
    expect((await server.request('POST', `/api/v1/projects/${team.id}/insights/paths`, { body: {} })).status).toBe(401);
    const clamped = await post(project, '/insights/paths', { dateFrom: '2020-01-01', dateTo: '2026-01-31' });
    expect(clamped.body).toMatchObject({
      retention_clamped: true,
      date_from: '2026-01-02',
      date_to: '2026-01-31',
      users: 0,
      edges: [],
      paths: [],
    });
  });

  it('the user-ordered copy behind it is not readable by the project’s SQL', async () => {
    const response = await server.request('POST', `/api/v1/projects/${project.id}/sql`, {
      bearer: project.account.adminToken,
      body: { query: 'SELECT count() FROM events_by_user' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.reason).toMatch(/events_by_user is not readable here/);
  });
});

describe('GET /projects/:id/event-names', () => {
  it('lists the names seen with their counts; below Pro custom names are left out', async () => {
    const events = [
      { eventName: 'feedback_list', userId: 'x', timestamp: daysAgo(1) },
      { eventName: 'checkout', userId: 'x', timestamp: daysAgo(1) },
      { eventName: 'checkout', userId: 'y', timestamp: daysAgo(2) },
    ];
    const pro = await createProject(server, { plan: 'pro' });
    const free = await createProject(server, { plan: 'free' });
    await track(pro, events);
    await track(free, events);
    const proNames = await get(pro, '/event-names');
    expect(proNames.body).toMatchObject({ event_scope: 'all' });
    expect(proNames.body.event_names).toEqual([
      { event_name: 'checkout', event_count: 2, predefined: false },
      { event_name: 'feedback_list', event_count: 1, predefined: true },
    ]);
    const freeNames = await get(free, '/event-names?limit=5');
    expect(freeNames.body).toMatchObject({ event_scope: 'predefined_only' });
    expect(freeNames.body.event_names).toEqual([{ event_name: 'feedback_list', event_count: 1, predefined: true }]);
    expect((await get(free, '/event-names?limit=0')).status).toBe(400);
  });
});

describe('feature impact: PUT/GET /projects/:id/feedbacks/:feedbackId/impact (fixed scenario)', () => {
  it('before shipping: shipped_at null; after: linked-event users before and after, adopting voters and their MRR, a daily series', {
    timeout: 120_000,
  }, async () => {
    const project = await createProject(server, { plan: 'team' });
    const item = await createFeedback(server, project, { userId: 'voter1' });
    for (const userId of ['voter2', 'voter3']) {
      const vote = await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId } });
      expect(vote.status).toBe(200);
    }
    for (const [userId, mrr] of [
      ['voter1', 10],
      ['voter2', 25.5],
      ['voter3', 99],
      ['other', 1000],
    ] as const) {
      expect((await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId, mrr } })).status).toBe(200);
    }
    const impactPath = `/feedbacks/${item.id}/impact`;
    const link = await server.request('PUT', `/api/v1/projects/${project.id}${impactPath}`, {
      bearer: project.account.adminToken,
      body: { event_names: ['dark_mode_on', 'dark_mode_on', 'theme_changed'] },
    });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(link.body).toEqual({ feedback_id: item.id, event_names: ['dark_mode_on', 'theme_changed'] });

    // Usage before shipping: one event of 'other' 3 days ago, one of voter3 2 days ago.
    await track(project, [
      { eventName: 'dark_mode_on', userId: 'other', timestamp: daysAgo(3) },
      { eventName: 'theme_changed', userId: 'voter3', timestamp: daysAgo(2) },
      { eventName: 'open_app', userId: 'voter2', timestamp: daysAgo(2) },
    ]);
    const before = await get(project, impactPath);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect(before.body).toMatchObject({ shipped_at: null, voters: 3, voters_adopted: null, before: null, after: null, series: [] });

    const ship = await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${item.id}`, {
      bearer: project.account.adminToken,
      body: { status: 'completed' },
    });
    expect(ship.status).toBe(200);
    let shipped: { body: Record<string, any> } = before;
    await eventually('the status change reached ClickHouse', 60_000, async () => {
      shipped = await get(project, impactPath);
      return shipped.body.shipped_at !== null;
    });
    const shippedAt = Date.parse(shipped.body.shipped_at);
    expect(Math.abs(shippedAt - Date.now())).toBeLessThan(60_000);

    // Usage after shipping (client timestamps a minute after the ship time): voter1 and voter3
    // adopt, voter2 is active but does not; 'other' uses it twice.
    const after = new Date(shippedAt + 60_000).toISOString();
    await track(project, [
      { eventName: 'dark_mode_on', userId: 'voter1', timestamp: after },
      { eventName: 'theme_changed', userId: 'voter3', timestamp: after },
      { eventName: 'dark_mode_on', userId: 'other', timestamp: after },
      { eventName: 'dark_mode_on', userId: 'other', timestamp: after },
      { eventName: 'open_app', userId: 'voter2', timestamp: after },
    ]);
    const answer = await get(project, `${impactPath}?days=7`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({
      event_scope: 'all',
      retention_clamped: false,
      retention_window_days: 365,
      feedback_id: item.id,
      event_names: ['dark_mode_on', 'theme_changed'],
      days: 7,
      voters: 3,
      voters_adopted: 2,
      voters_adopted_mrr: 109,
      before: { users: 2, events: 2 },
      after: { users: 3, events: 4, active_users: 4 },
      adoption_share: 0.75,
    });
    expect(answer.body.date_from).toBe(new Date(shippedAt - 7 * DAY_MS).toISOString().slice(0, 10));
    expect(answer.body.series).toHaveLength(answer.body.date_from === answer.body.date_to ? 1 : 15);
    const sum = answer.body.series.reduce((n: number, d: { events: number }) => n + d.events, 0);
    expect(sum).toBe(6);

    // Below Pro, reading a custom linked event is refused.
    const free = await createProject(server, { plan: 'free' });
    const freeItem = await createFeedback(server, free);
    await server.request('PUT', `/api/v1/projects/${free.id}/feedbacks/${freeItem.id}/impact`, {
      bearer: free.account.adminToken,
      body: { eventNames: ['x'] },
    });
    const refused = await get(free, `/feedbacks/${freeItem.id}/impact`);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    // An unknown item is a 404; an item without links is the normal empty state (a 200 the
    // dashboard draws without logging an error).
    expect((await get(project, `/feedbacks/${randomUUID()}/impact`)).status).toBe(404);
    const unlinked = await createFeedback(server, project);
    const empty = await get(project, `/feedbacks/${unlinked.id}/impact`);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ feedback_id: unlinked.id, event_names: [], before: null, after: null, series: [] });
  });
});

describe('GET /projects/:id/insights/ship-dates', () => {
  it('lists the items completed in the window with when, as impact reads shipped_at; reopened and other windows left out', {
    timeout: 120_000,
  }, async () => {
    const project = await createProject(server, { plan: 'team' });
    const shipped = await createFeedback(server, project, { title: 'Dark mode' });
    const reopened = await createFeedback(server, project, { title: 'Export' });
    await createFeedback(server, project, { title: 'Still pending' });
    const setStatus = async (id: string, status: string) => {
      const response = await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${id}`, {
        bearer: project.account.adminToken,
        body: { status },
      });
      expect(response.status).toBe(200);
    };
    await setStatus(shipped.id, 'completed');
    await setStatus(reopened.id, 'completed');
    await setStatus(reopened.id, 'in_progress');
    await server.request('PUT', `/api/v1/projects/${project.id}/feedbacks/${shipped.id}/impact`, {
      bearer: project.account.adminToken,
      body: { eventNames: ['dark_mode_on'] },
    });
    let answer: { status: number; body: Record<string, any> } = { status: 0, body: {} };
    await eventually('the status changes reached ClickHouse', 60_000, async () => {
      answer = await get(project, '/insights/ship-dates');
      const impact = await get(project, `/feedbacks/${shipped.id}/impact`);
      return answer.body.items?.length === 1 && impact.body.shipped_at !== null;
    });
    const impact = await get(project, `/feedbacks/${shipped.id}/impact`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      event_scope: 'all',
      retention_clamped: false,
      retention_window_days: 365,
      date_from: new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10),
      date_to: today(),
      items: [{ feedback_id: shipped.id, title: 'Dark mode', shipped_at: impact.body.shipped_at }],
    });
    // A window that ends before the ship date has none.
    const earlier = await get(project, `/insights/ship-dates?date_from=${daysAgo(10).slice(0, 10)}&date_to=${daysAgo(1).slice(0, 10)}`);
    expect(earlier.body.items).toEqual([]);
    // Refusals: a bad date in the metrics body, no token, another account's project.
    const bad = await get(project, '/insights/ship-dates?date_from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('METRICS_INVALID_DATE');
    expect((await server.request('GET', `/api/v1/projects/${project.id}/insights/ship-dates`)).status).toBe(401);
    const other = await createProject(server, { plan: 'team' });
    expect((await get(project, '/insights/ship-dates', other.account.adminToken)).status).toBe(403);
  });
});

describe('saved queries: GET/POST/DELETE /projects/:id/saved-queries', () => {
  it('stores, lists newest first, runs through POST /projects/:id/sql, deletes', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const first = await post(project, '/saved-queries', { name: 'events', sql: 'SELECT count() AS n FROM events' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ name: 'events', sql: 'SELECT count() AS n FROM events', created_by: project.account.email });
    const second = await post(project, '/saved-queries', { name: 'facts', sql: 'SELECT count() AS n FROM facts' }, member.adminToken);
    expect(second.body.created_by).toBe(member.email);
    const list = await get(project, '/saved-queries');
    expect(list.body.map((q: { id: string }) => q.id)).toEqual([second.body.id, first.body.id]);
    const run = await post(project, '/sql', { query: first.body.sql });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const removed = await server.request('DELETE', `/api/v1/projects/${project.id}/saved-queries/${first.body.id}`, {
      bearer: project.account.adminToken,
    });
    expect(removed.body).toEqual({ id: first.body.id, deleted: true });
    expect(
      (
        await server.request('DELETE', `/api/v1/projects/${project.id}/saved-queries/${first.body.id}`, {
          bearer: project.account.adminToken,
        })
      ).status,
    ).toBe(404);
    expect((await get(project, '/saved-queries')).body).toHaveLength(1);
    expect((await post(project, '/saved-queries', { name: '', sql: 'SELECT 1' })).status).toBe(400);
    const other = await createProject(server, { plan: 'team' });
    expect((await get(project, '/saved-queries', other.account.adminToken)).status).toBe(403);
  });
});
