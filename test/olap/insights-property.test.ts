/**
 * Exactness of the funnel, retention and paths queries (issues 24 and 30, "Proof"): random small
 * event sets, random requests, each answer compared with a plain-TypeScript computation
 * from the same events by the written definitions (helpers/insights-reference.ts): equal in every
 * case. Events are written straight into ClickHouse for a fresh project id per case.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { edgeOrder } from '../../src/api/insights/insights.service.js';
import type { IngestEvent } from '../../src/core/event.js';
import type { ClickHouseClient } from '../../src/olap/clickhouse.js';
import { funnel } from '../../src/olap/insights/funnel.queries.js';
import { paths } from '../../src/olap/insights/paths.queries.js';
import { retention } from '../../src/olap/insights/retention.queries.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import {
  type RefEvent,
  type RefScope,
  type RefStep,
  referenceFunnel,
  referencePaths,
  referenceRetention,
} from '../helpers/insights-reference.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ workers: false });

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** A fixed Monday, so week buckets are exercised on both sides of it. */
const BASE = Date.parse('2026-03-02T00:00:00Z');
const NAMES = ['a', 'b', 'c', 'feedback_list'] as const;
const USERS = ['u0', 'u1', 'u2'] as const;

/** Times on a coarse grid (many ties and exact window edges) or anywhere in 20 days. */
const timeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 12 }).map((i) => BASE + i * 6 * HOUR_MS) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 30 }).map((i) => BASE + i * 12 * HOUR_MS) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 30 }).map((i) => BASE + 9 * DAY_MS + i * 60_000) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 20 * DAY_MS - 1 }).map((ms) => BASE + ms) },
);
const propertiesArb = fc.option(
  fc.record(
    { plan: fc.constantFrom<string | number | boolean>('pro', 'free', 1, true, '1'), n: fc.constantFrom(1, 2) },
    { requiredKeys: [] },
  ),
  { nil: null, freq: 3 },
);
const eventArb = fc.record({ name: fc.constantFrom(...NAMES), user: fc.constantFrom(...USERS), t: timeArb, properties: propertiesArb });
const eventsArb = fc.array(eventArb, { minLength: 1, maxLength: 40 });

const scopeArb: fc.Arbitrary<RefScope> = fc
  .record({
    from: fc.oneof(fc.constant(0), fc.integer({ min: -1, max: 10 })),
    days: fc.integer({ min: 1, max: 25 }),
    names: fc.constantFrom<readonly string[] | null>(null, ['feedback_list', 'a', 'b']),
  })
  .map(({ from, days, names }) => ({ start: BASE + from * DAY_MS, end: BASE + (from + days) * DAY_MS, names }));

const stepArb: fc.Arbitrary<RefStep> = fc.record(
  {
    eventName: fc.constantFrom(...NAMES),
    where: fc.record({ plan: fc.constantFrom<string | number | boolean>('pro', 1, true, '1') }, { requiredKeys: [] }),
  },
  { requiredKeys: ['eventName'] },
);
const funnelArb = fc.record({
  steps: fc.array(stepArb, { minLength: 2, maxLength: 4 }),
  windowMs: fc.constantFrom(0, 60_000, 6 * HOUR_MS, 12 * HOUR_MS, DAY_MS, 7 * DAY_MS),
  breakdown: fc.constantFrom(undefined, 'plan', 'n'),
});
const retentionArb = fc.record({
  cohortEvent: fc.constantFrom(undefined, 'a', 'b'),
  returnEvent: fc.constantFrom(undefined, 'a', 'c'),
  interval: fc.constantFrom('day' as const, 'week' as const),
  periods: fc.integer({ min: 1, max: 4 }),
});

/**
 * Paths need many users, repeats and ties: up to 12 users, 5 names (two alike, 'a' and 'aa', and
 * one predefined), times on a coarse grid (ties in time between different names and repeats of
 * one name at one instant) or anywhere.
 */
const PATH_NAMES = ['a', 'aa', 'b', 'c', 'feedback_list'] as const;
const pathTimeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 8 }).map((i) => BASE + i * 12 * HOUR_MS) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 20 * DAY_MS - 1 }).map((ms) => BASE + ms) },
);
const pathEventsArb = fc.array(
  fc.record({
    name: fc.constantFrom(...PATH_NAMES),
    user: fc.integer({ min: 0, max: 11 }).map((i) => `u${i}`),
    t: pathTimeArb,
    properties: fc.constant(null),
  }),
  { minLength: 1, maxLength: 80 },
);
const pathsArb = fc.record({
  anchor: fc.constantFrom<'none' | 'start' | 'end'>('none', 'start', 'end'),
  anchorEvent: fc.constantFrom(...PATH_NAMES),
  depth: fc.integer({ min: 2, max: 6 }),
  excludeEvents: fc.subarray([...PATH_NAMES], { maxLength: 2 }),
});

