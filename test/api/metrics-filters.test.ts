import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * The filter language, the new measures and compare on the metrics API (issue 38; docs/metrics.md
 * "Filters", "Measures", "Compare"), each definition pinned on a hand-made log.
 */
const server = useTestServer();

const DAY = 24 * 3600 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);
const noonDaysAgo = (n: number) => `${daysAgo(n)}T12:00:00.000Z`;

async function track(project: TestProject, events: { eventName: string; userId: string; timestamp?: string; properties?: object }[]) {
  const response = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  await server.eventsVisible();
}

const q = (filters: unknown) => encodeURIComponent(JSON.stringify(filters));

let team: TestProject;
let free: TestProject;

beforeAll(async () => {
  team = await createProject(server, { plan: 'team' });
  free = await createProject(server, { plan: 'free' });
  await track(team, [
    { eventName: 'checkout', userId: 'u1', timestamp: noonDaysAgo(10), properties: { plan: 'pro', amount: 10, meta: { tier: 'gold' } } },
    { eventName: 'checkout', userId: 'u2', timestamp: noonDaysAgo(10), properties: { plan: 'free', amount: '20' } },
    { eventName: 'checkout', userId: 'u1', timestamp: noonDaysAgo(9), properties: { plan: 'pro', amount: 30, flag: true } },
    { eventName: 'view', userId: 'u3', timestamp: noonDaysAgo(9), properties: { plan: 'pro' } },
    { eventName: 'checkout', userId: 'u4', timestamp: noonDaysAgo(5), properties: { plan: 'Pro', amount: 'n/a' } },
    { eventName: 'checkout', userId: 'u5', timestamp: noonDaysAgo(40), properties: { plan: 'pro', amount: 5 } },
    { eventName: 'view', userId: 'u2', timestamp: noonDaysAgo(2), properties: {} },
  ]);
  await track(free, [
    { eventName: 'feedback_list', userId: 'a', timestamp: noonDaysAgo(3), properties: { plan: 'pro' } },
    { eventName: 'feedback_list', userId: 'b', timestamp: noonDaysAgo(25), properties: { plan: 'pro' } },
  ]);
});

