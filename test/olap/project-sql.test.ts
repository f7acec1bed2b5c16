import { beforeAll, describe, expect, it } from 'vitest';
import { untilNoneRunning, untilRunning } from '../helpers/engine-queries.js';
import { addMember, createAccount, createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

const TIMEOUT_MS = 3_000;
const server = useTestServer({
  workers: false,
  env: { PROJECT_SQL_TIMEOUT_MS: String(TIMEOUT_MS), PROJECT_SQL_MAX_MEMORY_MB: '64', PROJECT_SQL_ACCOUNT_CONCURRENCY: '1' },
});
let own: TestProject;
let other: TestProject;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'other');
});

const projectSql = (project: TestProject, body: Record<string, unknown>, bearer = project.account.adminToken) =>
  server.request('POST', `/api/v1/projects/${project.id}/sql`, { bearer, body });

const DAY_MS = 24 * 3600 * 1000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('POST /api/v1/projects/:id/sql: a read-only query that sees only its project', () => {
  it('answers columns, rows and the applied window and scope, like /admin/sql', async () => {
    const r = await projectSql(own, {
      query: 'SELECT event_name, count() AS n FROM events WHERE user_id LIKE {u:String} GROUP BY event_name ORDER BY event_name',
      params: { u: 'own-%' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.columns).toEqual([
      { name: 'event_name', type: 'LowCardinality(String)' },
      { name: 'n', type: 'UInt64' },
    ]);
    expect(r.body.rows).toEqual([
      { event_name: 'feedback_list', n: '1' },
      { event_name: 'own_custom', n: '1' },
      { event_name: 'submit_feedback', n: '1' },
    ]);
    expect(r.body).toMatchObject({
      row_count: 3,
      truncated: false,
      elapsed_ms: expect.any(Number),
      event_scope: 'all',
      retention_clamped: false,
      retention_window_days: 30,
      date_from: isoDay(Date.now() - 29 * DAY_MS),
      date_to: isoDay(Date.now()),
    });
  });

  it('a parameter value over 256 KiB is a 400 naming it, not a 500; one just under it runs', async () => {
    const uuids = (n: number) => `[${Array.from({ length: n }, () => `'${crypto.randomUUID()}'`).join(',')}]`;
    const query = 'SELECT count() AS n FROM events WHERE event_id IN {ids:Array(UUID)}';
    const over = await projectSql(own, { query, params: { ids: uuids(7_000) } });
    expect(over.status, JSON.stringify(over.body)).toBe(400);
    expect(over.body).toEqual({
      error: true,
      reason: expect.stringMatching(/^params\.ids: must be at most 262144 characters/),
      message: expect.stringMatching(/^params\.ids: must be at most 262144 characters/),
    });
    const under = await projectSql(own, { query, params: { ids: uuids(6_600) } });
    expect(under.status, JSON.stringify(under.body)).toBe(200);
    expect(under.body.rows).toEqual([{ n: '0' }]);
  });

  it('reads facts and both rollups of its project only, in its window', async () => {
    const r = await projectSql(own, {
      query: `SELECT
        (SELECT groupUniqArray(user_id) FROM events) AS event_users,
        (SELECT groupUniqArray(category) FROM facts) AS categories,
        (SELECT sum(events) FROM events_daily) AS daily,
        (SELECT sum(events) FROM events_hourly) AS hourly,
        (SELECT groupUniqArray(toString(project_id)) FROM events) AS projects`,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [row] = r.body.rows;
    expect([...row.event_users].sort()).toEqual(['own-user-1', 'own-user-2']);
    expect(row.categories).toEqual(['own-category']);
    expect([row.daily, row.hourly]).toEqual(['3', '3']);
    expect(row.projects).toEqual([own.id]);
  });

  it('cuts results at 10,000 rows and says so', async () => {
    const r = await projectSql(own, { query: 'SELECT number FROM numbers(25000)' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ row_count: 10_000, truncated: true });
  });

  it('a free plan sees predefined events only, and a longer window is clamped to 30 days', async () => {
    const free = await createProject(server, { plan: 'free' });
    await seedAnalytics(server, free.id, 'free');
    const r = await projectSql(free, {
      query: 'SELECT event_name, user_id FROM events ORDER BY event_name, user_id',
      dateFrom: isoDay(Date.now() - 200 * DAY_MS),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Neither the custom event nor the 100-day-old one: scope and window hold in the engine.
    expect(r.body.rows).toEqual([
      { event_name: 'feedback_list', user_id: 'free-user-1' },
      { event_name: 'submit_feedback', user_id: 'free-user-2' },
    ]);
    expect(r.body).toMatchObject({
      event_scope: 'predefined_only',
      retention_clamped: true,
      retention_window_days: 30,
      date_from: isoDay(Date.now() - 29 * DAY_MS),
      date_to: isoDay(Date.now()),
    });
    const rollups = await projectSql(free, {
      query:
        'SELECT (SELECT groupUniqArray(event_name) FROM events_daily) AS d, (SELECT groupUniqArray(event_name) FROM events_hourly) AS h, (SELECT count() FROM facts WHERE occurred_at < now() - INTERVAL 31 DAY) AS old_facts',
    });
    expect(rollups.status, JSON.stringify(rollups.body)).toBe(200);
    expect([...rollups.body.rows[0].d].sort()).toEqual(['feedback_list', 'submit_feedback']);
    expect([...rollups.body.rows[0].h].sort()).toEqual(['feedback_list', 'submit_feedback']);
    expect(rollups.body.rows[0].old_facts).toBe('0');
  });

  it('a Team plan sees 365 days by default, so the old rows too', async () => {
    const r = await projectSql(other, { query: "SELECT count() AS n FROM events WHERE user_id = 'other-old'" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([{ n: '1' }]);
    expect(r.body).toMatchObject({ event_scope: 'all', retention_clamped: false, retention_window_days: 365 });
  });

  it('a window in the past sees nothing of today', async () => {
    const r = await projectSql(own, { query: 'SELECT count() AS n FROM events', dateFrom: '2020-01-01', dateTo: '2020-01-10' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([{ n: '0' }]);
    expect(r.body).toMatchObject({ date_from: '2020-01-01', date_to: '2020-01-10', retention_clamped: false });
  });

  it('a team member’s token works', async () => {
    const member = await addMember(server, other);
    const r = await projectSql(other, { query: 'SELECT count() AS n FROM facts' }, member.adminToken);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([{ n: '3' }]);
  });

  it('401 without or with an unknown token, 403 for another account’s project, 404 for no such project', async () => {
    const body = { query: 'SELECT 1' };
    const none = await server.request('POST', `/api/v1/projects/${own.id}/sql`, { body });
    expect(none.status).toBe(401);
    expect((await projectSql(own, body, 'fba_nope')).status).toBe(401);
    const stranger = await createAccount(server, 'team');
    const foreign = await projectSql(own, body, stranger.adminToken);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
    const missing = await server.request('POST', '/api/v1/projects/00000000-0000-4000-8000-000000000000/sql', {
      bearer: own.account.adminToken,
      body,
    });
    expect(missing.status).toBe(404);
    const malformed = await server.request('POST', '/api/v1/projects/nope/sql', { bearer: own.account.adminToken, body });
    expect(malformed.status).toBe(404);
  });

  it.each([
    ['an empty query', { query: '' }, /^query: /],
    ['a missing query', {}, /^query: is required/],
    ['a bad date', { query: 'SELECT 1', dateTo: '2026-02-30' }, /date_to/],
    ['a bad date format', { query: 'SELECT 1', dateFrom: 'yesterday' }, /^dateFrom: /],
    ['dates in the wrong order', { query: 'SELECT 1', dateFrom: '2026-02-10', dateTo: '2026-02-01' }, /date_from/],
    ['a bad parameter name', { query: 'SELECT 1', params: { 'a-b': 1 } }, /^params/],
    ['another table', { query: 'SELECT * FROM events_daily_mv' }, /^query: .*events_daily_mv/],
    ['a system table', { query: 'SELECT * FROM system.tables' }, /^query: /],
    ['invalid SQL', { query: 'SELEC 1' }, /^query: /],
  ])('400 for %s', async (_, body, reason) => {
    const r = await projectSql(own, body);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toEqual({ error: true, reason: expect.stringMatching(reason), message: expect.stringMatching(reason) });
  });

  it('a query over its memory bound is a 400 (PROJECT_SQL_MAX_MEMORY_MB)', async () => {
    const r = await projectSql(own, { query: 'SELECT groupArray(number) AS a FROM numbers(50000000)' });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
    expect(r.body.reason).toMatch(/^query: .*memory limit/i);
  });
});

/** Hashes ten billion numbers: runs until the engine stops it at its time limit. */
const HEAVY = 'SELECT count() AS n FROM numbers(10000000000) WHERE cityHash64(number) % 1000 = 7';
/** What the heavy query's text holds, as system.processes shows it. */
const HEAVY_MARK = 'cityHash64(number)';

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

describe('bounds of project queries (embedded chDB)', () => {
  it('while one runs, metrics and /events/track answer within 1 s; the account’s next query gets 429 with Retry-After', async () => {
    const heavy = timed(() => projectSql(own, { query: HEAVY }));
    await untilRunning(server, HEAVY_MARK);
    const second = await projectSql(own, { query: 'SELECT 1' });
    expect(second.status, JSON.stringify(second.body)).toBe(429);
    expect(second.body).toEqual({
      error: true,
      reason: expect.stringMatching(/^query: this account already runs 1 SQL/),
      message: expect.stringMatching(/^query: this account already runs 1 SQL/),
    });
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 3; i++) {
      const m = await timed(() =>
        server.request('GET', `/api/v1/metrics/summary?date_from=${isoDay(Date.now())}`, { apiKey: other.apiKey }),
      );
      expect(m.value.status, JSON.stringify(m.value.body)).toBe(200);
      expect(m.ms).toBeLessThan(1_000);
      const t = await timed(() =>
        server.request('POST', '/api/v1/events/track', { apiKey: other.apiKey, body: { eventName: 'during_sql', userId: `u${i}` } }),
      );
      expect(t.value.status, JSON.stringify(t.value.body)).toBe(200);
      expect(t.ms).toBeLessThan(1_000);
    }
    const done = await heavy;
    // Stopped at its limit, which counts from its arrival, as a refusal.
    expect(done.value.status, JSON.stringify(done.value.body)).toBe(400);
    expect(done.value.body.reason).toMatch(/^query: .*(Timeout|timed out)/i);
    expect(done.ms).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it('another account’s query waits for the turn at most until its own limit (its result, or 429)', async () => {
    // Let the previous heavy query's engine work end (the turn is held until then).
    await untilNoneRunning(server, HEAVY_MARK);
    const heavy = projectSql(own, { query: HEAVY });
    await untilRunning(server, HEAVY_MARK);
    const waited = await timed(() => projectSql(other, { query: 'SELECT count() AS n FROM facts' }));
    // Either the turn came in time and it ran, or its limit ran out while it waited (429).
    expect([200, 429], JSON.stringify(waited.value.body)).toContain(waited.value.status);
    expect(waited.ms).toBeLessThan(TIMEOUT_MS + 1_500);
    await heavy;
  });
});
