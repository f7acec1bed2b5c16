/**
 * Property-based proof of the session measures (issue 38, "Proof"; docs/sessions.md): random event
 * logs of a few users, written with insertEvents (the views fill events_by_user as on every insert),
 * for a fresh project with a random session timeout; the metrics API's session measures (summary,
 * timeseries by hour, day and week, breakdown by entry_event and entry.property.plan, with and without an
 * `event`) equal a recomputation in TypeScript from the same rows.
 *
 * The generator aims at the edges of the definition: gaps of exactly the timeout (no split), one
 * millisecond more (a split) and one less, ties in time (several events at one millisecond), chains
 * that cross an hour or a day boundary (a session counts in the bucket it starts in), and chains
 * that start before the window or run past its end (events outside the window are not read, so the
 * part inside is a session of its own).
 *
 * The reference, restated from docs/sessions.md on purpose (it borrows nothing from src/):
 * - in scope: created_at in [date_from 00:00, date_to + 1 day), names the plan reads (below Pro the
 *   three predefined ones);
 * - a user's in-scope events sorted by time; a new session starts where the gap to the previous
 *   event exceeds the timeout;
 * - with `event`, only sessions holding an event of that name count;
 * - duration: last event minus first, in seconds; median and p90 interpolate linearly between the
 *   closest ranks (h = (n − 1)·p); bounce: exactly one event; events per session: all events of the
 *   counted sessions over their number; ratios and durations null without sessions;
 * - the entry: the first event by (time, name, properties text); its `plan` as text, null if missing.
 */

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import type { Plan } from '../../src/core/plans.js';
import { filterCondition } from '../../src/olap/filter-sql.js';
import type { FilterList } from '../../src/olap/filter-types.js';
import { SESSION_MEASURES, type SessionMeasure } from '../../src/olap/metrics/measures.js';
import { sessionMeasures } from '../../src/olap/metrics/sessions.queries.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { cases, caseTimeLimit } from '../helpers/generated-cases.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const PREDEFINED = ['feedback_list', 'feedback_detail', 'submit_feedback'];
const NAMES = ['feedback_list', 'submit_feedback', 'open_app', 'purchase'];
const USERS = ['u0', 'u1', 'u2', 'u3'];
type Values = Record<SessionMeasure, number | null>;

/** The window: three whole UTC days. */
const DATE_FROM = '2026-03-02';
const DATE_TO = '2026-03-04';
const WINDOW_START = Date.parse(`${DATE_FROM}T00:00:00Z`);
const WINDOW_END = Date.parse(`${DATE_TO}T00:00:00Z`) + DAY;

type Event = { user: string; at: number; name: string; plan: string | undefined };

/** A gap in a user's chain, in units of the timeout T: exactly T, T ± 1 ms, a tie, a short or a long one. */
const gapArb = fc.oneof(
  fc.constant('T' as const),
  fc.constant('T+1' as const),
  fc.constant('T-1' as const),
  fc.constant(0),
  fc.integer({ min: 1, max: 5 * MINUTE }),
  fc.integer({ min: 1, max: 6 * HOUR }),
);

const chainArb = fc.record({
  user: fc.constantFrom(...USERS),
  /** Where the chain starts: before the window, near a day's end, or anywhere inside. */
  start: fc.oneof(
    fc.integer({ min: WINDOW_START - 2 * HOUR, max: WINDOW_START + HOUR }),
    fc.integer({ min: WINDOW_START + DAY - 2 * HOUR, max: WINDOW_START + DAY + HOUR }),
    fc.integer({ min: WINDOW_END - 3 * HOUR, max: WINDOW_END + HOUR }),
    fc.integer({ min: WINDOW_START, max: WINDOW_END - 1 }),
  ),
  steps: fc.array(fc.record({ gap: gapArb, name: fc.constantFrom(...NAMES), plan: fc.constantFrom('a', 'b', undefined) }), {
    minLength: 0,
    maxLength: 8,
  }),
  name: fc.constantFrom(...NAMES),
  plan: fc.constantFrom('a', 'b', undefined),
});

