/**
 * Sessions over HTTP with hand-made events (docs/sessions.md): the project setting, each session
 * measure on each surface, the entry breakdowns, and the user timeline with its paging.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DAY = '2026-05-04';
const at = (time: string) => `${DAY}T${time}Z`;
const window = `date_from=${DAY}&date_to=${DAY}`;

/**
 * ana: 10:00:00, 10:30:00 (exactly the 30-minute timeout after: same session), 11:00:00.001 (one
 * millisecond more: a new session), and a tie at 11:00:00.001; ben: one event. So, at 30 minutes:
 * ana [10:00, 10:30] of 2 events and [11:00:00.001] of 2, ben one bounce.
 */
const FIXTURE: { user: string; time: string; name: string; plan?: string }[] = [
  { user: 'ana', time: '10:00:00.000', name: 'open_app', plan: 'pro' },
  { user: 'ana', time: '10:30:00.000', name: 'purchase' },
  { user: 'ana', time: '11:00:00.001', name: 'feedback_list', plan: 'free' },
  { user: 'ana', time: '11:00:00.001', name: 'search' },
  { user: 'ben', time: '23:59:59.000', name: 'feedback_list', plan: 'free' },
];

let project: TestProject;
const admin = () => ({ bearer: project.account.adminToken });

async function metrics(operation: string, query: string) {
  return server.request('GET', `/api/v1/projects/${project.id}/metrics/${operation}?${window}&${query}`, admin());
}

async function setTimeout(minutes: number) {
  const response = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
    ...admin(),
    body: { sessionTimeoutMinutes: minutes },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response;
}

beforeAll(async () => {
  project = await createProject(server, { plan: 'team' });
  const rows: IngestEvent[] = FIXTURE.map((e) => ({
    project_id: project.id,
    event_id: randomUUID(),
    event_name: e.name,
    user_id: e.user,
    properties: e.plan === undefined ? {} : { plan: e.plan },
    created_at: new Date(at(e.time)).toISOString(),
    received_at: new Date(at(e.time)).toISOString(),
    id_from_client: false,
  }));
  await insertEvents(server.clickhouse, rows, `sessions-api:${randomUUID()}`);
});

describe('session_timeout_minutes', () => {
  it('defaults to 30, is set with PATCH /projects/:id, and refuses values outside 1 to 1440', async () => {
    const fresh = await createProject(server, { plan: 'free' });
    const got = await server.request('GET', `/api/v1/projects/${fresh.id}`, { bearer: fresh.account.adminToken });
    expect(got.body.session_timeout_minutes).toBe(30);
    for (const bad of [0, 1441, 1.5, '30', null]) {
      const refused = await server.request('PATCH', `/api/v1/projects/${fresh.id}`, {
        bearer: fresh.account.adminToken,
        body: { sessionTimeoutMinutes: bad },
      });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.reason).toMatch(/sessionTimeoutMinutes/);
    }
    const set = await server.request('PATCH', `/api/v1/projects/${fresh.id}`, {
      bearer: fresh.account.adminToken,
      body: { session_timeout_minutes: 1440 },
    });
    expect(set.status).toBe(200);
    expect(set.body.session_timeout_minutes).toBe(1440);
    const listed = await server.request('GET', '/api/v1/projects', { bearer: fresh.account.adminToken });
    expect(listed.body[0].session_timeout_minutes).toBe(1440);
  });
});

