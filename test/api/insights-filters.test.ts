/**
 * Filters and compare on the insights (issue 38, sections 1 and 4; docs/insights.md): `filters` on
 * funnel, retention and paths bodies, a funnel step's own `filters` beside `where`, `compare` on the
 * funnel with the earlier window clamped at the plan's allowance; refusals naming the filter by its
 * position, and the 402 of an `event_name` filter naming a custom event below Pro. Hand-made logs.
 */
import { describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DAY_MS = 86_400_000;
const dayAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
const at = (n: number, hour: number) => `${dayAgo(n)}T${String(hour).padStart(2, '0')}:00:00.000Z`;

type Tracked = { eventName: string; userId: string; timestamp?: string; properties?: Record<string, unknown> };

async function track(project: TestProject, events: Tracked[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}

const post = (project: TestProject, path: string, body: unknown) =>
  server.request('POST', `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });
const users = (steps: { users: number }[]) => steps.map((s) => s.users);

describe('filters on the funnel', () => {
  it('the body’s filters narrow every step’s events; a step’s own filters and where narrow that step', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'view', userId: 'u1', timestamp: at(2, 8), properties: { plan: 'pro', amount: 30 } },
      { eventName: 'buy', userId: 'u1', timestamp: at(2, 9), properties: { amount: 30 } },
      { eventName: 'view', userId: 'u2', timestamp: at(2, 8), properties: { plan: 'free', amount: 5 } },
      { eventName: 'buy', userId: 'u2', timestamp: at(2, 9), properties: { amount: 5 } },
      { eventName: 'view', userId: 'u3', timestamp: at(2, 8), properties: { plan: 'pro', amount: '50' } },
      { eventName: 'buy', userId: 'u3', timestamp: at(2, 9), properties: { amount: 2 } },
    ]);
    const funnel = async (body: Record<string, unknown>) => {
      const response = await post(project, '/insights/funnel', body);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return users(response.body.steps);
    };
    // A numeric op compares numbers: u3's "50" is a string written as a number.
    expect(
      await funnel({
        steps: [{ eventName: 'view' }, { eventName: 'buy' }],
        filters: [{ property: 'properties.amount', op: 'gte', value: 10 }],
      }),
    ).toEqual([2, 1]);
    expect(
      await funnel({
        steps: [{ eventName: 'view', filters: [{ property: 'properties.plan', op: 'eq', value: 'pro' }] }, { eventName: 'buy' }],
      }),
    ).toEqual([2, 2]);
    // where (equality, same JSON type) and the step's filters together; an any group in the body.
    expect(
      await funnel({
        steps: [
          { eventName: 'view', where: { plan: 'pro' }, filters: [{ property: 'properties.amount', op: 'lt', value: 40 }] },
          { eventName: 'buy' },
        ],
      }),
    ).toEqual([1, 1]);
    expect(
      await funnel({
        steps: [{ eventName: 'view' }, { eventName: 'buy' }],
        filters: [
          {
            any: [
              { property: 'user_id', op: 'eq', value: 'u2' },
              { property: 'properties.plan', op: 'is_set' },
            ],
          },
        ],
      }),
    ).toEqual([3, 1]);
  });

  it('compare: previous_period is the same number of days right before date_from, with its own steps', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'view', userId: 'now', timestamp: at(3, 8) },
      { eventName: 'buy', userId: 'now', timestamp: at(3, 9) },
      { eventName: 'view', userId: 'then-1', timestamp: at(8, 8) },
      { eventName: 'view', userId: 'then-2', timestamp: at(7, 8) },
      { eventName: 'buy', userId: 'then-2', timestamp: at(7, 9) },
      // Before the earlier window: not read.
      { eventName: 'view', userId: 'older', timestamp: at(12, 8) },
    ]);
    const response = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'view' }, { eventName: 'buy' }],
      dateFrom: dayAgo(5),
      dateTo: dayAgo(1),
      compare: 'previous_period',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(users(response.body.steps)).toEqual([1, 1]);
    expect(response.body.compare).toMatchObject({ date_from: dayAgo(10), date_to: dayAgo(6), retention_clamped: false });
    expect(response.body.compare.steps).toEqual([
      { event_name: 'view', users: 2, conversion_from_first: 1, conversion_from_previous: null, median_seconds_to_convert: null },
      { event_name: 'buy', users: 1, conversion_from_first: 0.5, conversion_from_previous: 0.5, median_seconds_to_convert: 3600 },
    ]);
    const without = await post(project, '/insights/funnel', { steps: [{ eventName: 'view' }, { eventName: 'buy' }] });
    expect(without.body.compare).toBeUndefined();
  });

  it('compare obeys the plan’s allowance counted back from date_to: what lies before it is not read', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'view', userId: 'inside', timestamp: at(25, 8) },
      { eventName: 'view', userId: 'before-the-allowance', timestamp: at(35, 8) },
    ]);
    // 20 days ending yesterday; the 20 days before reach back past the 30 days Pro allows.
    const response = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'view' }, { eventName: 'buy' }],
      dateFrom: dayAgo(20),
      dateTo: dayAgo(1),
      compare: 'previous_period',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.compare).toMatchObject({ date_from: dayAgo(30), date_to: dayAgo(21), retention_clamped: true });
    expect(users(response.body.compare.steps)).toEqual([1, 0]);
    // A year earlier lies wholly before the allowance: nothing is read.
    const year = await post(project, '/insights/funnel', {
      steps: [{ eventName: 'view' }, { eventName: 'buy' }],
      dateFrom: dayAgo(20),
      dateTo: dayAgo(1),
      compare: 'previous_year',
    });
    expect(year.status).toBe(200);
    expect(year.body.compare.retention_clamped).toBe(true);
    expect(users(year.body.compare.steps)).toEqual([0, 0]);
  });
});

describe('filters on retention and paths', () => {
  it('retention reads only the events that pass the filters, as cohort and as return events', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'open', userId: 'u1', timestamp: at(4, 8), properties: { plan: 'free' } },
      { eventName: 'open', userId: 'u1', timestamp: at(3, 8), properties: { plan: 'pro' } },
      { eventName: 'open', userId: 'u1', timestamp: at(2, 8), properties: { plan: 'pro' } },
      { eventName: 'open', userId: 'u2', timestamp: at(3, 8), properties: { plan: 'free' } },
    ]);
    const response = await post(project, '/insights/retention', {
      interval: 'day',
      periods: 2,
      dateFrom: dayAgo(4),
      dateTo: dayAgo(1),
      filters: [{ property: 'properties.plan', op: 'eq', value: 'pro' }],
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.cohorts.map((c: { cohort_start: string; retained: number[] }) => [c.cohort_start, c.retained])).toEqual([
      [dayAgo(4), [0, 0, 0]],
      [dayAgo(3), [1, 1, 0]],
      [dayAgo(2), [0, 0]],
      [dayAgo(1), [0]],
    ]);
  });

  it('paths are made of the events that pass the filters only', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await track(project, [
      { eventName: 'a', userId: 'u1', timestamp: at(2, 8), properties: { k: 1 } },
      { eventName: 'b', userId: 'u1', timestamp: at(2, 9), properties: { k: 2 } },
      { eventName: 'c', userId: 'u1', timestamp: at(2, 10), properties: { k: 1 } },
      { eventName: 'b', userId: 'u2', timestamp: at(2, 8), properties: { k: 2 } },
    ]);
    const response = await post(project, '/insights/paths', { depth: 3, filters: [{ property: 'properties.k', op: 'eq', value: 1 }] });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.users).toBe(1);
    expect(response.body.paths).toEqual([{ events: ['a', 'c'], users: 1 }]);
    expect(response.body.edges).toEqual([{ step: 2, from: 'a', to: 'c', users: 1 }]);
  });
});

describe('filter refusals on the insights', () => {
  it('a bad filter is a 400 METRICS_INVALID_PARAMETER naming it by its position, in the body or in a step', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const cases: [string, unknown, RegExp][] = [
      [
        '/insights/funnel',
        {
          steps: [{ eventName: 'a' }, { eventName: 'b' }],
          filters: [
            { property: 'user_id', op: 'eq', value: 'x' },
            { property: 'event_name', op: 'eqq', value: 'a' },
          ],
        },
        /^filters\.1\.op: unknown op "eqq"/,
      ],
      [
        '/insights/funnel',
        { steps: [{ eventName: 'a' }, { eventName: 'b', filters: [{ property: 'properties.n', op: 'gt', value: 'ten' }] }] },
        /^steps\.1\.filters\.0\.value: gt takes a finite number/,
      ],
      ['/insights/retention', { interval: 'day', periods: 1, filters: { property: 'user_id' } }, /^filters: must be a JSON list/],
      ['/insights/paths', { filters: [{ property: 'properties.a;drop', op: 'is_set' }] }, /^filters\.0\.property: unknown property/],
      [
        '/insights/paths',
        { filters: [{ property: 'properties.a', op: 'regex', value: '(' }] },
        /^filters\.0\.value: not a valid re2 pattern/,
      ],
      [
        '/insights/funnel',
        { steps: [{ eventName: 'a', filters: [{ property: 'user_id', op: 'regex', value: '[' }] }, { eventName: 'b' }] },
        /^steps\.0\.filters\.0\.value: not a valid re2 pattern/,
      ],
      [
        '/insights/funnel',
        { steps: [{ eventName: 'a' }, { eventName: 'b' }], compare: 'last_week' },
        /^compare: must be previous_period or previous_year/,
      ],
    ];
    for (const [path, body, message] of cases) {
      const response = await post(project, path, body);
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.code).toBe('METRICS_INVALID_PARAMETER');
      expect(response.body.error.message).toMatch(message);
    }
  });

  it('below Pro an event_name filter naming a custom event is a 402; one naming a predefined event answers', async () => {
    const project = await createProject(server, { plan: 'free' });
    const steps = [{ eventName: 'feedback_list' }, { eventName: 'feedback_detail' }];
    for (const [path, body] of [
      ['/insights/funnel', { steps, filters: [{ property: 'event_name', op: 'neq', value: 'checkout' }] }],
      [
        '/insights/funnel',
        { steps: [steps[0], { ...steps[1], filters: [{ property: 'event_name', op: 'in', value: ['feedback_detail', 'x'] }] }] },
      ],
      ['/insights/retention', { interval: 'day', periods: 1, filters: [{ property: 'event_name', op: 'eq', value: 'checkout' }] }],
      ['/insights/paths', { filters: [{ any: [{ property: 'event_name', op: 'eq', value: 'checkout' }] }] }],
    ] as const) {
      const response = await post(project, path, body);
      expect(response.status, `${path} ${JSON.stringify(response.body)}`).toBe(402);
      expect(response.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    }
    const ok = await post(project, '/insights/paths', { filters: [{ property: 'event_name', op: 'eq', value: 'feedback_list' }] });
    expect(ok.status).toBe(200);
    expect(ok.body.event_scope).toBe('predefined_only');
  });
});