async function summary(project: TestProject, query: string) {
  const r = await server.request('GET', `/api/v1/metrics/summary?${query}`, { apiKey: project.apiKey });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

const window12 = () => `date_from=${daysAgo(12)}&date_to=${daysAgo(0)}`;

describe('filters', () => {
  it('a list means all of its filters: string eq and numeric gte (a numeric string counts as its number)', async () => {
    const both = await summary(
      team,
      `${window12()}&measures=event_count,unique_event_users&filters=${q([
        { property: 'properties.plan', op: 'eq', value: 'pro' },
        { property: 'properties.amount', op: 'gte', value: 15 },
      ])}`,
    );
    expect(both.measures).toEqual({ event_count: 1, unique_event_users: 1 });
    const numeric = await summary(
      team,
      `${window12()}&measures=event_count&filters=${q([{ property: 'properties.amount', op: 'gte', value: 15 }])}`,
    );
    // 30 and "20"; "n/a" is not a number and never matches a numeric op.
    expect(numeric.measures).toEqual({ event_count: 2 });
  });

  it('a missing property matches only is_not_set and the negative ops', async () => {
    const count = async (filter: object) =>
      (await summary(team, `${window12()}&measures=event_count&filters=${q([filter])}`)).measures.event_count;
    // plan: pro, free, pro, pro, Pro, (none)
    expect(await count({ property: 'properties.plan', op: 'neq', value: 'pro' })).toBe(3);
    expect(await count({ property: 'properties.plan', op: 'not_in', value: ['pro', 'free'] })).toBe(2);
    expect(await count({ property: 'properties.plan', op: 'not_contains', value: 'r' })).toBe(1);
    expect(await count({ property: 'properties.plan', op: 'is_not_set' })).toBe(1);
    expect(await count({ property: 'properties.plan', op: 'is_set' })).toBe(5);
    expect(await count({ property: 'properties.amount', op: 'lt', value: 100 })).toBe(3);
    expect(await count({ property: 'properties.plan', op: 'regex', value: '(?i)^pro$' })).toBe(4);
    expect(await count({ property: 'properties.plan', op: 'starts_with', value: 'P' })).toBe(1);
    expect(await count({ property: 'properties.amount', op: 'between', value: [10, 20] })).toBe(2);
    // eq with a number matches the JSON number only, not the string "20"; eq with a string compares text.
    expect(await count({ property: 'properties.amount', op: 'eq', value: 20 })).toBe(0);
    expect(await count({ property: 'properties.amount', op: 'eq', value: '30' })).toBe(1);
    expect(await count({ property: 'properties.flag', op: 'eq', value: true })).toBe(1);
    expect(await count({ property: 'properties.meta.tier', op: 'eq', value: 'gold' })).toBe(1);
    expect(await count({ property: 'event_name', op: 'in', value: ['view'] })).toBe(2);
    expect(await count({ property: 'user_id', op: 'eq', value: 'u1' })).toBe(2);
    expect(await count({ property: 'user.mrr', op: 'is_set' })).toBe(0);
  });

  it('an any group means at least one of its filters; groups nest', async () => {
    const r = await summary(
      team,
      `${window12()}&measures=event_count&filters=${q([
        {
          any: [
            { property: 'properties.plan', op: 'eq', value: 'free' },
            { property: 'properties.flag', op: 'eq', value: true },
          ],
        },
      ])}`,
    );
    expect(r.measures.event_count).toBe(2);
    const nested = await summary(
      team,
      `${window12()}&measures=event_count&filters=${q([
        { any: [{ property: 'user_id', op: 'eq', value: 'u4' }, { any: [{ property: 'properties.amount', op: 'gt', value: 25 }] }] },
      ])}`,
    );
    expect(nested.measures.event_count).toBe(2);
  });

  it('applies to timeseries and breakdown alike', async () => {
    const f = q([{ property: 'properties.plan', op: 'eq', value: 'pro' }]);
    const ts = await server.request(
      'GET',
      `/api/v1/metrics/timeseries?date_from=${daysAgo(10)}&date_to=${daysAgo(8)}&measures=event_count&filters=${f}`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(ts.status, JSON.stringify(ts.body)).toBe(200);
    expect(ts.body.buckets.map((b: { measures: { event_count: number } }) => b.measures.event_count)).toEqual([1, 2, 0]);
    const bd = await server.request(
      'GET',
      `/api/v1/metrics/breakdown?${window12()}&dimension=event_name&measures=event_count&filters=${f}`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(bd.status, JSON.stringify(bd.body)).toBe(200);
    expect(bd.body.rows).toEqual([
      { key: 'checkout', measures: { event_count: 2 } },
      { key: 'view', measures: { event_count: 1 } },
    ]);
  });

  it('refuses bad lists with 400 METRICS_INVALID_PARAMETER naming the filter, never a 500', async () => {
    const cases: [unknown, RegExp][] = [
      ['not json', /^filters: must be a URL-encoded JSON list/],
      [[{ property: 'properties.plan', op: 'eqq', value: 'x' }], /^filters\.0\.op: unknown op "eqq"/],
      [
        [
          { property: 'properties.plan', op: 'eq', value: 'x' },
          { property: 'nope', op: 'eq', value: 1 },
        ],
        /^filters\.1\.property: /,
      ],
      [[{ property: 'properties.amount', op: 'gt', value: 'x' }], /^filters\.0\.value: gt takes a finite number/],
      [[{ property: 'properties.plan', op: 'is_set', value: 1 }], /^filters\.0\.value: is_set takes no value/],
      [[{ property: 'properties.a`b', op: 'eq', value: 1 }], /^filters\.0\.property: /],
      [
        [{ any: [{ any: [{ any: [{ property: 'user_id', op: 'eq', value: 'x' }] }] }] }],
        /^filters\.0\.any\.0\.any\.0\.any: groups nest at most 2 deep/,
      ],
      [Array.from({ length: 21 }, () => ({ property: 'user_id', op: 'eq', value: 'x' })), /^filters: at most 20 filters/],
      [[{ property: 'properties.plan', op: 'regex', value: '(?=a)' }], /^filters\.0\.value: not a valid re2 pattern/],
      [[{ property: 'properties.plan', op: 'regex', value: 'a'.repeat(1001) }], /^filters\.0\.value: regex takes a pattern/],
    ];
    for (const [filters, message] of cases) {
      const text = typeof filters === 'string' ? encodeURIComponent(filters) : q(filters);
      const r = await server.request('GET', `/api/v1/metrics/summary?filters=${text}`, { apiKey: team.apiKey });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe('METRICS_INVALID_PARAMETER');
      expect(r.body.error.message).toMatch(message);
    }
  });

  it('below Pro, an event_name filter naming a custom event is a 402; a predefined one answers', async () => {
    const custom = await server.request(
      'GET',
      `/api/v1/metrics/summary?filters=${q([{ property: 'event_name', op: 'neq', value: 'checkout' }])}`,
      {
        apiKey: free.apiKey,
      },
    );
    expect(custom.status).toBe(402);
    expect(custom.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    const predefined = await summary(
      free,
      `measures=event_count&filters=${q([{ property: 'event_name', op: 'eq', value: 'feedback_list' }])}`,
    );
    expect(predefined.measures.event_count).toBe(2);
  });
});

describe('measures', () => {
  it('property math over the numeric values in scope, numeric strings included, others skipped', async () => {
    const r = await summary(
      team,
      `${window12()}&measures=sum:amount,avg:properties.amount,min:amount,max:amount,median:amount,p90:amount,p99:properties.plan`,
    );
    expect(r.measures['sum:amount']).toBe(60);
    expect(r.measures['avg:properties.amount']).toBe(20);
    expect(r.measures['min:amount']).toBe(10);
    expect(r.measures['max:amount']).toBe(30);
    expect(r.measures['median:amount']).toBe(20);
    // Exact and interpolated between ranks: 20 + 0.8 × (30 − 20).
    expect(r.measures['p90:amount']).toBeCloseTo(28, 9);
    // No plan is a number: null, not 0.
    expect(r.measures['p99:properties.plan']).toBeNull();
  });

  it('a bucket without a numeric value answers null', async () => {
    const r = await server.request(
      'GET',
      `/api/v1/metrics/timeseries?date_from=${daysAgo(10)}&date_to=${daysAgo(8)}&measures=sum:amount,event_count`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.buckets.map((b: { measures: Record<string, unknown> }) => b.measures)).toEqual([
      { 'sum:amount': 30, event_count: 2 },
      { 'sum:amount': 30, event_count: 2 },
      { 'sum:amount': null, event_count: 0 },
    ]);
  });

  it('dau, wau and mau count the trailing 1, 7 and 30 days ending with date_to, reaching before date_from', async () => {
    const at9 = await summary(team, `date_from=${daysAgo(9)}&date_to=${daysAgo(9)}&measures=dau,wau,mau,events_per_user`);
    // d9: u1, u3; d15..d9 adds u2 (d10); d38..d9 the same (u5 is at d40).
    expect(at9.measures).toEqual({ dau: 2, wau: 3, mau: 3, events_per_user: 1 });
    const at5 = await summary(team, `date_from=${daysAgo(5)}&date_to=${daysAgo(5)}&measures=dau,wau,mau`);
    expect(at5.measures).toEqual({ dau: 1, wau: 4, mau: 4 });
    const filtered = await summary(
      team,
      `date_from=${daysAgo(5)}&date_to=${daysAgo(5)}&measures=wau&filters=${q([{ property: 'event_name', op: 'eq', value: 'view' }])}`,
    );
    expect(filtered.measures).toEqual({ wau: 1 });
  });

  it('a timeseries of wau ends each bucket’s trailing days with its last day', async () => {
    const r = await server.request('GET', `/api/v1/metrics/timeseries?date_from=${daysAgo(10)}&date_to=${daysAgo(8)}&measures=dau,wau`, {
      apiKey: team.apiKey,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.buckets.map((b: { measures: object }) => b.measures)).toEqual([
      { dau: 2, wau: 2 },
      { dau: 2, wau: 3 },
      { dau: 0, wau: 3 },
    ]);
  });

  it('events_per_user is null without users; breakdown splits the new measures by event name', async () => {
    const none = await summary(team, `date_from=${daysAgo(1)}&date_to=${daysAgo(0)}&measures=events_per_user`);
    expect(none.measures).toEqual({ events_per_user: null });
    const r = await server.request(
      'GET',
      `/api/v1/metrics/breakdown?${window12()}&dimension=event_name&measures=event_count,sum:amount,mau,events_per_user`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([
      { key: 'checkout', measures: { event_count: 4, 'sum:amount': 60, mau: 3, events_per_user: 4 / 3 } },
      { key: 'view', measures: { event_count: 2, 'sum:amount': null, mau: 2, events_per_user: 1 } },
    ]);
  });
});

describe('compare', () => {
  const main = () => `date_from=${daysAgo(9)}&date_to=${daysAgo(5)}`;

  it('summary: the same number of days right before date_from, and the change of each measure', async () => {
    const r = await summary(team, `${main()}&measures=event_count,sum:amount&compare=previous_period`);
    expect(r.measures).toEqual({ event_count: 3, 'sum:amount': 30 });
    expect(r.compare).toEqual({
      date_from: daysAgo(14),
      date_to: daysAgo(10),
      retention_clamped: false,
      measures: { event_count: 2, 'sum:amount': 30 },
      change: { event_count: 0.5, 'sum:amount': 0 },
    });
  });

  it('timeseries: as many buckets, aligned by position', async () => {
    const r = await server.request('GET', `/api/v1/metrics/timeseries?${main()}&measures=event_count&compare=previous_period`, {
      apiKey: team.apiKey,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.compare.buckets.map((b: { start: string }) => b.start)).toEqual(
      [14, 13, 12, 11, 10].map((n) => `${daysAgo(n)}T00:00:00Z`),
    );
    expect(r.body.compare.buckets.map((b: { measures: { event_count: number } }) => b.measures.event_count)).toEqual([0, 0, 0, 0, 2]);
    expect(r.body.buckets).toHaveLength(5);
  });

  it('breakdown: the earlier top rows, and each row’s change against the earlier row with its key', async () => {
    const r = await server.request(
      'GET',
      `/api/v1/metrics/breakdown?${main()}&dimension=event_name&measures=event_count&compare=previous_period`,
      {
        apiKey: team.apiKey,
      },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([
      { key: 'checkout', measures: { event_count: 2 }, change: { event_count: 0 } },
      { key: 'view', measures: { event_count: 1 }, change: { event_count: null } },
    ]);
    expect(r.body.compare.rows).toEqual([{ key: 'checkout', measures: { event_count: 2 } }]);
  });

  it('previous_year reads the same dates a year earlier', async () => {
    const r = await summary(team, `${main()}&measures=event_count&compare=previous_year`);
    const yearBefore = (n: number) => {
      const d = new Date(Date.now() - n * DAY);
      const shifted = new Date(Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth(), 1));
      const last = new Date(Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth() + 1, 0)).getUTCDate();
      shifted.setUTCDate(Math.min(d.getUTCDate(), last));
      return shifted.toISOString().slice(0, 10);
    };
    expect(r.compare).toMatchObject({
      date_from: yearBefore(9),
      date_to: yearBefore(5),
      measures: { event_count: 0 },
      change: { event_count: null },
    });
  });

  it('the earlier window obeys the plan’s allowance: clamped at it, and nothing read when wholly before it', async () => {
    // Free: 30 days back from date_to (daysAgo(29)). The earlier 20 days run from d39 to d20: cut at d29.
    const cut = await summary(free, `date_from=${daysAgo(19)}&date_to=${daysAgo(0)}&measures=event_count&compare=previous_period`);
    expect(cut.compare).toMatchObject({
      date_from: daysAgo(29),
      date_to: daysAgo(20),
      retention_clamped: true,
      measures: { event_count: 1 },
    });
    const gone = await summary(free, `date_from=${daysAgo(29)}&date_to=${daysAgo(0)}&measures=event_count&compare=previous_period`);
    expect(gone.compare).toMatchObject({
      date_from: daysAgo(59),
      date_to: daysAgo(30),
      retention_clamped: true,
      measures: { event_count: 0 },
    });
  });

  it('refuses an unknown compare', async () => {
    const r = await server.request('GET', '/api/v1/metrics/summary?compare=last_week', { apiKey: team.apiKey });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: 'METRICS_INVALID_PARAMETER', message: 'compare must be previous_period or previous_year' });
  });
});

describe('event properties', () => {
  it('lists the paths seen in the window, their JSON types and top values as JSON values', async () => {
    const r = await server.request('GET', `/api/v1/projects/${team.id}/event-properties?${window12()}`, {
      bearer: team.account.adminToken,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ date_from: daysAgo(12), date_to: daysAgo(0), retention_clamped: false });
    const byPath = Object.fromEntries(r.body.properties.map((p: { property: string }) => [p.property, p]));
    expect(Object.keys(byPath)).toEqual(['properties.plan', 'properties.amount', 'properties.flag', 'properties.meta.tier']);
    expect(byPath['properties.plan']).toEqual({
      property: 'properties.plan',
      types: ['String'],
      top_values: [
        { value: 'pro', count: 3 },
        { value: 'Pro', count: 1 },
        { value: 'free', count: 1 },
      ],
    });
    expect(byPath['properties.amount'].types).toEqual(['Int64', 'String']);
    expect(byPath['properties.amount'].top_values).toEqual(
      expect.arrayContaining([
        { value: 10, count: 1 },
        { value: '20', count: 1 },
        { value: 30, count: 1 },
        { value: 'n/a', count: 1 },
      ]),
    );
    expect(byPath['properties.flag'].top_values).toEqual([{ value: true, count: 1 }]);
  });

  it('narrows to one event, and follows the plan rules', async () => {
    const views = await server.request('GET', `/api/v1/projects/${team.id}/event-properties?${window12()}&event=view`, {
      bearer: team.account.adminToken,
    });
    expect(views.body.properties).toEqual([{ property: 'properties.plan', types: ['String'], top_values: [{ value: 'pro', count: 1 }] }]);
    const custom = await server.request('GET', `/api/v1/projects/${free.id}/event-properties?event=checkout`, {
      bearer: free.account.adminToken,
    });
    expect(custom.status).toBe(402);
    expect(custom.body.error.code).toBe('METRICS_CUSTOM_EVENTS_REQUIRE_PRO');
    const bad = await server.request('GET', `/api/v1/projects/${free.id}/event-properties?date_from=2026-13-01`, {
      bearer: free.account.adminToken,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('METRICS_INVALID_DATE');
  });
});