describe('session measures', () => {
  const all = 'sessions,session_duration_avg,session_duration_median,session_duration_p90,bounce_rate,events_per_session';

  it('a gap of exactly the timeout joins, one millisecond more splits, and each measure follows', async () => {
    await setTimeout(30);
    const summary = await metrics('summary', `measures=${all}`);
    expect(summary.status).toBe(200);
    // Durations 1800 s, 0 s (the tie), 0 s (ben): p90 at h = 2 · 0.9 = 1.8 → 0 + 0.8 · 1800.
    expect(summary.body.measures).toEqual({
      sessions: 3,
      session_duration_avg: 600,
      session_duration_median: 0,
      session_duration_p90: 1440,
      bounce_rate: 1 / 3,
      events_per_session: 5 / 3,
    });
  });

  it('follows the project setting at once: one more minute joins ana’s two sessions', async () => {
    await setTimeout(31);
    const summary = await metrics('summary', 'measures=sessions,session_duration_avg');
    expect(summary.body.measures.sessions).toBe(2);
    expect(summary.body.measures.session_duration_avg).toBeCloseTo((3600.001 + 0) / 2, 9);
    await setTimeout(30);
  });

  it('answers on the API key’s surface too, and only when asked for', async () => {
    const keyed = await server.request('GET', `/api/v1/metrics/summary?${window}&measures=sessions,bounce_rate`, {
      apiKey: project.apiKey,
    });
    expect(keyed.status).toBe(200);
    expect(keyed.body.measures).toEqual({ sessions: 3, bounce_rate: 1 / 3 });
    const byDefault = await server.request('GET', `/api/v1/metrics/summary?${window}`, { apiKey: project.apiKey });
    expect(Object.keys(byDefault.body.measures)).not.toContain('sessions');
  });

  it('with `event`, keeps the sessions holding such an event, with all their events', async () => {
    const summary = await metrics('summary', `measures=sessions,events_per_session&event=feedback_list`);
    // ana's second session (feedback_list + search) and ben's.
    expect(summary.body.measures).toEqual({ sessions: 2, events_per_session: 1.5 });
  });

  it('timeseries: a session counts in the bucket it starts in; empty buckets answer 0 and null', async () => {
    const series = await metrics('timeseries', 'interval=hour&measures=sessions,session_duration_avg,bounce_rate');
    expect(series.status).toBe(200);
    const byStart = Object.fromEntries(series.body.buckets.map((b: { start: string; measures: unknown }) => [b.start, b.measures]));
    expect(byStart[at('10:00:00')]).toEqual({ sessions: 1, session_duration_avg: 1800, bounce_rate: 0 });
    expect(byStart[at('11:00:00')]).toEqual({ sessions: 1, session_duration_avg: 0, bounce_rate: 0 });
    expect(byStart[at('23:00:00')]).toEqual({ sessions: 1, session_duration_avg: 0, bounce_rate: 1 });
    expect(byStart[at('12:00:00')]).toEqual({ sessions: 0, session_duration_avg: null, bounce_rate: null });
  });

  it('breakdowns by entry_event and entry.property.<key>; other measures and dimensions do not mix', async () => {
    const byEntry = await metrics('breakdown', 'dimension=entry_event&measures=sessions,events_per_session');
    expect(byEntry.status).toBe(200);
    expect(byEntry.body.rows).toEqual([
      // The tie at 11:00:00.001: the entry is the first by name.
      { key: 'feedback_list', measures: { sessions: 2, events_per_session: 1.5 } },
      { key: 'open_app', measures: { sessions: 1, events_per_session: 2 } },
    ]);
    const byPlan = await metrics('breakdown', 'dimension=entry.property.plan&measures=sessions');
    expect(byPlan.body.rows).toEqual([
      { key: 'free', measures: { sessions: 2 } },
      { key: 'pro', measures: { sessions: 1 } },
    ]);
    const byDefault = await metrics('breakdown', 'dimension=entry_event');
    expect(Object.keys(byDefault.body.rows[0].measures)).toEqual([
      'sessions',
      'session_duration_avg',
      'session_duration_median',
      'session_duration_p90',
      'bounce_rate',
      'events_per_session',
    ]);
    for (const query of ['dimension=entry_event&measures=event_count', 'dimension=event_name&measures=sessions']) {
      const refused = await metrics('breakdown', query);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code).toBe('METRICS_MEASURE_NOT_SPLITTABLE');
    }
    const badKey = await metrics('breakdown', 'dimension=entry.property.a%2Fb&measures=sessions');
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.code).toBe('METRICS_INVALID_DIMENSION');
  });
});