/** Writes the events for a fresh project; returns its id. */
async function load(events: RefEvent[]): Promise<string> {
  const projectId = randomUUID();
  const rows: IngestEvent[] = events.map((e) => ({
    project_id: projectId,
    event_id: randomUUID(),
    event_name: e.name,
    user_id: e.user,
    properties: e.properties,
    created_at: new Date(e.t).toISOString(),
    received_at: new Date(e.t).toISOString(),
    id_from_client: false,
  }));
  await insertEvents(server.clickhouse, rows, randomUUID());
  return projectId;
}

const byKey = <T>(rows: T[], key: (row: T) => string) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

const runOptions = { numRuns: 60, plugins: [fc.interruptAfterTimeLimit(60_000)] };

describe('insights queries equal a plain recomputation from the same events (property-based)', () => {
  it('funnel: users per step and median time to convert, with and without a breakdown', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, scopeArb, funnelArb, async (events, scope, query) => {
        const projectId = await load(events);
        const actual = await funnel(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referenceFunnel(events, scope, query.steps, query.windowMs, query.breakdown);
        const key = (row: { breakdown: string | null }) => JSON.stringify(row.breakdown);
        expect(byKey(actual, key)).toEqual(byKey(expected, key));
      }),
      runOptions,
    );
  });

  it('retention: cohort sizes and returns per period, by day and by week', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, scopeArb, retentionArb, async (events, scope, query) => {
        const projectId = await load(events);
        const actual = await retention(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referenceRetention(events, scope, query);
        const key = (row: { cohort_start: string; period: number }) => `${row.cohort_start}/${String(row.period).padStart(3, '0')}`;
        expect(byKey(actual, key)).toEqual(byKey(expected, key));
      }),
      runOptions,
    );
  });

  it('paths: users, every edge and the top paths, from a start event, to an end event or from the first event, at every depth', {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(pathEventsArb, scopeArb, pathsArb, async (events, scope, arb) => {
        const query = {
          depth: arb.depth,
          excludeEvents: arb.excludeEvents.filter((name) => name !== arb.anchorEvent),
          ...(arb.anchor === 'start' ? { startEvent: arb.anchorEvent } : arb.anchor === 'end' ? { endEvent: arb.anchorEvent } : {}),
        };
        const projectId = await load(events);
        const actual = await paths(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referencePaths(events, scope, query);
        expect({ ...actual, edges: [...actual.edges].sort(edgeOrder) }).toEqual({
          ...expected,
          edges: [...expected.edges].sort(edgeOrder),
        });
      }),
      runOptions,
    );
  });

  it("paths from the first event keep each user's first K events, and ask again with every event exactly when some user's first K hold fewer than depth names", {
    timeout: 120_000,
  }, async () => {
    const boundedArb = fc.record({
      depth: fc.integer({ min: 2, max: 6 }),
      excludeEvents: fc.subarray([...PATH_NAMES], { maxLength: 2 }),
      boundedEvents: fc.integer({ min: 1, max: 8 }),
    });
    await fc.assert(
      fc.asyncProperty(pathEventsArb, scopeArb, boundedArb, async (events, scope, arb) => {
        const query = { depth: arb.depth, excludeEvents: arb.excludeEvents };
        const projectId = await load(events);
        // Every query the function sends is counted.
        let sent = 0;
        const counting = {
          query: (params: Parameters<ClickHouseClient['query']>[0]) => {
            sent += 1;
            return server.clickhouse.query(params);
          },
        } as unknown as ClickHouseClient;
        const actual = await paths(
          counting,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
          { boundedEvents: arb.boundedEvents },
        );
        const expected = referencePaths(events, scope, query);
        expect({ ...actual, edges: [...actual.edges].sort(edgeOrder) }).toEqual({
          ...expected,
          edges: [...expected.edges].sort(edgeOrder),
        });
        // A user the first K events cannot answer: more than K events, and fewer than depth
        // names once the first K are collapsed.
        const byUser = new Map<string, RefEvent[]>();
        for (const e of events) {
          const inScope = e.t >= scope.start && e.t < scope.end && (scope.names === null || scope.names.includes(e.name));
          if (inScope && !query.excludeEvents.includes(e.name)) byUser.set(e.user, [...(byUser.get(e.user) ?? []), e]);
        }
        const unanswered = [...byUser.values()].some((own) => {
          const first = [...own]
            .sort((x, y) => x.t - y.t || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
            .slice(0, arb.boundedEvents)
            .map((e) => e.name);
          return own.length > arb.boundedEvents && first.filter((name, i) => i === 0 || first[i - 1] !== name).length < arb.depth;
        });
        expect(sent).toBe(unanswered ? 2 : 1);
      }),
      runOptions,
    );
  });
});