const scenarioArb = fc.record({
  timeoutMinutes: fc.constantFrom(1, 7, 30, 1440),
  plan: fc.constantFrom<Plan>('free', 'team'),
  chains: fc.array(chainArb, { minLength: 1, maxLength: 6 }),
  event: fc.constantFrom(undefined, 'feedback_list', 'purchase'),
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function eventsOf(s: Scenario): Event[] {
  const t = s.timeoutMinutes * MINUTE;
  const events: Event[] = [];
  for (const chain of s.chains) {
    let at = chain.start;
    events.push({ user: chain.user, at, name: chain.name, plan: chain.plan });
    for (const step of chain.steps) {
      at += step.gap === 'T' ? t : step.gap === 'T+1' ? t + 1 : step.gap === 'T-1' ? t - 1 : step.gap;
      events.push({ user: chain.user, at, name: step.name, plan: step.plan });
    }
  }
  return events;
}

// ---------------------------------------------------------------------------------------------
// The reference

type Session = { user: string; events: Event[] };

const byEntryOrder = (a: Event, b: Event) =>
  a.at - b.at || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (rawOf(a) < rawOf(b) ? -1 : rawOf(a) > rawOf(b) ? 1 : 0);
const rawOf = (e: Event) => (e.plan === undefined ? '{}' : JSON.stringify({ plan: e.plan }));

function sessionsOf(s: Scenario, events: Event[]): Session[] {
  const t = s.timeoutMinutes * MINUTE;
  const inScope = events.filter((e) => e.at >= WINDOW_START && e.at < WINDOW_END && (s.plan !== 'free' || PREDEFINED.includes(e.name)));
  const sessions: Session[] = [];
  for (const user of USERS) {
    const mine = inScope.filter((e) => e.user === user).sort(byEntryOrder);
    let current: Session | undefined;
    for (const e of mine) {
      const previous = current?.events.at(-1);
      if (!current || !previous || e.at - previous.at > t) {
        current = { user, events: [] };
        sessions.push(current);
      }
      current.events.push(e);
    }
  }
  return sessions.filter((session) => s.event === undefined || session.events.some((e) => e.name === s.event));
}

/** Linear interpolation between closest ranks, h = (n − 1)·p. */
function quantile(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const low = Math.floor(h);
  const lower = sorted[low] as number;
  const upper = sorted[Math.min(low + 1, sorted.length - 1)] as number;
  return lower + (h - low) * (upper - lower);
}

function measuresOf(sessions: Session[]): Values {
  const n = sessions.length;
  const durations = sessions.map((x) => ((x.events.at(-1) as Event).at - (x.events[0] as Event).at) / 1000).sort((a, b) => a - b);
  return {
    sessions: n,
    session_duration_avg: n === 0 ? null : durations.reduce((a, b) => a + b, 0) / n,
    session_duration_median: n === 0 ? null : quantile(durations, 0.5),
    session_duration_p90: n === 0 ? null : quantile(durations, 0.9),
    bounce_rate: n === 0 ? null : sessions.filter((x) => x.events.length === 1).length / n,
    events_per_session: n === 0 ? null : sessions.reduce((a, x) => a + x.events.length, 0) / n,
  };
}

const startOf = (x: Session) => (x.events[0] as Event).at;

// ---------------------------------------------------------------------------------------------
// Loading and asking

async function load(s: Scenario): Promise<{ project: TestProject; events: Event[] }> {
  const project = await createProject(server, { plan: s.plan });
  const patched = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
    bearer: project.account.adminToken,
    body: { sessionTimeoutMinutes: s.timeoutMinutes },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.session_timeout_minutes).toBe(s.timeoutMinutes);
  const events = eventsOf(s);
  const rows: IngestEvent[] = events.map((e) => ({
    project_id: project.id,
    event_id: randomUUID(),
    event_name: e.name,
    user_id: e.user,
    properties: e.plan === undefined ? {} : { plan: e.plan },
    created_at: new Date(e.at).toISOString(),
    received_at: new Date(e.at).toISOString(),
    id_from_client: false,
  }));
  if (rows.length > 0) await insertEvents(server.clickhouse, rows, `sessions-test:${randomUUID()}`);
  return { project, events };
}

async function ask(project: TestProject, operation: string, params: Record<string, string | undefined>) {
  const query = new URLSearchParams(
    Object.entries({ date_from: DATE_FROM, date_to: DATE_TO, ...params }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const response = await server.request('GET', `/api/v1/projects/${project.id}/metrics/${operation}?${query}`, {
    bearer: project.account.adminToken,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

function expectValues(actual: Record<string, number | null>, expected: Values, where: string) {
  for (const m of SESSION_MEASURES) {
    const want = expected[m];
    const got = actual[m];
    if (want === null) expect(got, `${where} ${m}`).toBeNull();
    else {
      expect(got, `${where} ${m}`).not.toBeNull();
      expect(got as number, `${where} ${m}`).toBeCloseTo(want, 5);
    }
  }
}

async function check(s: Scenario) {
  const { project, events } = await load(s);
  const sessions = sessionsOf(s, events);
  const measures = SESSION_MEASURES.join(',');
  if (s.plan === 'free' && s.event !== undefined && !PREDEFINED.includes(s.event)) {
    // The plan rule of every metrics operation: naming a custom event below Pro is a 402.
    const refused = await server.request(
      'GET',
      `/api/v1/projects/${project.id}/metrics/summary?measures=sessions&event=${s.event}&date_from=${DATE_FROM}&date_to=${DATE_TO}`,
      { bearer: project.account.adminToken },
    );
    expect(refused.status).toBe(402);
    return;
  }

  const summary = await ask(project, 'summary', { measures, event: s.event });
  expectValues(summary.measures, measuresOf(sessions), 'summary');

  // The window is Monday to Wednesday: one week bucket.
  for (const interval of ['hour', 'day', 'week'] as const) {
    const size = interval === 'hour' ? HOUR : interval === 'day' ? DAY : 7 * DAY;
    const series = await ask(project, 'timeseries', { measures, interval, event: s.event });
    expect(series.buckets).toHaveLength(Math.ceil((WINDOW_END - WINDOW_START) / size));
    for (const bucket of series.buckets as { start: string; measures: Record<string, number | null> }[]) {
      const from = Date.parse(bucket.start);
      const mine = sessions.filter((x) => startOf(x) >= from && startOf(x) < from + size);
      expectValues(bucket.measures, measuresOf(mine), `${interval} ${bucket.start}`);
    }
  }

  for (const [dimension, keyOf] of [
    ['entry_event', (x: Session) => (x.events[0] as Event).name],
    ['entry.property.plan', (x: Session) => (x.events[0] as Event).plan ?? null],
  ] as const) {
    const answer = await ask(project, 'breakdown', { measures, dimension, event: s.event, limit: '1000' });
    const keys = [...new Set(sessions.map(keyOf))];
    expect(answer.rows.map((r: { key: string | null }) => r.key).sort(), dimension).toEqual([...keys].sort());
    for (const row of answer.rows as { key: string | null; measures: Record<string, number | null> }[]) {
      expectValues(row.measures, measuresOf(sessions.filter((x) => keyOf(x) === row.key)), `${dimension} ${row.key}`);
    }
  }
}

/** Hand-picked logs the random ones might take long to hit. */
const EXAMPLES: [Scenario][] = [
  // A gap of exactly the timeout joins; one millisecond more splits; a tie stays in its session.
  [
    {
      timeoutMinutes: 30,
      plan: 'team',
      event: undefined,
      chains: [
        {
          user: 'u0',
          start: WINDOW_START + 10 * HOUR,
          name: 'open_app',
          plan: 'a',
          steps: [
            { gap: 'T', name: 'purchase', plan: 'b' },
            { gap: 'T+1', name: 'open_app', plan: undefined },
            { gap: 0, name: 'feedback_list', plan: 'a' },
          ],
        },
      ],
    },
  ],
  // A session crossing midnight counts on its first day; one crossing the window's start is cut.
  [
    {
      timeoutMinutes: 1440,
      plan: 'team',
      event: 'purchase',
      chains: [
        {
          user: 'u1',
          start: WINDOW_START + DAY - 5 * MINUTE,
          name: 'open_app',
          plan: 'a',
          steps: [{ gap: 10 * MINUTE, name: 'purchase', plan: 'a' }],
        },
        {
          user: 'u2',
          start: WINDOW_START - 5 * MINUTE,
          name: 'purchase',
          plan: 'b',
          steps: [{ gap: 10 * MINUTE, name: 'purchase', plan: 'b' }],
        },
      ],
    },
  ],
];

/**
 * Filters keep the sessions holding at least one matching event, whole: asked of the session query
 * with the filter compiler's condition (properties_raw mode, as the planner compiles a request's
 * `filters`), against the reference with the same predicate per event.
 */
const FILTERS: { filters: FilterList; matches: (e: Event) => boolean }[] = [
  { filters: [{ property: 'properties.plan', op: 'eq', value: 'a' }], matches: (e) => e.plan === 'a' },
  { filters: [{ property: 'properties.plan', op: 'is_not_set' }], matches: (e) => e.plan === undefined },
  {
    filters: [
      {
        any: [
          { property: 'event_name', op: 'eq', value: 'purchase' },
          { property: 'properties.plan', op: 'eq', value: 'b' },
        ],
      },
    ],
    matches: (e) => e.name === 'purchase' || e.plan === 'b',
  },
];

async function checkFilters(s: Scenario, which: number) {
  const { project, events } = await load({ ...s, event: undefined });
  const filter = FILTERS[which] as (typeof FILTERS)[number];
  const all = sessionsOf({ ...s, event: undefined }, events);
  const kept = all.filter((x) => x.events.some(filter.matches));
  const rows = await sessionMeasures(
    server.clickhouse,
    {
      projectId: project.id,
      start: new Date(WINDOW_START),
      end: new Date(WINDOW_END),
      names: s.plan === 'free' ? PREDEFINED : null,
      timeoutMinutes: s.timeoutMinutes,
      keep: filterCondition(filter.filters, { properties: 'raw', prefix: 'f' }),
    },
    'day',
    { quantiles: true },
  );
  for (let day = WINDOW_START; day < WINDOW_END; day += DAY) {
    const mine = kept.filter((x) => startOf(x) >= day && startOf(x) < day + DAY);
    const row = rows.find((r) => Date.parse(r.bucket) === day);
    expect(Number(row?.sessions ?? 0), `day ${new Date(day).toISOString()}`).toBe(mine.length);
    if (mine.length === 0) continue;
    const want = measuresOf(mine);
    expect(Number(row?.events) / mine.length).toBeCloseTo(want.events_per_session as number, 9);
    expect(Number(row?.bounces) / mine.length).toBeCloseTo(want.bounce_rate as number, 9);
    expect(Number(row?.duration_median_ms) / 1000).toBeCloseTo(want.session_duration_median as number, 5);
  }
}

describe('session measures equal a recomputation from the generated events (property-based)', () => {
  it('filters keep the sessions holding a matching event (the compiled condition, raw properties)', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.integer({ min: 0, max: FILTERS.length - 1 }), (s, which) => checkFilters(s, which)),
      { numRuns: cases(10), plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(30_000))] },
    );
  });

  it('summary, timeseries (hour, day, week) and breakdowns by entry, with and without `event`', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, (s) => check(s)),
      { numRuns: cases(12), examples: EXAMPLES, plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(40_000))] } as fc.Parameters<[Scenario]>,
    );
  });
});