describe('GET /projects/:id/users/:userId/timeline', () => {
  const timeline = (user: string, query = '') =>
    server.request('GET', `/api/v1/projects/${project.id}/users/${encodeURIComponent(user)}/timeline?${window}${query}`, admin());

  it('answers the user’s sessions newest first, each with its events in time order', async () => {
    const response = await timeline('ana');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ date_from: DAY, date_to: DAY, retention_clamped: false, user_id: 'ana', next_cursor: null });
    const sessions = response.body.sessions;
    expect(sessions.map((s: { started_at: string }) => s.started_at)).toEqual([at('11:00:00'), at('10:00:00')]);
    expect(sessions[1]).toMatchObject({ ended_at: at('10:30:00'), duration_seconds: 1800, event_count: 2, events_truncated: false });
    expect(sessions[1].events.map((e: { event_name: string }) => e.event_name)).toEqual(['open_app', 'purchase']);
    expect(sessions[1].events[0].properties).toEqual({ plan: 'pro' });
    expect(sessions[0].events.map((e: { event_name: string }) => e.event_name).sort()).toEqual(['feedback_list', 'search']);
  });

  it('pages by cursor without repeating or skipping a session', async () => {
    const first = await timeline('ana', '&limit=1');
    expect(first.body.sessions).toHaveLength(1);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await timeline('ana', `&limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.sessions.map((s: { started_at: string }) => s.started_at)).toEqual([at('10:00:00')]);
    const third = await timeline('ana', `&limit=1&cursor=${second.body.next_cursor}`);
    expect(third.body.sessions).toEqual([]);
    expect(third.body.next_cursor).toBeNull();
  });

  it('a user without events in the window answers no sessions; bad input is a metrics 400', async () => {
    const nobody = await timeline('nobody');
    expect(nobody.status).toBe(200);
    expect(nobody.body.sessions).toEqual([]);
    for (const [query, code] of [
      [`${window}&cursor=nope`, 'METRICS_INVALID_PARAMETER'],
      [`${window}&limit=0`, 'METRICS_INVALID_PARAMETER'],
      ['date_to=2026-13-01', 'METRICS_INVALID_DATE'],
      ['date_from=2026-05-05&date_to=2026-05-04', 'METRICS_INVALID_RANGE'],
    ] as const) {
      const refused = await server.request('GET', `/api/v1/projects/${project.id}/users/ana/timeline?${query}`, admin());
      expect(refused.status, query).toBe(400);
      expect(refused.body.error.code, query).toBe(code);
    }
    const other = await createProject(server, { plan: 'team' });
    const foreign = await server.request('GET', `/api/v1/projects/${project.id}/users/ana/timeline`, { bearer: other.account.adminToken });
    expect(foreign.status).toBe(403);
  });

  it('lists at most the first 100 events of a session and says it was cut', async () => {
    const busy = await createProject(server, { plan: 'team' });
    const base = Date.parse(at('08:00:00'));
    await insertEvents(
      server.clickhouse,
      Array.from({ length: 101 }, (_, i) => ({
        project_id: busy.id,
        event_id: randomUUID(),
        event_name: `step_${String(i).padStart(3, '0')}`,
        user_id: 'dan',
        properties: {},
        created_at: new Date(base + i * 1000).toISOString(),
        received_at: new Date(base + i * 1000).toISOString(),
        id_from_client: false,
      })),
      `sessions-api:${randomUUID()}`,
    );
    const response = await server.request('GET', `/api/v1/projects/${busy.id}/users/dan/timeline?${window}`, {
      bearer: busy.account.adminToken,
    });
    expect(response.body.sessions).toHaveLength(1);
    const [session] = response.body.sessions;
    expect(session).toMatchObject({ event_count: 101, events_truncated: true, duration_seconds: 100 });
    expect(session.events).toHaveLength(100);
    expect(session.events.at(-1).event_name).toBe('step_099');
  });

  it('below Pro only the predefined events form sessions and are listed', async () => {
    const free = await createProject(server, { plan: 'free' });
    await insertEvents(
      server.clickhouse,
      ['10:00:00.000', '10:10:00.000'].map((time, i) => ({
        project_id: free.id,
        event_id: randomUUID(),
        event_name: i === 0 ? 'open_app' : 'feedback_detail',
        user_id: 'cy',
        properties: {},
        created_at: new Date(at(time)).toISOString(),
        received_at: new Date(at(time)).toISOString(),
        id_from_client: false,
      })),
      `sessions-api:${randomUUID()}`,
    );
    const response = await server.request('GET', `/api/v1/projects/${free.id}/users/cy/timeline?${window}`, {
      bearer: free.account.adminToken,
    });
    expect(response.body.sessions).toHaveLength(1);
    expect(response.body.sessions[0].events.map((e: { event_name: string }) => e.event_name)).toEqual(['feedback_detail']);
  });
});
